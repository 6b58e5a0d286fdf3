# latency.gp -- per-syscall latency, one bar per (syscall, layout), stacked
# by where the time goes (plot 3 of issue 7): base entry/exit, CR3 writes,
# TLB refill walks, uaccess, handler body. 3g1g beside 4g4g: rows appear in
# file order, so list each syscall's layouts next to each other.
#
# Input: a replay/compare CSV (see docs/sweep.md), columns
#   syscall, layout, base_ns, cr3_ns, refill_ns, uaccess_ns, body_ns
# By hand:
#   gnuplot -e "csv='latency.csv'; out='latency.png'" plots/latency.gp
# Variables (all optional): csv, out, plottitle.

if (!exists("csv")) csv = "latency.csv"
if (!exists("out")) out = "latency.png"
# The terminal (.png, .svg or .pdf) from the output name: terminal.gp beside
# this script.
gpdir(s) = strstrt(s, "/") ? s[1:strstrt(s, "/")] . gpdir(s[strstrt(s, "/") + 1:]) : ""
load gpdir(ARG0) . "terminal.gp"
set datafile separator ","
set datafile columnheaders

set title (exists("plottitle") ? plottitle : "Per-syscall latency by component") noenhanced
set ylabel "latency per call (ns)"
set xlabel "system call, layout"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.7
set xtics rotate by -35 left noenhanced
set yrange [0:*]
set grid ytics lc rgb "#dddddd"
set key outside right top box reverse Left

plot csv using (column("base_ns")):xtic(strcol("syscall") . " " . strcol("layout")) title "entry/exit base" lc rgb "#9ecae1", \
     '' using (column("cr3_ns")) title "CR3 writes" lc rgb "#e6550d", \
     '' using (column("refill_ns")) title "TLB refill walks" lc rgb "#fdae6b", \
     '' using (column("uaccess_ns")) title "uaccess" lc rgb "#31a354", \
     '' using (column("body_ns")) title "handler body" lc rgb "#756bb1"
