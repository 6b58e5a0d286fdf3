#!/usr/bin/env bash
# bench/bochs/run.sh -- vmsplit against Bochs 2.7 on issue 4's 256-page loop.
#
# Runs workloads/guest/pageloop.asm (PASSES raised so a run lasts seconds)
# under Bochs (as a boot floppy, pageloop_boot.asm) and under
# `vmsplit run --cpu p4-northwood`, alternately, RUNS times each, and prints
# the medians and the ratio vmsplit/Bochs in guest instructions per second
# of the process's user CPU time. Each round also runs both with PASSES=1;
# the loop's rate is (instructions(PASSES) - instructions(1)) divided by
# (CPU(PASSES) - CPU(1)), which takes out Bochs' BIOS and vmsplit's start-up
# (preset loading, NASM) alike. See README.md.
#
# Usage: bench/bochs/run.sh [BUILD_DIR]
#        bench/bochs/run.sh --check [BUILD_DIR]   the correctness checks only
# BUILD_DIR defaults to $VMSPLIT_BUILD_DIR, then build/ in the source tree.
# Environment: RUNS (default 5), PASSES (default 100000).
# Exit status: 0 done, 1 a check failed, 2 bad usage or missing build,
# 77 Bochs (or one of its packages) is not installed: skipped.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
check_only=0
if [[ ${1:-} == --check ]]; then
    check_only=1
    shift
fi
build=${1:-${VMSPLIT_BUILD_DIR:-$src/build}}
runs=${RUNS:-5}
passes=${PASSES:-100000}
vmsplit=$build/vmsplit
pageloop=$src/workloads/guest/pageloop.asm
plugins=/usr/lib/x86_64-linux-gnu/bochs/plugins

die() { echo "bochs bench: $1" >&2; keep=1; exit "${2:-1}"; }

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, not '$runs'" 2
# Page i ends up holding PASSES x (256 - i): under 2^32 / 256 passes. Under
# 10,000 passes (15 M instructions) the timing is mostly noise.
[[ $passes =~ ^[1-9][0-9]*$ ]] && ((passes >= 10000 && passes < 16777216)) ||
    die "PASSES must be an integer from 10000 to 16777215, not '$passes'" 2
[[ -x $vmsplit ]] || die "no vmsplit binary at $vmsplit (build it, or pass BUILD_DIR)" 2
command -v nasm >/dev/null || die "nasm not found" 2
if ! command -v bochs >/dev/null || [[ ! -e /usr/share/bochs/BIOS-bochs-latest ]] ||
   [[ ! -e /usr/share/vgabios/vgabios.bin ]] || ! compgen -G "$plugins/libbx_term_gui.so*" >/dev/null; then
    echo "bochs bench: skipped: Bochs 2.7 is not installed;" \
         "apt-get install bochs bochs-term bochsbios vgabios" >&2
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vmsplit-bochs-XXXXXX")
keep=0
trap '[[ $keep == 1 ]] && echo "bochs bench: files kept in $work" >&2 || rm -rf "$work"' EXIT

# The instructions from _start to the exit int 0x80 (pageloop.asm's header):
# 1 + 1540 x passes + 1283 + 5.
insns() { echo $((1540 * $1 + 1289)); }

# pageloop.asm with PASSES = $1 (and, with $2 = wrong, an expected value
# off by one in the verify loop), as $work/pageloop-$1[-wrong].asm. Exactly
# the lines meant to change may change.
make_source() {
    local p=$1 out=$work/pageloop-$1${2:+-$2}.asm want=1
    sed "s/^%define PASSES .*/%define PASSES $p/" "$pageloop" > "$out"
    if [[ ${2:-} == wrong ]]; then
        sed -i 's/^\( *mov edx, PASSES \* PAGES\)$/\1 + 1/' "$out"
        want=2
    fi
    local changed
    changed=$(diff "$pageloop" "$out" | grep -c '^>' || true)
    ((changed == want)) || die "pageloop.asm no longer has the lines run.sh edits ($changed changed, $want expected)"
    echo "$out"
}

# The boot floppy for a source: $work/NAME.img, and its NASM map.
make_image() {
    local asm=$1 img=${1%.asm}.img
    nasm -f bin -DPAGELOOP_SRC="\"$asm\"" -DMAPFILE="${asm%.asm}.map" \
         -o "$img" "$here/pageloop_boot.asm" || die "nasm failed on pageloop_boot.asm"
    # The boot sector reads the rest from the first track: 18 sectors.
    (($(stat -c %s "$img") <= 18 * 512)) || die "the boot image outgrew the first floppy track"
    truncate -s 1474560 "$img"
    echo "$img"
}

# Runs Bochs on image $1 with debugger commands $2; stdout to $3, Bochs' log
# to $3.log. TERM: the term display (the Debian build has no nogui) needs a
# terminal type; it draws on a pseudo-terminal of its own, not on ours.
bochs_run() {
    BOCHS_IMG=$1 BOCHS_LOG=$3.log TERM=dumb timeout 600 \
        bochs -f "$here/bochsrc.txt" -rc "$2" </dev/null >"$3" 2>"$3.err" || true
    grep -q 'Shutdown port: shutdown requested' "$3.log" ||
        die "Bochs did not end through the shutdown port (see $3.log)" 1
}

# Bochs' tick count (one per instruction) when it stopped, from its log.
bochs_end_tick() {
    sed -n 's/^0*\([0-9][0-9]*\)p\[UNMAP *\] >>PANIC<< Shutdown port: shutdown requested.*/\1/p' "$1.log"
}

# The 'P'/'F'/'E' the guest wrote to port 0xe9.
# ('E' a CPU exception, 'X' no PAE, 'D' the floppy read failed.)
bochs_verdict() { grep -a -o -m1 '^[PFEXD]$' "$1" || echo "?"; }

json_field() { grep -o "\"$2\" : [0-9.e+-]*" "$1" | head -1 | sed 's/.* : //'; }

fail=0
check() { # description, got, want
    if [[ $2 == "$3" ]]; then
        printf 'ok    %s: %s\n' "$1" "$2"
    else
        printf 'FAIL  %s: got %s, want %s\n' "$1" "$2" "$3"
        fail=1
    fi
}

# ---- checks: Bochs runs exactly the instructions counted, the verify loop
# ---- verifies, vmsplit counts the same.
cont=$work/continue.rc
printf 'c\n' > "$cont"
echo "== checks"
for p in 1 3; do
    asm=$(make_source $p)
    img=$(make_image "$asm")
    map=${asm%.asm}.map
    start=$(awk '$3 == "_start" { print $2 }' "$map")
    exit=$(awk '$3 == "sys_exit" { print $2 }' "$map")
    rc=$work/count-$p.rc
    printf 'lb 0x%s\nlb 0x%s\nc\nptime\nc\nptime\nc\n' "$start" "$exit" > "$rc"
    bochs_run "$img" "$rc" "$work/count-$p.out"
    mapfile -t t < <(sed -n 's/^ptime: \([0-9]*\)$/\1/p' "$work/count-$p.out")
    check "Bochs ticks from _start to the int 0x80 handler, PASSES=$p" \
          "$((${t[1]:-0} - ${t[0]:-0}))" "$(insns $p)"
    check "Bochs verify loop, PASSES=$p" "$(bochs_verdict "$work/count-$p.out")" P
done
wrong=$(make_source 3 wrong)
wrong_img=$(make_image "$wrong")
bochs_run "$wrong_img" "$cont" "$work/wrong.out"
check "Bochs verify loop with a wrong expected value" "$(bochs_verdict "$work/wrong.out")" F
set +e
"$vmsplit" run --cpu p4-northwood "$wrong" >/dev/null 2>&1
vrc=$?
set -e
check "vmsplit exit status with a wrong expected value" "$vrc" 1
"$vmsplit" run --cpu p4-northwood --json "$work/pageloop-3.asm" > "$work/v3.json" ||
    die "vmsplit run failed on the PASSES=3 loop"
check "vmsplit user instructions, PASSES=3" "$(json_field "$work/v3.json" instructions_user)" "$(insns 3)"
((fail == 0)) || die "a check failed" 1
((check_only == 0)) || exit 0

# ---- timing ----------------------------------------------------------------
big=$(make_source "$passes")
big_img=$(make_image "$big")
one=$work/pageloop-1.asm
one_img=$work/pageloop-1.img
delta=$((1540 * (passes - 1)))

# time_cmd OUT -- command: runs it, leaves "wall user sys" in OUT.time.
time_cmd() {
    local out=$1
    shift
    local TIMEFORMAT='%R %U %S'
    { time "$@" >"$out" 2>"$out.err"; } 2>"$out.time"
}
bochs_timed() { # image out
    time_cmd "$2" env BOCHS_IMG="$1" BOCHS_LOG="$2.log" TERM=dumb timeout 600 \
        bochs -f "$here/bochsrc.txt" -rc "$cont" </dev/null || true
    grep -q 'Shutdown port: shutdown requested' "$2.log" || die "Bochs did not shut down (see $2.log)"
    [[ $(bochs_verdict "$2") == P ]] || die "Bochs: the verify loop failed ($2)"
}
vmsplit_timed() { # asm out
    time_cmd "$2" "$vmsplit" run --cpu p4-northwood --json "$1" ||
        die "vmsplit run failed on $1"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { awk -v f="$2" '{ print $f }' "$1"; }

echo "== timing: PASSES=$passes ($(insns "$passes") loop instructions), $runs rounds, started $(date '+%Y-%m-%d %H:%M:%S %Z')"
echo "   a round runs Bochs and vmsplit on PASSES=$passes and on PASSES=1, the order alternating"
: > "$work/rows"
for ((r = 1; r <= runs; r++)); do
    if ((r % 2)); then order="b v"; else order="v b"; fi
    for who in $order; do
        if [[ $who == b ]]; then
            bochs_timed "$big_img" "$work/b$r"
            bochs_timed "$one_img" "$work/b1-$r"
        else
            vmsplit_timed "$big" "$work/v$r"
            vmsplit_timed "$one" "$work/v1-$r"
        fi
    done
    # Bochs: the extra ticks of the long run must be exactly the extra loop
    # instructions (the BIOS and boot take the same ticks in both).
    ticks=$(($(bochs_end_tick "$work/b$r") - $(bochs_end_tick "$work/b1-$r")))
    [[ $ticks == "$delta" ]] || die "Bochs ran $ticks extra instructions, not $delta"
    vins=$(($(json_field "$work/v$r" instructions_user) - $(json_field "$work/v1-$r" instructions_user)))
    [[ $vins == "$delta" ]] || die "vmsplit ran $vins extra user instructions, not $delta"
    read -r bw bu bs < "$work/b$r.time"
    read -r b1w b1u b1s < "$work/b1-$r.time"
    read -r vw vu vs < "$work/v$r.time"
    read -r v1w v1u v1s < "$work/v1-$r.time"
    vhost=$(json_field "$work/v$r" host_minsns_per_second)
    awk -v d="$delta" -v bu="$bu" -v b1u="$b1u" -v vu="$vu" -v v1u="$v1u" \
        -v bw="$bw" -v b1w="$b1w" -v vw="$vw" -v v1w="$v1w" -v bs="$bs" -v vs="$vs" -v vh="$vhost" -v r="$r" 'BEGIN {
        if (bu - b1u <= 0 || vu - v1u <= 0) {
            print "bochs bench: a run too short to time; raise PASSES" > "/dev/stderr"; exit 1
        }
        brate = d / (bu - b1u) / 1e6; vrate = d / (vu - v1u) / 1e6
        printf "%d %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.2f %.2f %.4f %.2f %.3f %.3f %.3f\n",
            r, bw, bu, b1u, vw, vu, v1u, b1w, v1w, brate, vrate, vrate / brate,
            vh, bs, vs, b1u / bu
    }' >> "$work/rows"
    awk -v r="$r" '$1 == r { printf "   round %d: Bochs %.2f s wall %.2f s user (PASSES=1: %.2f s user) -> %.1f M/s;" \
        "  vmsplit %.2f s wall %.2f s user (PASSES=1: %.2f s user) -> %.1f M/s;  ratio %.3f\n",
        r, $2, $3, $4, $10, $5, $6, $7, $11, $12 }' "$work/rows"
done

col() { awk -v c="$1" '{ print $c }' "$work/rows" | median; }
echo "== medians of $runs rounds, finished $(date '+%H:%M:%S')"
printf '   Bochs 2.7     wall %6.2f s  user %6.2f s  sys %5.2f s  (PASSES=1: wall %.2f s, user %.2f s = %.1f%% of the long run)\n' \
    "$(col 2)" "$(col 3)" "$(col 14)" "$(col 8)" "$(col 4)" "$(awk -v x="$(col 16)" 'BEGIN { print 100 * x }')"
printf '   vmsplit       wall %6.2f s  user %6.2f s  sys %5.2f s  (PASSES=1: wall %.2f s, user %.2f s)\n' \
    "$(col 5)" "$(col 6)" "$(col 15)" "$(col 9)" "$(col 7)"
printf '   loop rate, million guest instructions per user-CPU second: Bochs %.1f, vmsplit %.1f\n' "$(col 10)" "$(col 11)"
printf '   vmsplit own "host" figure (wall clock of the run loop only): %.1f M/s\n' "$(col 13)"
printf '   ratio vmsplit/Bochs (median of the per-round ratios): %.3f  (issue 4 aims at >= 2)\n' "$(col 12)"
