# overhead.gp -- wall-clock overhead against syscall rate, one line per
# layout, with the 4G/4G mail's "0% to 30%" band shaded (plot 1 of issue 7).
#
# Input: a replay/compare CSV (see docs/sweep.md), columns
#   layout, syscalls_per_sec, overhead_pct  (others ignored)
# overhead_pct is relative to the baseline layout (3g1g); rows of the
# baseline itself (0 %) may be present or not. By hand:
#   gnuplot -e "csv='compare.csv'; out='overhead.png'" plots/overhead.gp
# Variables (all optional): csv, out, groupcols (default "layout"),
#   plottitle, band (0: no shaded band).

if (!exists("csv")) csv = "compare.csv"
if (!exists("out")) out = "overhead.png"
if (!exists("groupcols")) groupcols = "layout"
if (!exists("band")) band = 1
# The terminal (.png, .svg or .pdf) from the output name: terminal.gp beside
# this script.
gpdir(s) = strstrt(s, "/") ? s[1:strstrt(s, "/")] . gpdir(s[strstrt(s, "/") + 1:]) : ""
load gpdir(ARG0) . "terminal.gp"
set datafile separator ","
set datafile columnheaders

gk(n) = n == 1 ? strcol(word(groupcols, 1)) : gk(n - 1) . "/" . strcol(word(groupcols, n))
gkey(dummy) = words(groupcols) == 0 ? "all" : gk(words(groupcols))
groups = " "
set table $scratch
plot csv using (groups = strstrt(groups, " " . gkey(0) . " ") ? groups : groups . gkey(0) . " ", 0):(0) with table
unset table
ngroups = words(groups)

set title (exists("plottitle") ? plottitle : "Overhead against syscall rate") noenhanced
set xlabel "system calls per second (per CPU)"
set ylabel "overhead against 3g1g (% of wall-clock time)"
set logscale x 10
set format x "10^{%L}"
set yrange [0:*]
set offsets graph 0.04, graph 0.04, graph 0.05, 0
set grid xtics ytics lc rgb "#dddddd"
set key outside right top box
set key title groupcols noenhanced
if (band) {
    # Ingo Molnar, 9 Jul 2003: "0% to 30%" for typical DB and networking
    # workloads (seeds/001-mail-...).
    set object 1 rect from graph 0, first 0 to graph 1, first 30 behind \
        fc rgb "#9ecae1" fs transparent solid 0.25 noborder
    set label 1 "4G/4G mail: 0-30 %" at graph 0.02, first 28 tc rgb "#3182bd"
}

plot for [i = 1:ngroups] csv \
        using (gkey(0) eq word(groups, i) ? column("syscalls_per_sec") : NaN):(column("overhead_pct")) \
        smooth unique with linespoints lt i lw 2 pt 7 ps 0.8 title word(groups, i) noenhanced
