# tornado.gp -- what decides a modelled figure: one bar per estimated
# parameter, from the figure with the parameter at the low end of its range
# to the figure at the high end, every other parameter as shipped and the
# calibration's fit rows met again (src/calib/uncertainty.h); the largest
# swing on top. Written by `vmsplit claim` for the null call's 4g4g extra.
#
# Input: tornado.csv, columns
#   parameter, low, high, extra_us_at_low, extra_us_at_high, central_us
# in the order to draw (largest swing first). By hand:
#   gnuplot -e "csv='tornado.csv'; out='tornado.png'" plots/tornado.gp
# Variables (all optional): csv, out, plottitle, xlabel, band (0: no band
#   for the mail's +3 us +- 1).

if (!exists("csv")) csv = "tornado.csv"
if (!exists("out")) out = "tornado.png"
if (!exists("band")) band = 1
if (!exists("xlabel")) xlabel = "4g4g extra of the null call via int 0x80 (us)"
if (strlen(out) > 4 && out[strlen(out)-3:] eq ".svg") {
    set terminal svg size 960,600 dynamic enhanced font "Sans,12" background rgb "white"
} else {
    set terminal pngcairo size 960,600 enhanced font "Sans,11" background rgb "white"
}
set output out
set datafile separator ","
set datafile columnheaders

set title (exists("plottitle") ? plottitle : "What decides the 4G/4G extra: each estimate over its range") noenhanced
set xlabel xlabel
set ytics noenhanced
set yrange [*:*] reverse
set offsets 0, 0, 0.6, 0.6
set grid xtics lc rgb "#dddddd"
set key outside bottom center horizontal
set style fill solid 0.85 border rgb "#333333"
if (band) {
    set object 1 rect from 2, graph 0 to 4, graph 1 fc rgb "#e5f5e0" fs solid 0.6 noborder behind
}

lo(a, b) = a < b ? a : b
hi(a, b) = a > b ? a : b
# The x range from 0 to the largest end, and to the band when it is drawn
# (objects do not take part in autoscaling).
stats csv using (hi(column("extra_us_at_low"), column("extra_us_at_high"))) nooutput
xmax = STATS_max * 1.05
if (band && xmax < 4.5) { xmax = 4.5 }
set xrange [0:xmax]
plot csv using (lo(column("extra_us_at_low"), column("extra_us_at_high"))):0: \
          (lo(column("extra_us_at_low"), column("extra_us_at_high"))): \
          (hi(column("extra_us_at_low"), column("extra_us_at_high"))):($0 - 0.35):($0 + 0.35):ytic(strcol("parameter")) \
        with boxxyerror lc rgb "#fdae6b" title "the estimate from the low to the high end of its range", \
     '' using (column("central_us")):0 with points pt 7 ps 1.2 lc rgb "black" title "as shipped", \
     for [k = 1:(band != 0)] NaN with boxes lc rgb "#a1d99b" title "the mail's +3 us +- 1"
