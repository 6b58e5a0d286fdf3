# tlb.gp -- TLB misses (or overhead) against TLB size, one line per group
# (policy, layout, ways, trace: whatever the sweep varied) (plot 2 of issue
# 7; in TLB-miss form for `vmsplit sweep --kind tlbsim`, in overhead form for
# replay sweeps).
#
# Input: a sweep CSV with the x column (default dtlb_entries) and the y
# column (default dtlb_miss_pct). By hand:
#   gnuplot -e "csv='tlb.csv'; out='tlb.png'" plots/tlb.gp
#   gnuplot -e "csv='tlb.csv'; out='tlb.svg'; groupcols='policy layout'" plots/tlb.gp
#   gnuplot -e "csv='replay.csv'; out='o.png'; ycol='overhead_pct'; ylabel='overhead (%)'" plots/tlb.gp
# Variables (all optional): csv, out, xcol, ycol, xlabel, ylabel,
#   groupcols (default "policy"), plottitle, cpulabel (appended to the
#   title), presetx and presetname (the preset's own TLB size, marked with a
#   dashed line). Series are named by what varies ("policy=lru,
#   flush_every=never": a flush interval of 0 is never).

if (!exists("csv")) csv = "sweep.csv"
if (!exists("out")) out = "tlb.png"
if (!exists("xcol")) xcol = "dtlb_entries"
if (!exists("ycol")) ycol = "dtlb_miss_pct"
if (!exists("xlabel")) xlabel = "DTLB entries (4 KiB pages)"
if (!exists("ylabel")) ylabel = "DTLB misses (% of data references)"
if (!exists("groupcols")) groupcols = "policy"
# The terminal (.png, .svg or .pdf) from the output name: terminal.gp beside
# this script.
gpdir(s) = strstrt(s, "/") ? s[1:strstrt(s, "/")] . gpdir(s[strstrt(s, "/") + 1:]) : ""
load gpdir(ARG0) . "terminal.gp"
set datafile separator ","
set datafile columnheaders

gk(n) = n == 1 ? strcol(word(groupcols, 1)) : gk(n - 1) . "/" . strcol(word(groupcols, n))
# A series' legend: each group column with its value, "/" -> ", ".
gval(c, v) = (c eq "flush_every" && v eq "0") ? "never" : v
gpart(k, n) = n == 1 ? (strstrt(k, "/") ? k[1:strstrt(k, "/") - 1] : k) \
                     : gpart(strstrt(k, "/") ? k[strstrt(k, "/") + 1:] : "", n - 1)
gt(k, n) = (n > 1 ? gt(k, n - 1) . ", " : "") . word(groupcols, n) . "=" . gval(word(groupcols, n), gpart(k, n))
gtitle(k) = words(groupcols) == 0 ? "all" : gt(k, words(groupcols))
gkey(dummy) = words(groupcols) == 0 ? "all" : gk(words(groupcols))
groups = " "
set table $scratch
plot csv using (groups = strstrt(groups, " " . gkey(0) . " ") ? groups : groups . gkey(0) . " ", 0):(0) with table
unset table
ngroups = words(groups)

t = exists("plottitle") ? plottitle : \
    (ycol eq "overhead_pct" ? "Overhead against TLB size" : "TLB misses against TLB size")
set title (exists("cpulabel") ? t . "\n" . cpulabel : t) noenhanced
if (exists("presetx")) {
    set arrow from presetx, graph 0 to presetx, graph 1 nohead dt 2 lw 1.5 lc rgb "#555555"
    set label (exists("presetname") ? presetname . "'s own" : "the preset's own") \
        at presetx, graph 0.04 left offset 0.5, 0 tc rgb "#555555" noenhanced
}
set xlabel xlabel noenhanced
set ylabel ylabel noenhanced
set logscale x 2
set format x "%g"
set yrange [0:*]
set offsets graph 0.04, graph 0.04, graph 0.05, 0
set grid xtics ytics lc rgb "#dddddd"
set key inside top right box opaque
set key title "" noenhanced

# smooth unique: points in x order whatever the row order.
plot for [i = 1:ngroups] csv \
        using (gkey(0) eq word(groups, i) ? column(xcol) : NaN):(column(ycol)) \
        smooth unique with linespoints lt i lw 2 pt 7 ps 0.8 title gtitle(word(groups, i)) noenhanced
