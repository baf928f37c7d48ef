// Throughput of the hot kernels against the machine's own FMA peak.
// Run: build/bench/attnlab_bench --benchmark_filter='FmaPeak|Matmul'
//
// Every kernel runs with each instruction set this CPU supports (kernels/isa.hpp; the `isa`
// argument indexes available_isas(), best first, and the label names it) and on 1 and 2 pool
// threads. Counters: GFLOPS (2·M·N·K flops per product) and peak_frac, the fraction of the FMA
// peak that BM_FmaPeak measures for the same ISA and thread count (a register-only loop of
// independent FMA chains), both per CPU second (see bench_support.hpp: the machine is shared, so
// wall-clock GFLOPS moves with other load; cpu_util shows how much of the wall time we ran).
#include <algorithm>
#include <cstddef>
#include <ctime>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/elementwise.hpp"
#include "attnlab/kernels/isa.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "bench_support.hpp"

namespace bench {

double Stopwatch::process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double fma_peak_gflops(std::size_t threads) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::size_t>, double> cache;
    const auto key = std::make_pair(attnlab::kernels::active_isa(), threads);
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    const std::size_t rounds = std::size_t{1} << 23;  // ~40 ms at 8 lanes
    double best = 0.0;
    for (int repeat = 0; repeat < 5; ++repeat) {
        std::vector<float> sink(threads);
        const Stopwatch watch;
        std::vector<std::thread> workers;
        for (std::size_t t = 1; t < threads; ++t) {
            workers.emplace_back([&sink, t] { sink[t] = attnlab::kernels::fma_peak_loop(rounds); });
        }
        sink[0] = attnlab::kernels::fma_peak_loop(rounds);
        for (auto& w : workers) w.join();
        const double cpu_per_thread = watch.cpu_seconds() / double(threads);
        benchmark::DoNotOptimize(sink.data());
        const double flops = double(rounds) * double(attnlab::kernels::fma_peak_flops_per_round()) * double(threads);
        best = std::max(best, flops / cpu_per_thread * 1e-9);
    }
    cache[key] = best;
    return best;
}

void report_flops(benchmark::State& state, double flops_per_iteration, const Stopwatch& watch, std::size_t threads) {
    const double flops = flops_per_iteration * double(state.iterations());
    const double wall = watch.seconds(), cpu = watch.cpu_seconds();
    const double gflops_cpu = flops / (cpu / double(threads)) * 1e-9;
    state.counters["GFLOPS"] = flops / wall * 1e-9;
    state.counters["GFLOPS_cpu"] = gflops_cpu;
    state.counters["peak_frac"] = gflops_cpu / fma_peak_gflops(threads);
    state.counters["cpu_util"] = cpu / (wall * double(threads));
    state.SetLabel(attnlab::kernels::active_isa());
}

}  // namespace bench

namespace {

std::vector<float> random_vector(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// Selects ISA number `index` of available_isas() for the run; false (and the run skipped) if
// this CPU has fewer.
bool use_isa(benchmark::State& state, long index) {
    const auto isas = attnlab::kernels::available_isas();
    if (static_cast<std::size_t>(index) >= isas.size()) {
        state.SkipWithError("ISA not available on this CPU");
        return false;
    }
    attnlab::kernels::set_isa(isas[static_cast<std::size_t>(index)]);
    return true;
}

void isa_args(benchmark::internal::Benchmark* b, const std::vector<long>& sizes) {
    const long isas = static_cast<long>(attnlab::kernels::available_isas().size());
    for (long n : sizes)
        for (long threads : {1, 2})
            for (long isa = 0; isa < isas; ++isa) b->Args({n, threads, isa});
    b->ArgNames({"n", "threads", "isa"})->UseRealTime();
}

// The FMA roofline itself: GFLOPS of the register-only loop (peak_frac is 1 by definition).
void BM_FmaPeak(benchmark::State& state) {
    const auto threads = static_cast<std::size_t>(state.range(0));
    if (!use_isa(state, state.range(1))) return;
    for (auto _ : state) benchmark::DoNotOptimize(bench::fma_peak_gflops(threads));
    state.counters["GFLOPS"] = bench::fma_peak_gflops(threads);
    state.SetLabel(attnlab::kernels::active_isa());
}
BENCHMARK(BM_FmaPeak)->ArgNames({"threads", "isa"})->ArgsProduct({{1, 2}, {0, 1}})->Iterations(1);

using Kernel = void (*)(const float*, std::size_t, const float*, std::size_t, float*, std::size_t, std::size_t,
                        std::size_t, std::size_t, attnlab::Accumulate, const float*, float*,
                        const attnlab::kernels::Epilogue&);

// Square product a (N, N) · op(b) (N, N) -> c (N, N); all variants take the same storage here.
void run_matmul(benchmark::State& state, Kernel kernel) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto threads = static_cast<std::size_t>(state.range(1));
    if (!use_isa(state, state.range(2))) return;
    attnlab::set_num_threads(threads);
    const std::vector<float> a = random_vector(n * n, 1), b = random_vector(n * n, 2);
    std::vector<float> c(n * n);
    const bench::Stopwatch watch;
    for (auto _ : state) {
        kernel(a.data(), n, b.data(), n, c.data(), n, n, n, n, attnlab::Accumulate::no, nullptr, nullptr, {});
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    bench::report_flops(state, 2.0 * double(n) * double(n) * double(n), watch, threads);
}

void BM_MatmulNN(benchmark::State& state) { run_matmul(state, attnlab::kernels::matmul_nn); }
void BM_MatmulNT(benchmark::State& state) { run_matmul(state, attnlab::kernels::matmul_nt); }
void BM_MatmulTN(benchmark::State& state) { run_matmul(state, attnlab::kernels::matmul_tn); }

BENCHMARK(BM_MatmulNN)->Apply([](auto* b) { isa_args(b, {64, 128, 256, 512, 1024}); });
BENCHMARK(BM_MatmulNT)->Apply([](auto* b) { isa_args(b, {256, 512}); });
BENCHMARK(BM_MatmulTN)->Apply([](auto* b) { isa_args(b, {256, 512}); });

// Row softmax of a (n, n) score matrix, in place. Softmax output is valid input again and
// costs the same, so the matrix is not refilled between iterations. Memory- and exp-bound:
// reported as entries per second, not FLOPs.
void BM_SoftmaxRows(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    if (!use_isa(state, state.range(2))) return;
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    std::vector<float> x = random_vector(n * n, 3);
    for (auto _ : state) {
        attnlab::kernels::softmax_rows(x.data(), n, n, n);
        benchmark::DoNotOptimize(x.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n * n));
    state.SetLabel(attnlab::kernels::active_isa());
}
BENCHMARK(BM_SoftmaxRows)->Apply([](auto* b) { isa_args(b, {1024}); });

// Layer norm forward over (n, 128) rows (the d_model-128 layer's activations).
void BM_LayerNormForward(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    constexpr std::size_t kCols = 128;
    if (!use_isa(state, state.range(2))) return;
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    const std::vector<float> x = random_vector(n * kCols, 4), gamma = random_vector(kCols, 5),
                             beta = random_vector(kCols, 6);
    std::vector<float> y(n * kCols), mean(n), rstd(n);
    for (auto _ : state) {
        attnlab::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(),
                                             n, kCols, 1e-5f);
        benchmark::DoNotOptimize(y.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n * kCols));
    state.SetLabel(attnlab::kernels::active_isa());
}
BENCHMARK(BM_LayerNormForward)->Apply([](auto* b) { isa_args(b, {4096}); });

// Exact (erf) GELU forward over n elements.
void BM_GeluForward(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    if (!use_isa(state, state.range(2))) return;
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    const std::vector<float> x = random_vector(n, 7);
    std::vector<float> y(n);
    for (auto _ : state) {
        attnlab::kernels::gelu_forward(x.data(), y.data(), n);
        benchmark::DoNotOptimize(y.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
    state.SetLabel(attnlab::kernels::active_isa());
}
BENCHMARK(BM_GeluForward)->Apply([](auto* b) { isa_args(b, {1 << 20}); });

}  // namespace
