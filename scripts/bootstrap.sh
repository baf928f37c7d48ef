#!/usr/bin/env bash
# Installs every Debian package attnlab needs. Idempotent: packages already
# present are skipped by apt, and apt-get update runs only when something is
# missing.
#
#   scripts/bootstrap.sh            build + test toolchain (native, WASM, browser; clang with its
#                                   sanitizer and libFuzzer runtimes and llvm-symbolizer for the
#                                   sanitizer builds and tests/fuzz)
#   scripts/bootstrap.sh --torch    also python3-torch, used only to regenerate
#                                   reference fixtures and for bench/compare
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libxtensor-dev xtl-dev libxsimd-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  emscripten binaryen nodejs npm
  chromium nlohmann-json3-dev
  # The browser suite's second browser (tests/browser/firefox/, driven over WebDriver BiDi).
  firefox-esr
  # CJK glyphs for the walkthrough's Chinese examples in the browser tests and screenshots.
  fonts-noto-cjk
  # clang with its sanitizer and libFuzzer runtimes (scripts/sanitize_build.sh, scripts/fuzz.sh).
  clang libclang-rt-14-dev llvm-14
)
if [[ "${1:-}" == "--torch" ]]; then
  # OpenBLAS: Debian's torch otherwise runs on the reference BLAS (10x slower; bench/compare).
  packages+=(python3-torch python3-numpy libopenblas0-openmp)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# node/npm may come from a non-Debian install already on the PATH; accept it.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do
    [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p")
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi

if (( ${#missing[@]} )); then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "bootstrap: all Debian packages present"
fi
