// Throughput of the hot kernels. Run: build/bench/attnlab_bench --benchmark_filter=Matmul
//
// Matmul arguments are (size, threads): an N x N x N product on `threads` pool threads,
// reported as GFLOP/s (2·N³ flops per product) in the "FLOPS" counter.
#include <cstddef>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"

namespace {

std::vector<float> random_vector(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

using Kernel = void (*)(const float*, std::size_t, const float*, std::size_t, float*, std::size_t, std::size_t,
                        std::size_t, std::size_t, attnlab::Accumulate);

// Square product a (N, N) · op(b) (N, N) -> c (N, N); all variants take the same storage here.
void run_matmul(benchmark::State& state, Kernel kernel) {
    const auto n = static_cast<std::size_t>(state.range(0));
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    const std::vector<float> a = random_vector(n * n, 1), b = random_vector(n * n, 2);
    std::vector<float> c(n * n);
    for (auto _ : state) {
        kernel(a.data(), n, b.data(), n, c.data(), n, n, n, n, attnlab::Accumulate::no);
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    state.counters["FLOPS"] =
        benchmark::Counter(2.0 * double(n) * double(n) * double(n), benchmark::Counter::kIsIterationInvariantRate,
                           benchmark::Counter::kIs1000);
}

void BM_MatmulNN(benchmark::State& state) { run_matmul(state, attnlab::kernels::matmul_nn); }
void BM_MatmulNT(benchmark::State& state) { run_matmul(state, attnlab::kernels::matmul_nt); }
void BM_MatmulTN(benchmark::State& state) { run_matmul(state, attnlab::kernels::matmul_tn); }

void matmul_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"n", "threads"});
    for (int n : {64, 256, 512}) {
        for (int threads : {1, 2}) b->Args({n, threads});
    }
    b->UseRealTime();  // CPU time of the calling thread undercounts multi-threaded work
}

BENCHMARK(BM_MatmulNN)->Apply(matmul_args);
BENCHMARK(BM_MatmulNT)->Apply(matmul_args);
BENCHMARK(BM_MatmulTN)->Apply(matmul_args);

// Row softmax of a (rows, rows) score matrix, in place. Softmax output is valid input again
// and costs the same, so the matrix is not refilled between iterations.
void BM_SoftmaxRows(benchmark::State& state) {
    const auto rows = static_cast<std::size_t>(state.range(0));
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    std::vector<float> x = random_vector(rows * rows, 3);
    for (auto _ : state) {
        attnlab::kernels::softmax_rows(x.data(), rows, rows, rows);
        benchmark::DoNotOptimize(x.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * rows * rows));
}
BENCHMARK(BM_SoftmaxRows)->ArgNames({"rows", "threads"})->Args({1024, 1})->Args({1024, 2})->UseRealTime();

}  // namespace
