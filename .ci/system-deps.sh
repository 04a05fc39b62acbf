#!/usr/bin/env bash
# Installs the Debian packages the tests need: libunicorn2 (the emulator's CPU, loaded through
# koffi), clang-14 + lld-14 (the rebuild check of the real test programs), clang-16 + lld-16 +
# llvm-16 (the rebuild check of the ARM images in test/fixtures/arm-clang: clang-14 cannot emit
# Windows ARM unwind data; llvm-readobj-16 reads it) and chromium (the
# headless browser that test/browser drives, through playwright-core, at /usr/bin/chromium) with
# fonts-dejavu-core (DejaVu Sans Mono, the stack diagram's first font, in which the browser test
# measures that no text runs past its place).
set -euo pipefail
packages=(libunicorn2 clang-14 lld-14 clang-16 lld-16 llvm-16 chromium fonts-dejavu-core)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages present: ${packages[*]}"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: install ${missing[*]} with your package manager (macOS: brew install unicorn llvm@14 llvm@16)" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
