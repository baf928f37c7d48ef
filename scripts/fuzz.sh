#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz in the ASan+UBSan build (build-asan/, shared with
# scripts/test.sh --sanitize), replays every committed input (the seed corpus and the kept
# crashes), then fuzzes each target for a bounded time. A crash fails the run; its input is
# copied to tests/fuzz/regressions/<target>/ so that, once fixed, it is replayed on every run.
#
#   scripts/fuzz.sh                 every target, 20 s each
#   scripts/fuzz.sh 60 checkpoint   one target, 60 s
#
# Per target it prints libFuzzer's last status line: execs (runs), cov (covered edges), ft
# (features) and corp (corpus entries found).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
targets=("$@")
(( ${#targets[@]} )) || targets=(safetensors checkpoint tasks cli_args hf_gpt2)

source scripts/sanitize_build.sh
configure_asan_build -DATTNLAB_BUILD_FUZZ=ON
cmake --build build-asan -j"$(nproc 2>/dev/null || echo 2)" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One target: replay its committed inputs, then fuzz it. Its report goes to build-asan/fuzz_<target>.out.
fuzz_one() {  # target
  local target=$1
  local binary=build-asan/tests/fuzz/fuzz_$target
  local seeds=tests/fuzz/corpus/$target
  local kept=tests/fuzz/regressions/$target
  mkdir -p "$kept"
  echo "== fuzz_$target: replaying $(ls "$seeds" | wc -l) seeds and $(ls "$kept" | wc -l) kept crashes"
  # -runs=0 with files: each input runs once; any crash fails here.
  if ! "$binary" -runs=0 "$seeds"/* $(ls -A "$kept" | sed "s|^|$kept/|") > "build-asan/fuzz_$target.replay.log" 2>&1; then
    tail -40 "build-asan/fuzz_$target.replay.log"
    echo "fuzz_$target: a committed input crashes (log: build-asan/fuzz_$target.replay.log)"
    return 1
  fi
  # New inputs go to a scratch corpus in build-asan/, seeded from the committed one.
  local work=build-asan/fuzz-corpus/$target
  local artifacts=build-asan/fuzz-artifacts/$target/
  mkdir -p "$work" "$artifacts"
  echo "== fuzz_$target: ${seconds} s"
  if "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -close_fd_mask=1 \
       -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "$seeds" > "build-asan/fuzz_$target.log" 2>&1; then
    grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "build-asan/fuzz_$target.log" | tail -1
    grep -E '^stat::number_of_executed_units' "build-asan/fuzz_$target.log" || true
  else
    tail -60 "build-asan/fuzz_$target.log"
    local crash
    for crash in "$artifacts"*; do
      [[ -e "$crash" ]] || continue
      cp "$crash" "$kept/"
      echo "fuzz_$target: crashing input kept as $kept/$(basename "$crash")"
    done
    return 1
  fi
}

# The targets run as many at a time as there are cores (each fuzzer is one process on one core);
# their reports are printed in the targets' order.
parallel=$(nproc 2>/dev/null || echo 2)
status=0
for (( i = 0; i < ${#targets[@]}; i += parallel )); do
  batch=("${targets[@]:i:parallel}")
  declare -A pid=()
  for target in "${batch[@]}"; do
    fuzz_one "$target" > "build-asan/fuzz_$target.out" 2>&1 &
    pid[$target]=$!
  done
  for target in "${batch[@]}"; do
    wait "${pid[$target]}" || status=1
    cat "build-asan/fuzz_$target.out"
  done
  unset pid
done
exit $status
