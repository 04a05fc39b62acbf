#!/usr/bin/env bash
# Rebuilds every test program for every target, byte-identically:
#   build/x86-fpo/<program>.exe/.pdb   i686,   -O2 -fomit-frame-pointer
#   build/x86-fp/<program>.exe/.pdb    i686,   -O2 -fno-omit-frame-pointer
#   build/x64/<program>.exe/.pdb       x86_64, -O2 -funwind-tables
#   build/arm64/<program>.exe/.pdb     aarch64, -O2 -funwind-tables
#   build/arm64-fp/<program>.exe/.pdb  aarch64, -O2 -funwind-tables -fno-omit-frame-pointer
# deep-recursion is linked for the stack its recursion needs (program_ldflags).
# noreturn-longjmp is not built for arm64: clang 14 has no __builtin_setjmp/__builtin_longjmp
# for AArch64.
#
# Usage (from any directory):
#   bash vectors/programs/c/build.sh           rebuild build/ in place
#   bash vectors/programs/c/build.sh --check   rebuild in a fresh temporary copy of the
#                                              sources and cmp every .exe/.pdb with build/
set -euo pipefail
export LC_ALL=C
umask 022

CC=clang-14
LINK=lld-link-14
for tool in "$CC" "$LINK"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "build.sh: '$tool' not found. Install the toolchain with:" >&2
        echo "    apt-get install clang-14 lld-14" >&2
        echo "(Debian 12 packages; llvm-14 adds llvm-readobj-14 and llvm-pdbutil-14 for inspection)" >&2
        exit 1
    fi
done
cc_version=$("$CC" --version)
if [[ $cc_version != *"clang version 14."* ]]; then
    echo "build.sh: $CC is not clang 14: ${cc_version%%$'\n'*}" >&2
    exit 1
fi

# Work from this folder with relative paths only, so no absolute checkout path reaches
# the objects, the PE or the PDB.
cd "$(dirname "${BASH_SOURCE[0]}")"

PROGRAMS=(recursion-callbacks big-frames-varargs aligned-callee-saved noreturn-longjmp deep-recursion)
TARGETS=(x86-fpo x86-fp x64 arm64 arm64-fp)

# target_programs TARGET: the programs built for one target.
target_programs() {
    case $1 in
        arm64*) echo recursion-callbacks big-frames-varargs aligned-callee-saved deep-recursion ;;
        *) echo "${PROGRAMS[@]}" ;;
    esac
}

if [[ ${1:-} == --check ]]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    mkdir "$tmp/c"
    cp ./*.c ./*.h ./*.s build.sh "$tmp/c/"
    bash "$tmp/c/build.sh" >/dev/null
    status=0
    for t in "${TARGETS[@]}"; do
        for p in $(target_programs "$t"); do
            for ext in exe pdb; do
                f=build/$t/$p.$ext
                if [[ ! -f $f ]]; then
                    echo "missing  $f"; status=1
                elif cmp -s "$f" "$tmp/c/$f"; then
                    echo "same     $f"
                else
                    echo "DIFFERS  $f"; status=1
                fi
            done
        done
    done
    if [[ $status -eq 0 ]]; then echo "check: every output is byte-identical"; fi
    exit $status
fi

# -ffile-compilation-dir=. records "." as the compilation directory in the CodeView
# data; /pdbsourcepath: makes lld resolve the relative object and source paths against
# a fixed directory instead of the current one; /pdbaltpath:%_PDB% puts only the PDB's
# file name into the PE's debug directory; /Brepro replaces the timestamps with a hash.
CFLAGS=(-O2 -ffreestanding -fno-builtin -fno-stack-protector -g -gcodeview
        -ffile-compilation-dir=. -Wall -Wextra)
LDFLAGS=(/nologo /entry:entry /subsystem:console /nodefaultlib /debug /Brepro
         /pdbaltpath:%_PDB% /pdbsourcepath:/stackwalk-emu/vectors/programs/c
         /fixed /opt:ref /opt:noicf)

trap 'rm -rf build/.obj' EXIT

# program_ldflags PROGRAM TARGET: lld-link flags of one program only. deep-recursion needs
# more than lld's default 1 MiB SizeOfStackReserve: 100,000 levels of 48 bytes on x86,
# 20,000 of 96 bytes on x64.
program_ldflags() {
    case $1:$2 in
        deep-recursion:x86-*) echo /stack:16777216 ;;
        deep-recursion:x64) echo /stack:2097152 ;;
        deep-recursion:arm64*) echo /stack:16777216 ;;
    esac
}

# build_target NAME TRIPLE PROBE.s [clang flags...] -- [lld-link flags...]
build_target() {
    local name=$1 triple=$2 probe=$3
    shift 3
    local -a tflags=() lflags=()
    while [[ $# -gt 0 && $1 != -- ]]; do tflags+=("$1"); shift; done
    shift
    lflags=("$@")

    # lld refuses /fixed for arm64 (Windows on ARM images are always dynamic-base): those
    # images keep a .reloc section and are loaded at their ImageBase all the same.
    local -a ldflags=()
    local f
    for f in "${LDFLAGS[@]}"; do
        if [[ $name == arm64* && $f == /fixed ]]; then continue; fi
        ldflags+=("$f")
    done

    local out=build/$name obj=build/.obj/$name
    rm -rf "$out" "$obj"
    mkdir -p "$out" "$obj"
    "$CC" --target="$triple" -c "$probe" -o "$obj/${probe%.s}.obj"
    local p
    for p in $(target_programs "$name"); do
        "$CC" --target="$triple" "${CFLAGS[@]}" "${tflags[@]}" -c "$p.c" -o "$obj/$p.obj"
        local -a pflags=()
        read -r -a pflags <<<"$(program_ldflags "$p" "$name")"
        "$LINK" "${ldflags[@]}" "${lflags[@]}" "${pflags[@]}" /out:"$out/$p.exe" /pdb:"$out/$p.pdb" \
            "$obj/$p.obj" "$obj/${probe%.s}.obj"
    done
    echo "built $out: $(target_programs "$name")"
}

build_target x86-fpo i686-pc-windows-msvc chkstk-x86.s -fomit-frame-pointer -- \
    /machine:x86 /base:0x400000
build_target x86-fp i686-pc-windows-msvc chkstk-x86.s -fno-omit-frame-pointer -- \
    /machine:x86 /base:0x400000
build_target x64 x86_64-pc-windows-msvc chkstk-x64.s -funwind-tables -- \
    /machine:x64 /base:0x140000000
build_target arm64 aarch64-pc-windows-msvc chkstk-arm64.s -funwind-tables -- \
    /machine:arm64 /base:0x140000000
build_target arm64-fp aarch64-pc-windows-msvc chkstk-arm64.s -funwind-tables -fno-omit-frame-pointer -- \
    /machine:arm64 /base:0x140000000
