#!/usr/bin/env bash
# Builds the WebAssembly flavours of attnlab with Emscripten (Debian's emscripten 3.1.6).
#
#   scripts/build_wasm.sh                    threads and single (what the loader picks from)
#   scripts/build_wasm.sh scalar             no WASM SIMD: only for measuring the SIMD speed-up
#   scripts/build_wasm.sh threads single scalar
#
# Each flavour has its own CMake build folder, build-wasm-<flavour>/, configured once and then
# rebuilt incrementally; the module lands in web/wasm/<flavour>/ (attnlab.mjs, attnlab.wasm and,
# for threads, attnlab.worker.js). JOBS (default 2) sets the parallel compile jobs. Then the
# TypeScript of the engine's tables is written from the first flavour built into web/generated/
# (scripts/gen_types.mjs).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${JOBS:-2}
flavours=("$@")
(( ${#flavours[@]} )) || flavours=(threads single)

for tool in emcmake emcc cmake ninja gzip; do
  command -v "$tool" >/dev/null || { echo "build_wasm: '$tool' not found (run scripts/bootstrap.sh)" >&2; exit 1; }
done
# Emscripten's JS optimiser needs Debian's acorn, which lives there.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}

for flavour in "${flavours[@]}"; do
  case "$flavour" in
    threads|single|scalar) ;;
    *) echo "build_wasm: unknown flavour '$flavour' (threads, single, scalar)" >&2; exit 2 ;;
  esac
done

for flavour in "${flavours[@]}"; do
  build="$root/build-wasm-$flavour"
  start=$SECONDS
  if [[ ! -f "$build/build.ninja" ]]; then
    emcmake cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DATTNLAB_WASM_FLAVOUR="$flavour" >/dev/null
  fi
  if ! cmake --build "$build" -j "$jobs"; then
    if [[ "$flavour" == scalar ]]; then
      echo "build_wasm: the scalar flavour needs kernels that compile without xsimd when ATTNLAB_NO_SIMD" \
           "is defined (xsimd 8.1 has no architecture without SSE macros); see web/README.md" >&2
    fi
    exit 1
  fi
  echo "build_wasm: $flavour built in $((SECONDS - start)) s"
done

node "$root/scripts/gen_types.mjs" "${flavours[0]}"

echo
printf '%-8s %-40s %12s %12s\n' flavour file bytes gzip
for flavour in "${flavours[@]}"; do
  out="$root/web/wasm/$flavour"
  for f in attnlab.wasm attnlab.mjs attnlab.worker.js; do
    [[ -f "$out/$f" ]] || continue
    printf '%-8s %-40s %12d %12d\n' "$flavour" "web/wasm/$flavour/$f" "$(stat -c %s "$out/$f")" "$(gzip -9 -c "$out/$f" | wc -c)"
  done
done
