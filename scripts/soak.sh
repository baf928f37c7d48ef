#!/usr/bin/env bash
# scripts/soak.sh: trains for a long time natively and in the WebAssembly build at the same time,
# samples memory at a fixed interval, and fails if memory grows after the warm-up beyond the
# bounds below. Not part of scripts/test.sh or CI (it runs for half an hour).
#
#   scripts/soak.sh                 30 minutes each, one sample a minute, 5 minutes of warm-up
#   scripts/soak.sh --minutes 60    longer; from 2 to 9 minutes the warm-up is 1 minute (a trend check)
#   scripts/soak.sh --quick         2 minutes, a sample every 10 s, 30 s of warm-up (checks the script)
#   scripts/soak.sh --only native   (or wasm) one half only
#
# Each half runs the same mix in one process (tests/soak/soak_native.cpp, tests/soak/soak_wasm.mjs):
# a long-lived model that keeps training, and each round a short-lived model that trains,
# evaluates, saves, loads, takes attention maps and a trace, generates, and is destroyed. Samples
# go to build-soak/native.csv and build-soak/wasm.csv, the verdict to build-soak/summary.txt.
# Needs the native build folder build/ (the attnlab_soak target is built here) and the threaded
# WebAssembly module web/wasm/threads/ (scripts/build_wasm.sh threads).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=30 quick=0 only=both threads=2
while (( $# )); do
  case "$1" in
    --minutes) minutes="${2:?--minutes needs a number}"; shift 2 ;;
    --quick) quick=1; shift ;;
    --only) only="${2:?--only needs native or wasm}"; shift 2 ;;
    --threads) threads="${2:?--threads needs a number}"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown argument '$1' (valid: --minutes N, --quick, --only native|wasm, --threads N)" >&2; exit 2 ;;
  esac
done
[[ "$only" == both || "$only" == native || "$only" == wasm ]] || { echo "soak.sh: --only must be native or wasm, got '$only'" >&2; exit 2; }
[[ "$minutes" =~ ^[0-9]+$ ]] || { echo "soak.sh: --minutes must be a whole number, got '$minutes'" >&2; exit 2; }
if (( quick )); then
  seconds=120 interval=10 warmup=30
else
  (( minutes >= 2 )) || { echo "soak.sh: --minutes must be at least 2 (1 of warm-up, 1 measured), got $minutes" >&2; exit 2; }
  seconds=$(( minutes * 60 )) interval=60 warmup=$(( minutes >= 10 ? 300 : 60 ))
fi

# The bounds: how much each measure may grow between the first sample after the warm-up and any
# later sample. The warm-up covers what is allocated once and kept on purpose: the trainers'
# buffers, the thread pool, the allocator's arena (native keep_freed_memory() keeps the peak
# heap mapped; the WebAssembly memory never shrinks), V8's code and heap sizing.
#   file        column           bound  why
bounds=(
  # The leak measure: bytes malloc has handed out and not had back (glibc mallinfo2, all arenas):
  # exact, as heapUsed below, so only allocator bookkeeping may move.
  "native.csv heap_used_mib   1"
  # The whole process, memory outside malloc included (thread stacks, mmaps), reported beside the
  # leak measure. The soak runs with one malloc arena (tests/soak/soak_native.cpp says why), so
  # RSS follows the peak of the heap in use, about 3 MiB for this mix, plus what lives outside
  # malloc: a few MiB of growth is already memory the process holds for good.
  "native.csv rss_mib         8"
  # malloc'd bytes inside the module: exact, so only allocator bookkeeping may move.
  "wasm.csv   heap_used_mib   1"
  # the module's memory grows only when malloc runs out; after the warm-up it must not.
  "wasm.csv   wasm_memory_mib 0"
  # a JS wrapper that is never deleted keeps an emval handle.
  "wasm.csv   emval_handles   0"
  # Node's whole process: V8's garbage collector decides when the JS heap shrinks.
  "wasm.csv   node_rss_mib    64"
)

out=build-soak
mkdir -p "$out"
halves=(native wasm)
[[ "$only" == both ]] || halves=("$only")
for h in "${halves[@]}"; do rm -f "$out/$h.csv" "$out/$h.log"; done
pids=()
if [[ "$only" != wasm ]]; then
  [[ -f build/build.ninja ]] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j2 --target attnlab_soak
  soak_bin=$(find build -name attnlab_soak -type f -perm -u+x | head -n 1)
  "$soak_bin" --seconds "$seconds" --interval "$interval" --threads "$threads" --csv "$out/native.csv" \
    > "$out/native.log" 2>&1 &
  pids+=($!)
fi
if [[ "$only" != native ]]; then
  [[ -f web/wasm/threads/attnlab.mjs ]] || { echo "soak.sh: web/wasm/threads/attnlab.mjs missing: run scripts/build_wasm.sh threads" >&2; exit 2; }
  node tests/soak/soak_wasm.mjs --seconds "$seconds" --interval "$interval" --threads "$threads" --csv "$out/wasm.csv" \
    > "$out/wasm.log" 2>&1 &
  pids+=($!)
fi
echo "soak.sh: running for $seconds s (samples every $interval s, warm-up $warmup s); logs in $out/"
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
if (( status )); then
  echo "soak.sh: a soak process failed (exit $status):" >&2
  for h in "${halves[@]}"; do cat "$out/$h.log" >&2; done
  exit 1
fi

# For one column of one CSV: start, the first sample at or after the warm-up, end, max, and the
# growth checked against the bound. Prints one line; exits 1 when over the bound.
check() {
  awk -F, -v col="$2" -v bound="$3" -v warmup="$warmup" -v file="$1" '
    NR == 1 { for (i = 1; i <= NF; i++) { if ($i == col) c = i; if ($i == "steps") s = i }
              if (!c) { print "soak.sh: no column " col " in " file; exit 2 } next }
    { v = $c + 0; if (NR == 2) start = v; end = v; steps = $s
      if (v > max || NR == 2) max = v
      if ($1 + 0 >= warmup) { if (!seen) { base = v; seen = 1; later = v } if (v > later) later = v } }
    END { if (!seen) { print "soak.sh: " file " has no sample after the warm-up"; exit 2 }
          growth = later - base
          printf "%-10s %-16s start %9.3f  after warm-up %9.3f  end %9.3f  max %9.3f  growth %8.3f (bound %s)  steps %s  %s\n",
                 file, col, start, base, end, max, growth, bound, steps, growth <= bound ? "ok" : "OVER"
          exit growth <= bound ? 0 : 1 }' "$out/$1"
}

{
  for b in "${bounds[@]}"; do
    read -r file col bound <<< "$b"
    [[ " ${halves[*]} " == *" ${file%.csv} "* ]] || continue
    check "$file" "$col" "$bound" || true  # the verdict is read from the summary below
  done
  for h in "${halves[@]}"; do cat "$out/$h.log"; done
} | tee "$out/summary.txt"
if grep -q -e ' OVER$' -e '^soak.sh: ' "$out/summary.txt"; then
  echo "soak.sh: FAILED: memory grew beyond a bound (see $out/summary.txt)" >&2
  exit 1
fi
echo "soak.sh: passed"
