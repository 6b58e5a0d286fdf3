# terminal.gp -- loaded by every plot script: the terminal from the output
# file's extension, one place for all of them.
#   .svg -> svg, .pdf -> pdfcairo (vector, for papers), anything else ->
#   pngcairo (`vmsplit plot` rejects other extensions before gnuplot runs).
# The PDF is 16 x 10 cm, the same 8:5 shape as the 960 x 600 bitmaps.
ext = strlen(out) > 4 ? out[strlen(out)-3:] : ""
if (ext eq ".svg") {
    set terminal svg size 960,600 dynamic enhanced font "Sans,12" background rgb "white"
} else {
    if (ext eq ".pdf") {
        set terminal pdfcairo size 16cm,10cm enhanced font "Sans,9"
    } else {
        set terminal pngcairo size 960,600 enhanced font "Sans,11" background rgb "white"
    }
}
set output out
