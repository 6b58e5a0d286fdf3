# tornado.gp -- what decides a modelled figure: one bar per estimated
# parameter, from the figure with the parameter at the low end of its range
# to the figure at the high end, every other parameter as shipped and the
# calibration's fit rows met again (src/calib/uncertainty.h); the largest
# swing on top, the shipped value as a dot, the statement's band shaded.
# Written by `vmsplit claim` (tornado.csv: the null call's 4G/4G extra;
# tornado-db.csv: the db workload's overhead).
#
# Input: columns parameter, low, high, at_low, at_high, central (the figure
# as shipped), figure (its name, the x label), band_lo, band_hi, in the
# order to draw. By hand:
#   gnuplot -e "csv='tornado.csv'; out='tornado.png'" plots/tornado.gp
# Variables (all optional): csv, out, plottitle, xlabel, band_lo, band_hi
#   (vmsplit plot passes the CSV's figure and band).

if (!exists("csv")) csv = "tornado.csv"
if (!exists("out")) out = "tornado.png"
if (!exists("xlabel")) xlabel = "the figure"
# The terminal (.png, .svg or .pdf) from the output name: terminal.gp beside
# this script.
gpdir(s) = strstrt(s, "/") ? s[1:strstrt(s, "/")] . gpdir(s[strstrt(s, "/") + 1:]) : ""
load gpdir(ARG0) . "terminal.gp"
set datafile separator ","
set datafile columnheaders

set title (exists("plottitle") ? plottitle : "What decides the figure: each estimate over its range") noenhanced
set xlabel xlabel noenhanced
set ytics noenhanced
set yrange [*:*] reverse
set offsets 0, 0, 0.6, 0.6
set grid xtics lc rgb "#dddddd"
set key outside bottom center horizontal
set style fill solid 0.85 border rgb "#333333"

lo(a, b) = a < b ? a : b
hi(a, b) = a > b ? a : b
# The x range from 0 to the largest end and to the band (objects do not
# take part in autoscaling).
stats csv using (hi(column("at_low"), column("at_high"))) nooutput
xmax = STATS_max * 1.05
if (exists("band_hi") && xmax < band_hi * 1.1) { xmax = band_hi * 1.1 }
set xrange [0:xmax]
if (exists("band_lo") && exists("band_hi")) {
    set object 1 rect from band_lo, graph 0 to band_hi, graph 1 fc rgb "#e5f5e0" fs solid 0.6 noborder behind
}

plot csv using (lo(column("at_low"), column("at_high"))):0: \
          (lo(column("at_low"), column("at_high"))): \
          (hi(column("at_low"), column("at_high"))):($0 - 0.35):($0 + 0.35):ytic(strcol("parameter")) \
        with boxxyerror lc rgb "#fdae6b" title "the estimate from the low to the high end of its range", \
     '' using (column("central")):0 with points pt 7 ps 1.2 lc rgb "black" title "as shipped"
