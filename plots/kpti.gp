# kpti.gp -- 4g4g, kpti and kpti-pcid overhead against syscall rate on one
# graph (plot 5 of issue 7), with the published modern anchor.
#
# Input: a replay/compare CSV (see docs/sweep.md), columns
#   layout, syscalls_per_sec, overhead_pct  (others ignored)
# Only the layouts in `layouts` are drawn. By hand:
#   gnuplot -e "csv='compare.csv'; out='kpti.png'" plots/kpti.gp
# Variables (all optional): csv, out, layouts (default "4g4g kpti
#   kpti-pcid"), plottitle, anchor (0: no anchor point).

if (!exists("csv")) csv = "compare.csv"
if (!exists("out")) out = "kpti.png"
if (!exists("layouts")) layouts = "4g4g kpti kpti-pcid"
if (!exists("anchor")) anchor = 1
# The terminal (.png, .svg or .pdf) from the output name: terminal.gp beside
# this script.
gpdir(s) = strstrt(s, "/") ? s[1:strstrt(s, "/")] . gpdir(s[strstrt(s, "/") + 1:]) : ""
load gpdir(ARG0) . "terminal.gp"
set datafile separator ","
set datafile columnheaders

# Brendan Gregg, "KPTI/KAISER Meltdown Initial Performance Regressions"
# (Netflix, Feb 2018; REFERENCES.md): about 2 % overhead at 50 000
# syscalls/s per CPU without PCID.
# (A header line: `set datafile columnheaders` applies to datablocks too.)
$gregg << EOD
syscalls_per_sec,overhead_pct
50000,2
EOD

set title (exists("plottitle") ? plottitle : "Separate kernel page tables, 2003 and 2018: overhead against syscall rate") noenhanced
set xlabel "system calls per second (per CPU)"
set ylabel "overhead against 3g1g (% of wall-clock time)"
set logscale x 10
set format x "10^{%L}"
set yrange [0:*]
set offsets graph 0.04, graph 0.04, graph 0.05, 0
set grid xtics ytics lc rgb "#dddddd"
set key outside right top box
set key title "layout"

plot for [i = 1:words(layouts)] csv \
        using (strcol("layout") eq word(layouts, i) ? column("syscalls_per_sec") : NaN):(column("overhead_pct")) \
        smooth unique with linespoints lt i lw 2 pt 7 ps 0.8 title word(layouts, i) noenhanced, \
     for [k = 1:(anchor != 0)] $gregg using 1:2 with points pt 6 ps 2.5 lw 2 lc rgb "black" \
        title "KPTI, no PCID: ~2 % at 50k/s (Gregg 2018)"
