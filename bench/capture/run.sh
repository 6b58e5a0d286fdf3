#!/usr/bin/env bash
# Capture speed and size: the vmcap tool against Valgrind's Lackey
# (--trace-mem=yes) on the same program, gzip -6 on a fixed real input (the
# GPL-3 and GPL-2 texts of Debian's base-files, 53 KB).
#
#   bench/capture/run.sh BUILD_DIR [RUNS]
#
# Prints: references (raw, the same count from both tools), the median wall
# time of each tool and references per second, bytes per reference of
# Lackey's log, of the vmcap stream and of the .vmt.gz trace (per raw
# reference and per merged line), the merge ratio, and the lines four
# merging rules need (merge_rules.py on Lackey's raw references; its
# `vmcap` row cross-checks the tool's own count). With farm-bench on PATH
# the two tools are run pair by pair and their ratio's median printed.
# Skipped (77) without the vmcap tool.
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [RUNS]}")
runs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
lib=$build/tools/vmcap
if ! command -v valgrind >/dev/null || [ ! -x "$lib/vmcap-amd64-linux" ]; then
    echo "bench capture: skipped (valgrind or the vmcap tool missing)"
    exit 77
fi
work=$(mktemp -d /tmp/vmsplit-bench-capture.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/GPL-2 >"$work/input"
prog=(gzip -6 -c "$work/input")

vmcap_once() {
    rm -rf "$work/s" && mkdir "$work/s"
    VALGRIND_LIB=$lib valgrind -q --tool=vmcap --out-dir="$work/s" "${prog[@]}" >/dev/null
}
lackey_once() {
    valgrind -q --tool=lackey --trace-mem=yes --log-file="$work/lackey.log" "${prog[@]}" >/dev/null
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
timed() { local t0 t1; t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

tv=() tl=()
for ((i = 0; i < runs; i++)); do
    tv+=("$(timed vmcap_once)")
    tl+=("$(timed lackey_once)")
done
mv_=$(printf '%s\n' "${tv[@]}" | median)
ml=$(printf '%s\n' "${tl[@]}" | median)
"$build/vmsplit" import-capture -o "$work/trace.vmt.gz" "$work/s" 2>"$work/import.txt"
tc=$( { timed "$build/vmsplit" import-capture -o "$work/trace2.vmt.gz" "$work/s" 2>/dev/null; } )
raw=$(sed -n 's/.*references: \([0-9]*\) written as \([0-9]*\) lines.*/\1/p' "$work/import.txt")
lines=$(sed -n 's/.*references: \([0-9]*\) written as \([0-9]*\) lines.*/\2/p' "$work/import.txt")
if [ -z "$raw" ] || [ -z "$lines" ]; then
    echo "bench capture: cannot read import-capture's summary:" >&2
    cat "$work/import.txt" >&2
    exit 1
fi
lraw=$(grep -c '^I\|^ [LSM]' "$work/lackey.log")
sbytes=$(du -cb "$work"/s/vmcap.* | tail -1 | cut -f1)
gzbytes=$(stat -c %s "$work/trace.vmt.gz")
lbytes=$(stat -c %s "$work/lackey.log")
echo "program: gzip -6 -c ($(stat -c %s "$work/input") bytes: GPL-3 + GPL-2 texts)"
echo "references: vmcap $raw raw, Lackey $lraw"
printf 'capture (median of %d runs, wall, Valgrind start-up included):\n' "$runs"
printf '  vmcap   %.3f s  %.1f M references/s  (runs: %s)\n' "$mv_" "$(echo "$raw / $mv_ / 1000000" | bc -l)" "${tv[*]}"
printf '  Lackey  %.3f s  %.1f M references/s  (runs: %s)\n' "$ml" "$(echo "$lraw / $ml / 1000000" | bc -l)" "${tl[*]}"
printf '  import-capture to .vmt.gz: %.3f s (%.1f M references/s)\n' "$tc" "$(echo "$raw / $tc / 1000000" | bc -l)"
printf 'bytes per reference: Lackey log %.2f; vmcap stream %.3f (%.2f per merged line); .vmt.gz %.3f (%.2f per line)\n' \
    "$(echo "$lbytes / $lraw" | bc -l)" "$(echo "$sbytes / $raw" | bc -l)" "$(echo "$sbytes / $lines" | bc -l)" \
    "$(echo "$gzbytes / $raw" | bc -l)" "$(echo "$gzbytes / $lines" | bc -l)"
printf 'merging: %s raw -> %s lines (%.2f references per line)\n' "$raw" "$lines" "$(echo "$raw / $lines" | bc -l)"
echo "merging rules on Lackey's raw references (lines):"
python3 "$here/merge_rules.py" "$work/lackey.log" | sed 's/^/  /'
if command -v farm-bench >/dev/null; then
    echo "farm-bench, paired (A = Lackey, B = vmcap; the ratio is Lackey's time over vmcap's):"
    mkdir -p "$work/s2"
    farm-bench -n "$runs" --timeout 900 \
        --vs "env VALGRIND_LIB=$lib valgrind -q --tool=vmcap --out-dir=$work/s2 --log-file=/dev/null ${prog[*]}" \
        -- valgrind -q --tool=lackey --trace-mem=yes --log-file="$work/l2.log" "${prog[@]}"
fi
