#!/usr/bin/env bash
# Builds attnlab and runs the main job: a walk through every stage of multi-head attention on a
# short sentence. Extra arguments go to `attnlab demo` (see `build/attnlab demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target attnlab_cli
exec build/attnlab demo "$@"
