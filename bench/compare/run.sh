#!/usr/bin/env bash
# bench/compare/run.sh: attnlab against PyTorch, ONNX Runtime Web and TensorFlow.js, in one go on
# this machine, with ratios from the same run.
#
#   bench/compare/run.sh            n = 256, 1024, 2048; ~3 s of repeats per configuration
#   bench/compare/run.sh --quick    n = 256, 1024; ~1 s per configuration (about 3 minutes)
#   bench/compare/run.sh --rounds 3 every measurement step 3 times, round after round; each row
#                                   of the report is then the median round (a shared machine's
#                                   load comes and goes: one system alone should not catch it)
#   bench/compare/run.sh --only train-tang   only the measurement steps whose name contains
#                                   train-tang (native-, wasm-threads-, pytorch-train-tang)
#
# Needs: scripts/build_wasm.sh (threads, single; scalar too for the SIMD ratio). Installs the rest:
# python3-torch through scripts/bootstrap.sh --torch, OpenBLAS for it (Debian's torch calls
# libblas.so.3, and the reference BLAS behind it by default is ~20x slower), the npm packages of
# package-lock.json (npm ci), the native build (build-compare-native/, -DATTNLAB_NATIVE=ON) and
# attnlab_compare.cpp linked with em++ against each built WASM flavour's libattnlab.a.
#
# Steps, each writing results/raw/<step>.json (stderr in <step>.err); a failing step is reported
# and skipped, the others still run. Then report.mjs prints the tables and writes
# results/latest.json and results/latest.md. Not part of the test suite.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
sizes=256,1024,2048
seconds=3
rounds=1
only=""
args="$*"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) sizes=256,1024; seconds=1 ;;
    --rounds)
      rounds=${2:-}
      [[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --rounds needs a positive integer, got '${2:-}'" >&2; exit 2; }
      shift ;;
    --only)
      only=${2:-}
      [[ -n "$only" ]] || { echo "run.sh: --only needs a step name (e.g. train-tang)" >&2; exit 2; }
      shift ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (valid: --quick, --rounds N, --only NAME)" >&2; exit 2 ;;
  esac
  shift
done

results=$here/results
raw=$results/raw
data=$results/data
rm -rf "$raw"
mkdir -p "$raw" "$data"
log() { printf '\n== %s\n' "$*" >&2; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# ---- set-up -----------------------------------------------------------------------------------
log "set-up"
"$root/scripts/bootstrap.sh" --torch >&2 || { echo "run.sh: scripts/bootstrap.sh --torch failed" >&2; exit 1; }
python=/usr/bin/python3
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
if [[ "$blas" != *openblas* ]]; then
  echo "run.sh: libblas.so.3 is $blas (reference BLAS); installing libopenblas0-openmp for PyTorch" >&2
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libopenblas0-openmp >&2 \
    || echo "run.sh: could not install OpenBLAS; PyTorch runs on the reference BLAS" >&2
fi
# OpenBLAS 0.3.21 (bookworm) picks its kernels by CPU model, and a model newer than it knows
# (e.g. a Xeon of family 6 model 207, with AVX-512) gets its generic "Prescott" SSE3 kernels,
# 5-10x slower than its SkylakeX kernels on the same core. Then PyTorch's
# numbers would be the BLAS's fallback, not PyTorch. So when OpenBLAS reports Prescott on a CPU
# with AVX-512 (F, CD, BW, DQ, VL: SkylakeX's set) or AVX2 + FMA, run.sh names the matching
# kernels through OPENBLAS_CORETYPE, and the report's versions line shows the core used.
openblas_core=$(OPENBLAS_VERBOSE=2 "$python" -c 'import torch; torch.randn(8, 8) @ torch.randn(8, 8)' 2>&1 \
                | sed -n 's/^Core: //p' | head -1)
openblas_coretype=""
if [[ "$openblas_core" == Prescott ]]; then
  cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  has() { for f in "$@"; do [[ "$cpu_flags" == *" $f "* ]] || return 1; done; }
  if has avx512f avx512cd avx512bw avx512dq avx512vl; then openblas_coretype=SkylakeX
  elif has avx2 fma; then openblas_coretype=Haswell; fi
  [[ -n "$openblas_coretype" ]] && \
    echo "run.sh: OpenBLAS does not know this CPU (it chose Prescott): OPENBLAS_CORETYPE=$openblas_coretype" >&2
fi
openblas_used=${openblas_coretype:-$openblas_core}
if [[ ! -d "$here/node_modules" ]]; then
  (cd "$here" && npm ci --no-audit --no-fund >&2) || { echo "run.sh: npm ci failed" >&2; exit 1; }
fi

native=$root/build-compare-native
if [[ ! -f "$native/build.ninja" ]]; then
  cmake -S "$here/native" -B "$native" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNLAB_NATIVE=ON >&2 \
    || { echo "run.sh: configuring $native failed" >&2; exit 1; }
fi
cmake --build "$native" -j "${JOBS:-2}" >&2 || { echo "run.sh: building $native failed" >&2; exit 1; }

# attnlab_compare for each WASM flavour that scripts/build_wasm.sh built, with the flavour's flags
# (web/CMakeLists.txt); rebuilt when the source or the library is newer.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
wasm_flavours=()
for flavour in threads single scalar; do
  lib=$root/build-wasm-$flavour/web/libattnlab.a
  [[ -f "$lib" ]] || { echo "run.sh: no $lib (scripts/build_wasm.sh $flavour): skipping WASM $flavour" >&2; continue; }
  out=$results/wasm/$flavour/attnlab_compare.js
  case $flavour in
    threads) flags=(-msimd128 -msse4.1 -pthread -sPTHREAD_POOL_SIZE=4 -Wno-pthreads-mem-growth) ;;
    single) flags=(-msimd128 -msse4.1) ;;
    scalar) flags=(-DATTNLAB_NO_SIMD) ;;
  esac
  if [[ ! -f "$out" || "$out" -ot "$here/attnlab_compare.cpp" || "$out" -ot "$lib" ]]; then
    mkdir -p "$(dirname "$out")"
    echo "run.sh: em++ attnlab_compare ($flavour)" >&2
    em++ -std=c++17 -O3 -fexceptions "${flags[@]}" -DATTNLAB_COMPARE_BUILD="\"wasm-$flavour\"" \
      -I"$root/include" -isystem "$root/build-wasm-$flavour/web/header-links" "$here/attnlab_compare.cpp" "$lib" \
      -sNODERAWFS=1 -sSINGLE_FILE=1 -sEXIT_RUNTIME=1 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=1024MB \
      -o "$out" >&2 || { echo "run.sh: em++ ($flavour) failed: skipping" >&2; continue; }
  fi
  wasm_flavours+=("$flavour")
done

cat > "$raw/machine.json" <<EOF
{"cpu": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')", "cores": $(nproc),
 "load_start": "$(cut -d' ' -f1-3 /proc/loadavg)", "date": "$(date -u '+%Y-%m-%d %H:%M UTC')",
 "command": "bench/compare/run.sh${args:+ $args}", "rounds": $rounds,
 "versions": {"node": "$(node --version)", "g++": "$(g++ -dumpversion)", "emcc": "$(emcc --version | head -1 | grep -o '[0-9]*\.[0-9]*\.[0-9]*' | head -1)",
   "attnlab": "$(git -C "$root" describe --always --dirty)", "torch BLAS": "$(basename "$(dirname "$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)")")${openblas_used:+ ($openblas_used${openblas_coretype:+, set by run.sh})}"}}
EOF

# ---- measurements -----------------------------------------------------------------------------
# step NAME CMD...: runs CMD, keeps its stdout as NAME.rROUND.json and records the load around it.
round=1
step() {
  local name=$1; shift
  [[ -z "$only" || "$name" == *"$only"* ]] || return 0
  log "$name (round $round of $rounds): $*"
  local start=$SECONDS before file=$raw/$name.r$round; before=$(load1)
  if "$@" >"$file.json" 2>"$file.err"; then ok=true; else ok=false; tail -5 "$file.err" >&2; fi
  printf '{"name": "%s", "round": %d, "ok": %s, "load_start": %s, "load_end": %s, "seconds": %d}\n' \
    "$name" "$round" "$ok" "$before" "$(load1)" $((SECONDS - start)) >>"$raw/steps.jsonl"
}
common=(--data "$data" --sizes "$sizes" --seconds "$seconds")
# PyTorch runs with the allocator policy attnlab's training loop sets for itself
# (train/memory.hpp: keep_freed_memory, glibc mallopt M_MMAP_THRESHOLD 32 MiB, M_TRIM_THRESHOLD
# 512 MiB), so neither side pays page faults the other does not (without it PyTorch's
# tiny-encoder step is slower, most on 2 threads; bench/compare/RESULTS.md). Our training
# step also puts its heap on transparent huge pages (use_huge_pages, as the Trainer does), so
# PyTorch's training step gets glibc's own switch for that (malloc.hugetlb=1). The attention
# and matmul steps run without huge pages on both sides.
torch_tunables=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=536870912
torch_env=(env GLIBC_TUNABLES=$torch_tunables ${openblas_coretype:+OPENBLAS_CORETYPE=$openblas_coretype})
torch_train_env=(env GLIBC_TUNABLES=$torch_tunables:glibc.malloc.hugetlb=1
                 ${openblas_coretype:+OPENBLAS_CORETYPE=$openblas_coretype})

step prepare "$python" "$here/torch_bench.py" prepare --data "$data" --sizes "$sizes"
for round in $(seq 1 "$rounds"); do
  step native "$native/attnlab_compare" attention "${common[@]}" --threads 1,2
  for flavour in "${wasm_flavours[@]}"; do
    threads=1; [[ $flavour == threads ]] && threads=1,2
    step "wasm-$flavour" node "$results/wasm/$flavour/attnlab_compare.js" attention "${common[@]}" --threads $threads
  done
  step embind node "$here/attnlab_wasm_bench.mjs" "${common[@]}"
  step pytorch "${torch_env[@]}" "$python" "$here/torch_bench.py" attention "${common[@]}" --threads 1,2
  step ort-1 node "$here/ort_bench.mjs" "${common[@]}" --threads 1
  step ort-2 node "$here/ort_bench.mjs" "${common[@]}" --threads 2
  # tfjs-backend-wasm turns multithreading off under Node: one thread only.
  step tfjs node "$here/tfjs_bench.mjs" "${common[@]}" --threads 1
  step native-train "$native/attnlab_compare" train --threads 1,2 --seconds "$seconds"
  [[ " ${wasm_flavours[*]} " == *" threads "* ]] &&
    step wasm-threads-train node "$results/wasm/threads/attnlab_compare.js" train --threads 1,2 --seconds "$seconds"
  step pytorch-train "${torch_train_env[@]}" "$python" "$here/torch_bench.py" train --threads 1,2 --seconds "$seconds"
  step native-train-tang "$native/attnlab_compare" train-tang --threads 1,2 --seconds "$seconds"
  if [[ " ${wasm_flavours[*]} " == *" threads "* ]]; then
    step wasm-threads-train-tang node "$results/wasm/threads/attnlab_compare.js" train-tang --threads 1,2 --seconds "$seconds"
  fi
  step pytorch-train-tang "${torch_train_env[@]}" "$python" "$here/torch_bench.py" train-tang --threads 1,2 --seconds "$seconds"
  step native-matmul "$native/attnlab_compare" matmul --sizes 256,512,1024 --threads 1,2 --seconds "$seconds"
  step pytorch-matmul "${torch_env[@]}" "$python" "$here/torch_bench.py" matmul --sizes 256,512,1024 --threads 1,2 --seconds "$seconds"
  step native-lstm "$native/attnlab_compare" lstm --sizes 64,128,256,512 --threads 1,2 --seconds "$seconds"
  step pytorch-lstm "${torch_env[@]}" "$python" "$here/torch_bench.py" lstm --sizes 64,128,256,512 --threads 1,2 --seconds "$seconds"
done

# ---- report -----------------------------------------------------------------------------------
tmp=$(mktemp) && sed "s|\"date\"|\"load_end\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"date\"|" "$raw/machine.json" >"$tmp" && mv "$tmp" "$raw/machine.json"
echo
node "$here/report.mjs" "$raw"
