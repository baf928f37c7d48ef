// Run-time choice of the kernel table (kernels/isa.hpp, src/kernels/kernel_table.hpp).
//
// Candidates, best first: AVX-512 (F + DQ), then AVX2 + FMA (each only if its arch_<isa>.cpp
// was compiled with those flags and the CPU and OS support them: __builtin_cpu_supports checks
// CPUID and that the OS saves the ZMM / YMM registers), SSE2 (every x86-64 CPU), the portable
// table of non-x86 builds, then the WebAssembly kernels: the only table of the WebAssembly SIMD
// build, and natively (on CPUs with SSE4.1) never the first choice, only asked for by name.
#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnlab/core/error.hpp"
#include "attnlab/kernels/isa.hpp"
#include "kernel_table.hpp"
#include "simd.hpp"

namespace attnlab {
namespace kernels {
namespace {

bool cpu_runs_avx512() {
#if ATTNLAB_X86_DISPATCH && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#else
    return false;
#endif
}

bool cpu_runs_avx2_fma() {
#if ATTNLAB_X86_DISPATCH && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

bool cpu_runs_sse41() {
#if ATTNLAB_X86_DISPATCH && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.1");
#else
    return true;  // the WebAssembly build: its table exists only where simd128 does
#endif
}

// Tables usable on this CPU, best first.
const std::vector<const KernelTable*>& usable_tables() {
    static const std::vector<const KernelTable*> tables = [] {
        std::vector<const KernelTable*> out;
        if (const KernelTable* t = table_avx512(); t && cpu_runs_avx512()) out.push_back(t);
        if (const KernelTable* t = table_avx2(); t && cpu_runs_avx2_fma()) out.push_back(t);
        if (const KernelTable* t = table_sse2()) out.push_back(t);
        if (const KernelTable* t = table_portable()) out.push_back(t);
        if (const KernelTable* t = table_wasm(); t && cpu_runs_sse41()) out.push_back(t);
        return out;
    }();
    return tables;
}

const KernelTable* find_table(const std::string& name) {
    for (const KernelTable* t : usable_tables()) {
        if (name == t->isa) return t;
    }
    return nullptr;
}

[[noreturn]] void unknown_isa(const std::string& name, const char* where) {
    std::string valid;
    for (const KernelTable* t : usable_tables()) valid += (valid.empty() ? "" : ", ") + std::string(t->isa);
    fail<ConfigError>(where, ": instruction set '", name, "' is not available here; valid: ", valid);
}

const KernelTable* initial_table() {
    if (const char* env = std::getenv("ATTNLAB_ISA"); env && *env) {
        if (const KernelTable* t = find_table(env)) return t;
        unknown_isa(env, "ATTNLAB_ISA");
    }
    return usable_tables().front();
}

std::atomic<const KernelTable*> g_table{nullptr};

}  // namespace

const KernelTable& table() {
    const KernelTable* t = g_table.load(std::memory_order_acquire);
    if (!t) {
        static const KernelTable* const first = initial_table();  // thread-safe once
        const KernelTable* expected = nullptr;
        g_table.compare_exchange_strong(expected, first, std::memory_order_acq_rel);
        t = g_table.load(std::memory_order_acquire);
    }
    return *t;
}

std::string active_isa() { return table().isa; }

std::size_t active_simd_width() { return table().lanes; }

std::vector<std::string> available_isas() {
    std::vector<std::string> names;
    for (const KernelTable* t : usable_tables()) names.emplace_back(t->isa);
    return names;
}

float fma_peak_loop(std::size_t rounds) { return table().fma_peak(rounds); }

std::size_t fma_peak_flops_per_round() { return table().fma_peak_flops_per_round; }

void set_isa(const std::string& name) {
    const KernelTable* t = find_table(name);
    if (!t) unknown_isa(name, "set_isa");
    g_table.store(t, std::memory_order_release);
}

}  // namespace kernels
}  // namespace attnlab
