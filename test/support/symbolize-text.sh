#!/usr/bin/env bash
# Prints llvm-symbolizer-14's answer (--inlining --print-address) for every byte of the .text
# section of PE image $1 (and so from its PDB): the ground truth the inline and source-line
# tests compare the project's symbols with.
set -euo pipefail
export LC_ALL=C
image=$1
python3 - "$image" <<'PY' | llvm-symbolizer-14 --inlining --print-address --obj="$image"
import struct, sys
data = open(sys.argv[1], "rb").read()
pe = struct.unpack_from("<I", data, 0x3c)[0]
nsec = struct.unpack_from("<H", data, pe + 6)[0]
optsize = struct.unpack_from("<H", data, pe + 20)[0]
magic = struct.unpack_from("<H", data, pe + 24)[0]
base = struct.unpack_from("<Q" if magic == 0x20b else "<I", data, pe + 24 + (24 if magic == 0x20b else 28))[0]
for i in range(nsec):
    at = pe + 24 + optsize + 40 * i
    name = data[at:at + 8].rstrip(b"\0")
    vsize, va = struct.unpack_from("<II", data, at + 8)
    if name == b".text":
        for a in range(base + va, base + va + vsize):
            print(hex(a))
PY
