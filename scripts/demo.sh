#!/usr/bin/env bash
# The main job: builds everything (native CLI, WebAssembly engine, the page) and serves the page
# on 127.0.0.1 with the cross-origin-isolation headers the threaded engine needs. Open the URL
# it prints. Extra arguments go to scripts/serve.mjs (e.g. --port 9000, --no-isolation).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
bash scripts/bootstrap.sh
echo "== native build (build/attnlab)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs" --target attnlab_cli
echo "== WebAssembly engine"
bash scripts/build_wasm.sh threads single
echo "== page"
bash scripts/build_web.sh
exec node scripts/serve.mjs "$@"
