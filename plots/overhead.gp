# overhead.gp -- wall-clock overhead against syscall rate, with the 4G/4G
# mail's "0% to 30%" band shaded (plot 1 of issue 7).
#
# Input: a replay/compare CSV (see docs/sweep.md), columns
#   layout, syscalls_per_sec (or xcol, e.g. base_syscalls_per_sec), overhead_pct
#   and, when present, workload
#   (others ignored)
# overhead_pct is relative to the baseline layout (3g1g); rows of the
# baseline itself (0 %) are not drawn. Each workload is its own series, in
# its layout's colour: a workload swept over several rates is a line, a
# workload measured once is a point; different workloads are never joined.
# Each series is labelled with its workload at its highest rate. The y
# axis is logarithmic (microbenchmarks reach hundreds of per cent while
# typical workloads sit at a few), from `ymin` up; overheads below it are
# drawn on the axis as open markers. By hand:
#   gnuplot -e "csv='compare.csv'; out='overhead.png'" plots/overhead.gp
# Variables (all optional): csv, out (.png, .svg, .pdf), groupcols (the
#   columns that make one series, default "workload layout"; `vmsplit plot`
#   passes what varies), plottitle, cpulabel (appended to the title, e.g.
#   "p4-northwood, 2800 MHz"), whatif (space-separated layouts that are
#   what-ifs: marked in the legend, dashed), band (0: no shaded band), ymin
#   (default 0.1, in %), linear (1: a linear y axis from 0), only (draw only
#   these space-separated layouts; default all), anchor (1: Brendan Gregg's
#   2018 KPTI point). kpti.gp is this script with other defaults.

if (!exists("csv")) csv = "compare.csv"
if (!exists("out")) out = "overhead.png"
if (!exists("groupcols")) groupcols = "workload layout"
if (!exists("band")) band = 1
if (!exists("whatif")) whatif = ""
if (!exists("ymin")) ymin = 0.1
if (!exists("linear")) linear = 0
if (!exists("only")) only = ""
if (!exists("anchor")) anchor = 0
if (!exists("xcol")) xcol = "syscalls_per_sec"
if (!exists("xlabel")) xlabel = "system calls per second (per CPU)"
# The terminal (.png, .svg or .pdf) from the output name: terminal.gp beside
# this script.
gpdir(s) = strstrt(s, "/") ? s[1:strstrt(s, "/")] . gpdir(s[strstrt(s, "/") + 1:]) : ""
load gpdir(ARG0) . "terminal.gp"
set datafile separator ","
set datafile columnheaders

# Series: one per distinct value of groupcols ("db/4g4g"); colours: one per
# layout, in order of first appearance.
gk(n) = n == 1 ? strcol(word(groupcols, 1)) : gk(n - 1) . "/" . strcol(word(groupcols, n))
gkey(dummy) = words(groupcols) == 0 ? "all" : gk(words(groupcols))
widx(list, k, i) = i > words(list) ? 0 : word(list, i) eq k ? i : widx(list, k, i + 1)
# Rows not drawn: the baseline's own, rows without an overhead (compare's
# per-syscall rows; NaN is the one value not equal to itself), and layouts
# left out by `only`.
nan(v) = v != v
isbase(dummy) = nan(column("overhead_pct")) || \
                (column("overhead_pct") == 0 && strcol("layout") eq "3g1g") || \
                (only ne "" && strstrt(" " . only . " ", " " . strcol("layout") . " ") == 0)
groups = " "
layouts = " "
set table $scratch
plot csv using (isbase(0) ? 0 : ( \
        groups = strstrt(groups, " " . gkey(0) . " ") ? groups : groups . gkey(0) . " ", \
        layouts = strstrt(layouts, " " . strcol("layout") . " ") ? layouts : layouts . strcol("layout") . " ", \
        0)):(0) with table
unset table
ngroups = words(groups)
# Per series: its layout's colour, its highest rate (where its label goes),
# whether it is the first series of its layout (which carries the legend).
array glay[ngroups > 0 ? ngroups : 1]
array gmax[ngroups > 0 ? ngroups : 1]
do for [i = 1:ngroups] { glay[i] = 0; gmax[i] = -1 }
set table $scratch
plot csv using (isbase(0) ? 0 : ( \
        i = widx(groups, gkey(0), 1), \
        glay[i] = widx(layouts, strcol("layout"), 1), \
        gmax[i] = column(xcol) > gmax[i] ? column(xcol) : gmax[i], \
        0)):(0) with table
unset table
# gfirst: the first series of its layout (it carries the legend entry);
# wfirst: the first series of its workload (it carries the label, so that
# the layouts of one workload are labelled once).
array gfirst[ngroups > 0 ? ngroups : 1]
array wfirst[ngroups > 0 ? ngroups : 1]
gwl(i) = strstrt(word(groups, i), "/") ? word(groups, i)[1:strstrt(word(groups, i), "/") - 1] : word(groups, i)
do for [i = 1:ngroups] {
    gfirst[i] = 1
    wfirst[i] = 1
    do for [j = 1:i - 1] {
        if (glay[j] == glay[i]) { gfirst[i] = 0 }
        if (gwl(j) eq gwl(i)) { wfirst[i] = 0 }
    }
}
firstof(i) = gfirst[i]
lname(i) = word(layouts, glay[i])
iswhatif(i) = strstrt(" " . whatif . " ", " " . lname(i) . " ") > 0
# The workload of a row, for its label: without directories and ".vmt".
base(s) = strstrt(s, "/") ? base(s[strstrt(s, "/") + 1:]) : s
wname(s) = s[1:4] eq "gen:" ? s[5:] : (strstrt(s, ".vmt") ? s[1:strstrt(s, ".vmt") - 1] : base(s))
label(dummy) = strstrt(groupcols, "workload") ? wname(base(strcol("workload"))) : ""
fy(y) = linear ? y : (y < ymin ? ymin : y)

# Brendan Gregg, "KPTI/KAISER Meltdown Initial Performance Regressions"
# (Netflix, Feb 2018; REFERENCES.md): about 2 % overhead at 50 000
# syscalls/s per CPU without PCID. (A header line: `set datafile
# columnheaders` applies to datablocks too.)
$gregg << EOD
syscalls_per_sec,overhead_pct
50000,2
EOD

# Gregg's point, when asked for, as a macro appended to the plot command:
# an empty iteration (for [k = 1:0]) still took a row of the key, with the
# width of its title.
gregg = anchor ? ", $gregg using 1:(fy($2)) with points pt 6 ps 2.5 lw 2 lc rgb 'black' " . \
                 "title 'KPTI, no PCID: ~2 % at 50k/s (Gregg 2018)' noenhanced" : ""

t = exists("plottitle") ? plottitle : "Overhead against syscall rate"
set title (exists("cpulabel") ? t . "\n" . cpulabel : t) noenhanced
set xlabel xlabel noenhanced
set ylabel linear ? "overhead against 3g1g (% of wall-clock time)" \
                  : "overhead against 3g1g (% of wall-clock time, log scale)"
set logscale x 10
set format x "10^{%L}"
if (linear) {
    set yrange [0:*]
} else {
    set logscale y 10
    set yrange [ymin:*]
    set format y "%g"
}
set offsets graph 0.04, graph 0.12, graph 0.05, 0
set grid xtics ytics lc rgb "#dddddd"
set key inside left top box opaque samplen 2
set key title "layout" noenhanced
if (band) {
    # Ingo Molnar, 9 Jul 2003: "0% to 30%" for typical DB and networking
    # workloads (seeds/001-mail-...).
    set object 1 rect from graph 0, first (linear ? 0 : ymin) to graph 1, first 30 behind \
        fc rgb "#9ecae1" fs transparent solid 0.25 noborder
    set label 1 "4G/4G mail: 0-30 %" at graph 0.02, first 24 tc rgb "#3182bd"
}

plot for [i = 1:ngroups] csv \
        using (!isbase(0) && gkey(0) eq word(groups, i) ? column(xcol) : NaN):(fy(column("overhead_pct"))) \
        smooth unique with linespoints lt glay[i] dt 1+iswhatif(i) lw 2 pt 7 ps 0.9 \
        title (firstof(i) ? lname(i) . (iswhatif(i) ? " (what-if)" : "") : "") noenhanced, \
     for [i = 1:(linear ? 0 : ngroups)] csv \
        using (!isbase(0) && gkey(0) eq word(groups, i) && column("overhead_pct") < ymin ? column(xcol) : NaN):(ymin) \
        with points lt glay[i] pt 6 ps 1.4 notitle, \
     for [i = 1:ngroups] csv \
        using (!isbase(0) && wfirst[i] && gkey(0) eq word(groups, i) && column(xcol) == gmax[i] ? column(xcol) : NaN):(fy(column("overhead_pct"))):(label(0)) \
        with labels left offset 0.8, 0 font ",9" tc lt glay[i] notitle noenhanced \
     @gregg
