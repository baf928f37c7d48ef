// Module-level functions of the WebAssembly build, and its start-up settings.
//
//   lab.buildInfo();       // { version, simd, threads, flavour, poolSize, maxMemoryMB, maxTensorElements }
//   lab.setNumThreads(1);  // 1..poolSize (threads flavour), only 1 otherwise
//   lab.stageNames();      // every attention stage in canonical order (attnlab::stage_name)
//   lab.heapUsed();        // bytes malloc currently hands out (mallinfo().uordblks): leak checks
//   lab.stackUsed();       // bytes of the main WASM stack in use between calls: leak checks
//   lab._trapForTests();   // FOR TESTS ONLY: executes `unreachable`, a real WebAssembly trap
//
// _trapForTests exists only so that tests can check what happens after a trap (the module is
// unusable afterwards; the page's engine worker closes and the page starts a new one:
// tests/browser/engine_recovery.test.mjs). Nothing in the engine or the page calls it except the
// worker's test-only request 'test.trap' (web/src/engine/protocol.ts).
//
// Build facts come from compile definitions set by web/CMakeLists.txt: ATTNLAB_VERSION,
// ATTNLAB_WASM_FLAVOUR, ATTNLAB_WASM_POOL_SIZE, ATTNLAB_WASM_MAX_MEMORY_MB.
#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/stack.h>

#include "attnlab/attention/stage.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "convert.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

#ifdef __EMSCRIPTEN_PTHREADS__
// The pool of Workers is created at start-up with ATTNLAB_WASM_POOL_SIZE entries; a kernel call
// must never start more threads than that (a new Worker cannot start while the caller blocks).
constexpr std::size_t kMaxThreads = ATTNLAB_WASM_POOL_SIZE;
#else
constexpr std::size_t kMaxThreads = 1;
#endif
constexpr std::size_t kMaxMemoryBytes = std::size_t{ATTNLAB_WASM_MAX_MEMORY_MB} * 1024 * 1024;
// One tensor may take at most an eighth of the module's memory, so that a request that cannot
// fit throws ValueError up front instead of failing inside malloc.
constexpr std::size_t kMaxTensorElements = kMaxMemoryBytes / 8 / sizeof(float);

// Runs while the module starts (static initialisation, before any binding can be called):
// the Workers of the pthread pool are already loaded by then.
[[maybe_unused]] const bool g_initialised = [] {
    set_max_tensor_elements(kMaxTensorElements);
    const std::size_t hardware = std::max<std::size_t>(1, std::thread::hardware_concurrency());
    set_num_threads(std::min(hardware, kMaxThreads));
    return true;
}();

val build_info() {
    return guarded("buildInfo", [&] {
        val out = val::object();
        out.set("version", std::string(ATTNLAB_VERSION));
#ifdef __wasm_simd128__
        out.set("simd", true);
#else
        out.set("simd", false);
#endif
        out.set("threads", num_threads());
        out.set("flavour", std::string(ATTNLAB_WASM_FLAVOUR));
        out.set("poolSize", kMaxThreads);
        out.set("maxMemoryMB", ATTNLAB_WASM_MAX_MEMORY_MB);
        out.set("maxTensorElements", max_tensor_elements());
        return out;
    });
}

void set_threads(val n) {
    guarded("setNumThreads", [&] {
        const std::size_t count = size_from_js(n, "setNumThreads", "the thread count");
        if (count < 1 || count > kMaxThreads) {
            fail<ConfigError>("setNumThreads: the thread count must be in 1..", kMaxThreads, " for the '",
                              ATTNLAB_WASM_FLAVOUR, "' build, got ", count);
        }
        set_num_threads(count);
    }, n);
}

val all_stage_names() {
    return guarded("stageNames", [&] {
        std::vector<std::string> names;
        for (Stage s : all_stages()) names.emplace_back(stage_name(s));
        return strings_to_js(names);
    });
}

double heap_used() { return static_cast<double>(mallinfo().uordblks); }
double stack_used() { return static_cast<double>(emscripten_stack_get_base() - emscripten_stack_get_current()); }

// For tests only (see the top of this file): a genuine trap, not an exception, so the caller sees
// a WebAssembly.RuntimeError ("unreachable") exactly as it would for an engine bug.
[[noreturn]] void trap_for_tests() { __builtin_trap(); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_module) {
    emscripten::function("buildInfo", &build_info);
    emscripten::function("setNumThreads", &set_threads);
    emscripten::function("stageNames", &all_stage_names);
    emscripten::function("heapUsed", &heap_used);
    emscripten::function("stackUsed", &stack_used);
    emscripten::function("_trapForTests", &trap_for_tests);
}

}  // namespace attnlab::web
