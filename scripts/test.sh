#!/usr/bin/env bash
# Runs every attnlab test on a fresh Debian machine: installs what is missing, builds the native
# library and runs the GoogleTest suite (ctest), then the WebAssembly build and its Node tests.
#
#   scripts/test.sh            everything
#   scripts/test.sh --native   only the native build and ctest
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/bootstrap.sh

echo "== native build (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
echo "== ctest"
ctest --test-dir build --output-on-failure -j"$jobs"

if [[ "${1:-}" == "--native" ]]; then exit 0; fi

if [[ -x scripts/build_wasm.sh ]]; then
  echo "== WebAssembly build"
  bash scripts/build_wasm.sh threads single
  echo "== Node tests of the WebAssembly module"
  (cd "$root" && node --test 'tests/wasm/*.test.mjs')
fi
