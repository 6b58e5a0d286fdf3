#!/usr/bin/env bash
# Replay speed of every bundled capture (issue 18): for each file of
# workloads/captures and each layout, the median over RUNS runs of the host
# wall time of `vmsplit replay --json` (the whole command: decompression,
# parsing, the simulated machine), and from it raw references per host
# second (the file's @refs-raw), reference lines per host second
# (@refs-merged) and simulated time over host time (the replay's own
# "seconds" at the preset's clock).
#
#   bench/replay/captures.sh BUILD_DIR [RUNS] [LAYOUTS]
#
# A benchmark, not a test: it prints figures and asserts nothing about
# speed. The aim issue 18 set: at least tlbsim's rate (about 25 M
# references per second).
set -euo pipefail
build=$(realpath "${1:?usage: captures.sh BUILD_DIR [RUNS] [LAYOUTS]}")
runs=${2:-3}
layouts=${3:-3g1g,4g4g}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
vmsplit=$build/vmsplit
work=$(mktemp -d /tmp/vmsplit-bench-captures.XXXXXX)
trap 'rm -rf "$work"' EXIT
printf '%-10s %-6s %12s %12s %10s %10s %10s\n' capture layout "refs (M)" "lines (M)" "host s" "M refs/s" "sim/host"
for f in "$top"/workloads/captures/*.vmt.gz; do
    name=$(basename "$f" .vmt.gz)
    hdr=$(gzip -dc "$f" | head -40 || true) # head closes the pipe early
    raw=$(awk '/^@refs-raw /{print $2}' <<<"$hdr")
    lines=$(awk '/^@refs-merged /{print $2}' <<<"$hdr")
    for layout in ${layouts//,/ }; do
        : >"$work/times"
        for ((i = 0; i < runs; i++)); do
            t0=$(date +%s.%N)
            "$vmsplit" replay --no-progress --json -l "$layout" "$f" >"$work/out.json"
            t1=$(date +%s.%N)
            echo "$t0 $t1" | awk '{printf "%.6f\n", $2 - $1}' >>"$work/times"
        done
        med=$(sort -g "$work/times" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
        sim=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j["replays"]; r=r[0] if isinstance(r,list) else r; print(r["seconds"])' "$work/out.json")
        awk -v n="$name" -v l="$layout" -v raw="$raw" -v lines="$lines" -v t="$med" -v sim="$sim" \
            'BEGIN {printf "%-10s %-6s %12.2f %12.2f %10.3f %10.1f %10.3f\n", n, l, raw / 1e6, lines / 1e6, t, raw / t / 1e6, sim / t}'
    done
done
echo "(median of $runs runs each; wall time of the whole command on this host)"
