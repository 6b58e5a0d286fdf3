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
#   groupcols (default "policy"), plottitle.

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
gkey(dummy) = words(groupcols) == 0 ? "all" : gk(words(groupcols))
groups = " "
set table $scratch
plot csv using (groups = strstrt(groups, " " . gkey(0) . " ") ? groups : groups . gkey(0) . " ", 0):(0) with table
unset table
ngroups = words(groups)

set title (exists("plottitle") ? plottitle : \
           (ycol eq "overhead_pct" ? "Overhead against TLB size" : "TLB misses against TLB size")) noenhanced
set xlabel xlabel noenhanced
set ylabel ylabel noenhanced
set logscale x 2
set format x "%g"
set yrange [0:*]
set offsets graph 0.04, graph 0.04, graph 0.05, 0
set grid xtics ytics lc rgb "#dddddd"
set key inside top right box opaque
set key title groupcols noenhanced

# smooth unique: points in x order whatever the row order.
plot for [i = 1:ngroups] csv \
        using (gkey(0) eq word(groups, i) ? column(xcol) : NaN):(column(ycol)) \
        smooth unique with linespoints lt i lw 2 pt 7 ps 0.8 title word(groups, i) noenhanced
