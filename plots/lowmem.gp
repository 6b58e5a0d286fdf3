# lowmem.gp -- lowmem (LowTotal, MiB) against installed RAM, one line per
# layout, with mem_map beside it and a mark where the kernel no longer boots
# (plot 4 of issue 7; the 4G/4G mail's "with 64 GB RAM, the mem_map[] alone
# takes up nearly 1 GB of RAM, making the kernel unable to boot").
#
# Input: a CSV from `vmsplit sweep --kind lowmem`, columns
#   layout, ram_mib, low_total_kb, mem_map_kb, boots, min_free_boot_kb
#   (others ignored). The horizontal line is the free lowmem the kernel
#   needs to boot (min_free_boot_kb): a layout stops booting about where its
#   lowmem curve meets it (exactly: where lowmem left after the boot-time
#   tables, lowmem_left_kb, falls below it -- the "boots" column).
# By hand:
#   gnuplot -e "csv='lowmem.csv'; out='lowmem.png'" plots/lowmem.gp
# Variables (all optional): csv, out (.png -> pngcairo, .svg -> svg, .pdf -> pdfcairo),
#   groupcols (columns whose values make one line each, default "layout";
#   `vmsplit plot` adds struct_page when it varies), plottitle, memmap (0: no
#   mem_map lines), seed (0: without the mail's 64 GB point, drawn at 64 GiB
#   installed RAM).

if (!exists("csv")) csv = "sweep.csv"
if (!exists("out")) out = "lowmem.png"
if (!exists("groupcols")) groupcols = "layout"
if (!exists("memmap")) memmap = 1
if (!exists("seed")) seed = 1
# The seed mail's /proc/meminfo on a 64 GB 4G/4G box (Ingo Molnar, 9 Jul
# 2003, seeds/001-mail-...): MemTotal 66052020 kB, LowTotal 3137464 kB.
$mail << EOD
ram_gib,low_mib
64,3063.93
EOD
# The terminal (.png, .svg or .pdf) from the output name: terminal.gp beside
# this script.
gpdir(s) = strstrt(s, "/") ? s[1:strstrt(s, "/")] . gpdir(s[strstrt(s, "/") + 1:]) : ""
load gpdir(ARG0) . "terminal.gp"
set datafile separator ","
set datafile columnheaders

# One line per distinct value of groupcols ("3g1g", or "3g1g/40" with two).
gk(n) = n == 1 ? strcol(word(groupcols, 1)) : gk(n - 1) . "/" . strcol(word(groupcols, n))
gkey(dummy) = words(groupcols) == 0 ? "all" : gk(words(groupcols))
gidx(k, i) = i > words(groups) ? 0 : word(groups, i) eq k ? i : gidx(k, i + 1)
groups = " "
nofail = 0
set table $scratch
plot csv using (groups = strstrt(groups, " " . gkey(0) . " ") ? groups : groups . gkey(0) . " ", \
                nofail = nofail + (column("boots") == 0), 0):(0) with table
unset table
ngroups = words(groups)
stats csv using (column("min_free_boot_kb") / 1024.) nooutput
bootmin = STATS_max
# Smallest RAM at which each group does not boot.
array noboot[ngroups]
do for [i = 1:ngroups] { noboot[i] = 1e30 }
set table $scratch
plot csv using (i = gidx(gkey(0), 1), \
                (column("boots") == 0 && column("ram_mib") < noboot[i]) ? noboot[i] = column("ram_mib") : 0, \
                0):(0) with table
unset table

set title (exists("plottitle") ? plottitle : "Lowmem against installed RAM")
set xlabel "installed RAM (GiB)"
set ylabel "lowmem: LowTotal, mem\\_map (MiB)"
set logscale x 2
set format x "%g"
set yrange [0:*]
set offsets graph 0.04, graph 0.04, graph 0.05, 0
set grid xtics ytics lc rgb "#dddddd"
set key outside right top box
set key title groupcols noenhanced
set arrow from graph 0, first bootmin to graph 1, first bootmin nohead dt 4 lw 1.5 lc rgb "#d62728"
set label sprintf("needed to boot: %g MiB free lowmem", bootmin) at graph 0.02, first bootmin \
    offset 0, 0.7 tc rgb "#d62728"
do for [i = 1:ngroups] {
    if (noboot[i] < 1e30) {
        set arrow from noboot[i] / 1024., graph 0 to noboot[i] / 1024., graph 1 nohead dt 3 lw 1.5 lc i
        set label sprintf("%s: no boot from %g GiB", word(groups, i), noboot[i] / 1024.) \
            at noboot[i] / 1024., graph 0.97 - 0.05 * (i - 1) right offset -0.6, 0 tc lt i noenhanced
    }
}

plot for [i = 1:ngroups] csv \
        using (gkey(0) eq word(groups, i) ? column("ram_mib") / 1024. : NaN):(column("low_total_kb") / 1024.) \
        with linespoints lt i lw 2 pt 7 ps 0.8 title word(groups, i) noenhanced, \
     for [i = 1:(memmap ? ngroups : 0)] csv \
        using (gkey(0) eq word(groups, i) ? column("ram_mib") / 1024. : NaN):(column("mem_map_kb") / 1024.) \
        with lines lt i lw 1 dt 2 title "mem\\_map " . word(groups, i), \
     for [k = 1:(nofail > 0)] csv \
        using (column("boots") == 0 ? column("ram_mib") / 1024. : NaN):(column("low_total_kb") / 1024.) \
        with points pt 2 ps 2.2 lw 2.5 lc rgb "#d62728" title "does not boot", \
     for [k = 1:(seed != 0)] $mail using 1:2 with points pt 6 ps 2.5 lw 2 lc rgb "black" \
        title "4G/4G mail, 64 GB: LowTotal 3 137 464 kB"
