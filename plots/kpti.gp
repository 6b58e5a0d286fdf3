# kpti.gp -- 4g4g, kpti and kpti-pcid overhead against syscall rate on one
# graph (plot 5 of issue 7), with the published modern anchor: overhead.gp
# with other defaults (only these layouts, Brendan Gregg's 2018 point, no
# 2003 band, a linear y axis), so both plots draw series the same way.
#
# Input: a replay/compare CSV (see docs/sweep.md), columns
#   layout, syscalls_per_sec, overhead_pct  and, when present, workload
# By hand:
#   gnuplot -e "csv='compare.csv'; out='kpti.png'" plots/kpti.gp
# Variables (all optional): those of overhead.gp, and layouts (default
#   "4g4g kpti kpti-pcid"), anchor (0: no anchor point), whatif (default
#   "kpti-pcid").

if (!exists("layouts")) layouts = "4g4g kpti kpti-pcid"
if (!exists("out")) out = "kpti.png"
if (!exists("anchor")) anchor = 1
if (!exists("band")) band = 0
if (!exists("linear")) linear = 1
if (!exists("whatif")) whatif = "kpti-pcid"
if (!exists("plottitle")) plottitle = "Separate kernel page tables, 2003 and 2018: overhead against syscall rate"
only = layouts
gpdir(s) = strstrt(s, "/") ? s[1:strstrt(s, "/")] . gpdir(s[strstrt(s, "/") + 1:]) : ""
load gpdir(ARG0) . "overhead.gp"
