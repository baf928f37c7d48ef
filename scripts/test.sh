#!/usr/bin/env bash
# Runs every attnlab test on a fresh Debian machine: installs what is missing, builds the native
# library and runs the GoogleTest suite (ctest), then builds the WebAssembly module and runs its
# Node tests, then builds the page and runs the browser tests in headless Chromium, then packs
# the npm package and tests it installed in a fresh project (Node and a Vite-built page), and last
# checks that no comment or document narrates measurement history (tests/docs/).
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

docs_check() {
  echo "== documentation check (tests/docs/)"
  node --test tests/docs/
}

if [[ "${1:-}" == "--native" ]]; then docs_check; exit 0; fi

echo "== WebAssembly build (threads + single, and the kernel tests under WebAssembly)"
bash scripts/build_wasm.sh threads single
# Emscripten's JS optimiser needs Debian's acorn (build_wasm.sh sets this for its own builds).
NODE_PATH=${NODE_PATH:-/usr/share/nodejs} cmake --build build-wasm-threads --target attnlab_wasm_kernel_tests -j"$jobs"
echo "== Node tests of the WebAssembly module"
node --test tests/wasm/
echo "== page build"
bash scripts/build_web.sh
echo "== browser tests (headless Chromium)"
node --test tests/browser/
echo "== npm package (scripts/pack_js.sh; installed offline, imported in Node and in a Vite-built page)"
node --test tests/package/
docs_check
