#!/bin/sh
# Builds the vmcap Valgrind tool the way Valgrind's own Makefile.tool.am
# links its tools (a static executable with no libc, its text at Valgrind's
# valt_load_address, linked against libcoregrind and libvex), and makes the
# directory that holds it a Valgrind library directory: links to every file
# of the system's tool directory beside it, so that
#   VALGRIND_LIB=$(dirname OUT) valgrind --tool=vmcap ...
# finds both our tool and the core's preload objects and suppressions.
#
#   build-tool.sh CC SRC OUT VG_INCLUDEDIR VG_LIBDIR LOAD_ADDRESS SYSTEM_TOOL_DIR
set -eu
cc=$1 src=$2 out=$3 inc=$4 lib=$5 load=$6 sysdir=$7
obj="$out.o"
# The flags of Valgrind's Makefile.all.am for amd64-linux tools: no builtins
# (memcpy etc. come from the core), no stack protector, no PIE.
$cc -std=gnu11 -O2 -g -I"$inc" -I"$(dirname "$src")" \
    -DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1 \
    -fno-strict-aliasing -fno-builtin -fno-stack-protector -fno-pie -fomit-frame-pointer \
    -Wall -Wextra -Wno-unused-parameter -c "$src" -o "$obj"
$cc -o "$out" "$obj" -static -nodefaultlibs -nostartfiles -u _start -Wl,--build-id=none \
    -Wl,-Ttext-segment="$load" "$lib/libcoregrind-amd64-linux.a" "$lib/libvex-amd64-linux.a" \
    -lgcc "$lib/libgcc-sup-amd64-linux.a"
rm -f "$obj"
dir=$(dirname "$out")
for f in "$sysdir"/*; do
    b=$(basename "$f")
    case "$b" in vmcap-*) continue ;; esac
    ln -sfn "$f" "$dir/$b"
done
