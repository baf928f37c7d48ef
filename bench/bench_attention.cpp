// Attention forward and backward, flash (tiled) against the recorded "math" path, and their
// peak memory. Run: build/bench/attnlab_bench --benchmark_filter=Attention
//
// Arguments (n, threads, path): path 0 = flash, 1 = recorded. Shapes:
//   Sdpa*:           scaled dot-product attention alone on Q/K/V (B=1, H=4, n, D=32), no mask;
//                    FLOPs 4·H·n²·D forward (Q·Kᵀ and weights·V), 8·H·n²·D backward (the four
//                    products of the math backward; flash recomputes two more, not counted).
//   AttentionLayer*: MultiHeadAttention with d_model 128, 4 heads, on (1, n, 128); FLOPs add
//                    8·n·C² for the four projections (x2 backward). The recorded path is forced
//                    with an observer that asks for the weights (and records nothing).
// Counters: GFLOPS and peak_frac (of the FMA peak the suite measures, bench_kernels.cpp).
// BM_AttentionMemory measures the peak heap of one forward at n = 4096, 8192, 16384 for both
// paths, for inference (no cache) and training (cache for the backward), and prints a table at
// exit; a recorded call over the tensor budget (the (B, H, T, S) matrix at 16384 is 4 GiB) is
// skipped and its analytical size reported instead.
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/isa.hpp"
#include "bench_support.hpp"

namespace {

constexpr std::size_t kModel = 128, kHeads = 4, kHeadDim = kModel / kHeads;

// The ISA chosen at start-up (best, or ATTNLAB_ISA): kernel benchmarks switch ISAs, these run
// with the default one.
const std::string kDefaultIsa = attnlab::kernels::active_isa();

attnlab::Tensor3 random3(std::size_t a, std::size_t b, std::size_t c, std::uint64_t seed) {
    attnlab::Tensor3 t = attnlab::Tensor3::from_shape({a, b, c});
    attnlab::Rng rng(seed);
    for (auto& x : t) x = rng.normal();
    return t;
}

attnlab::Tensor4 random4(std::size_t a, std::size_t b, std::size_t c, std::size_t d, std::uint64_t seed) {
    attnlab::Tensor4 t = attnlab::Tensor4::from_shape({a, b, c, d});
    attnlab::Rng rng(seed);
    for (auto& x : t) x = rng.normal();
    return t;
}

// Asks for the weights (which forces the recorded path) and keeps nothing.
class WantsWeights final : public attnlab::StageObserver {
public:
    bool wants(attnlab::Stage stage) const override { return stage == attnlab::Stage::weights; }
    void on_stage(const attnlab::StageView&) override {}
};

attnlab::SdpBackend backend_of(benchmark::State& state) {
    return state.range(2) == 0 ? attnlab::SdpBackend::flash : attnlab::SdpBackend::math;
}

std::size_t setup(benchmark::State& state) {
    attnlab::kernels::set_isa(kDefaultIsa);
    const auto threads = static_cast<std::size_t>(state.range(1));
    attnlab::set_num_threads(threads);
    return threads;
}

void BM_SdpaForward(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::size_t threads = setup(state);
    const attnlab::Tensor4 q = random4(1, kHeads, n, kHeadDim, 1), k = random4(1, kHeads, n, kHeadDim, 2),
                           v = random4(1, kHeads, n, kHeadDim, 3);
    const attnlab::SdpBackend backend = backend_of(state);
    const bench::Stopwatch watch;
    for (auto _ : state) {
        attnlab::Tensor4 c = attnlab::scaled_dot_product_attention(q, k, v, {}, {}, nullptr, nullptr, backend);
        benchmark::DoNotOptimize(c.data());
    }
    bench::report_flops(state, 4.0 * kHeads * double(n) * double(n) * kHeadDim, watch, threads);
}

void BM_SdpaBackward(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::size_t threads = setup(state);
    const attnlab::Tensor4 q = random4(1, kHeads, n, kHeadDim, 1), k = random4(1, kHeads, n, kHeadDim, 2),
                           v = random4(1, kHeads, n, kHeadDim, 3), dc = random4(1, kHeads, n, kHeadDim, 4);
    attnlab::AttentionCache cache;
    cache.need_weights = backend_of(state) == attnlab::SdpBackend::math;
    attnlab::scaled_dot_product_attention(q, k, v, {}, {}, nullptr, &cache);
    attnlab::Tensor4 dq, dk, dv;
    const bench::Stopwatch watch;
    for (auto _ : state) {
        attnlab::scaled_dot_product_attention_backward(dc, q, k, v, cache, {}, dq, dk, dv);
        benchmark::DoNotOptimize(dq.data());
    }
    bench::report_flops(state, 8.0 * kHeads * double(n) * double(n) * kHeadDim, watch, threads);
}

double layer_flops(std::size_t n) {
    return 4.0 * kHeads * double(n) * double(n) * kHeadDim + 8.0 * double(n) * kModel * kModel;
}

void BM_AttentionLayerForward(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::size_t threads = setup(state);
    attnlab::Rng rng(1);
    const attnlab::MultiHeadAttention mha({kModel, kHeads}, rng);
    const attnlab::Tensor3 x = random3(1, n, kModel, 2);
    WantsWeights recorded;
    attnlab::StageObserver* observer = backend_of(state) == attnlab::SdpBackend::math ? &recorded : nullptr;
    const bench::Stopwatch watch;
    for (auto _ : state) {
        attnlab::Tensor3 y = mha.forward(x, nullptr, {}, observer);
        benchmark::DoNotOptimize(y.data());
    }
    bench::report_flops(state, layer_flops(n), watch, threads);
}

// One training step of the layer: forward with the cache, then backward.
void BM_AttentionLayerTrainStep(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::size_t threads = setup(state);
    attnlab::Rng rng(1);
    const attnlab::MultiHeadAttention mha({kModel, kHeads}, rng);
    const attnlab::Tensor3 x = random3(1, n, kModel, 2), dout = random3(1, n, kModel, 3);
    attnlab::MultiHeadAttentionCache cache;
    cache.attention.need_weights = backend_of(state) == attnlab::SdpBackend::math;
    attnlab::MultiHeadAttentionGrad grads(mha);
    attnlab::Tensor3 dx;
    const bench::Stopwatch watch;
    for (auto _ : state) {
        mha.forward(x, nullptr, {}, nullptr, &cache);
        mha.backward(dout, cache, {}, grads, dx);
        benchmark::DoNotOptimize(dx.data());
    }
    bench::report_flops(state, 3.0 * layer_flops(n), watch, threads);
}

void speed_args(benchmark::internal::Benchmark* b) {
    for (long n : {64, 256, 1024, 2048, 4096})
        for (long threads : {1, 2})
            for (long path : {0, 1}) b->Args({n, threads, path});
    b->ArgNames({"n", "threads", "path"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_SdpaForward)->Apply(speed_args);
BENCHMARK(BM_SdpaBackward)->Apply(speed_args);
BENCHMARK(BM_AttentionLayerForward)->Apply(speed_args);
BENCHMARK(BM_AttentionLayerTrainStep)->Apply(speed_args);

// --- peak memory ---

struct MemoryRow {
    std::size_t n;
    const char* path;
    const char* mode;
    double measured_mib;  // < 0: not run (over the tensor budget)
    double analytic_mib;
};

// Collects the memory rows and prints them as one table when the program ends.
class MemoryTable {
public:
    void add(const MemoryRow& row) {
        std::lock_guard<std::mutex> lock(mutex_);
        rows_.push_back(row);
    }
    ~MemoryTable() {
        if (rows_.empty()) return;
        std::printf("\nPeak heap of one attention forward, Q/K/V (1, %zu, n, %zu), 1 thread (MiB; analytic = the\n"
                    "dominant buffer: recorded = (T, S) scores per thread or the (B, H, T, S) weights cached for\n"
                    "training; flash = one score tile, plus logsumexp and the context copy for training)\n",
                    kHeads, kHeadDim);
        std::printf("%8s  %-9s %-10s %14s %14s\n", "n", "path", "mode", "measured MiB", "analytic MiB");
        for (const MemoryRow& r : rows_) {
            char measured[32];
            if (r.measured_mib < 0) {
                std::snprintf(measured, sizeof measured, "%s", "over budget");
            } else {
                std::snprintf(measured, sizeof measured, "%.2f", r.measured_mib);
            }
            std::printf("%8zu  %-9s %-10s %14s %14.2f\n", r.n, r.path, r.mode, measured, r.analytic_mib);
        }
    }

private:
    std::mutex mutex_;
    std::vector<MemoryRow> rows_;
};
MemoryTable g_memory_table;

// Arguments (n, path, training): peak heap above the inputs during one forward call.
void BM_AttentionMemory(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const bool flash = state.range(1) == 0, training = state.range(2) == 1;
    attnlab::kernels::set_isa(kDefaultIsa);
    attnlab::set_num_threads(1);
    const attnlab::Tensor4 q = random4(1, kHeads, n, kHeadDim, 1), k = random4(1, kHeads, n, kHeadDim, 2),
                           v = random4(1, kHeads, n, kHeadDim, 3);
    const double mib = 1.0 / (1024.0 * 1024.0), scores = double(n) * double(n) * sizeof(float);
    const double output = double(kHeads) * double(n) * kHeadDim * sizeof(float);
    const double tile = double(attnlab::flash_query_tile()) * attnlab::kFlashKeyTile * sizeof(float);
    double analytic = flash ? tile + (training ? output + kHeads * double(n) * sizeof(float) : 0.0)
                            : (training ? kHeads * scores : scores);
    analytic += output;  // the returned context, both paths
    double measured = -1.0;
    for (auto _ : state) {
        attnlab::AttentionCache cache;
        cache.need_weights = !flash;
        const std::size_t before = bench::heap_bytes();
        bench::reset_heap_peak();
        try {
            attnlab::Tensor4 c = attnlab::scaled_dot_product_attention(
                q, k, v, {}, {}, nullptr, training ? &cache : nullptr,
                flash ? attnlab::SdpBackend::flash : attnlab::SdpBackend::math);
            benchmark::DoNotOptimize(c.data());
            measured = double(bench::heap_peak_bytes() - before) * mib;
        } catch (const attnlab::ValueError&) {
            measured = -1.0;  // over the tensor budget: reported analytically
        }
    }
    state.counters["peak_MiB"] = measured;
    state.counters["analytic_MiB"] = analytic * mib;
    g_memory_table.add({n, flash ? "flash" : "recorded", training ? "training" : "inference", measured,
                        analytic * mib});
}
BENCHMARK(BM_AttentionMemory)
    ->ArgsProduct({{4096, 8192, 16384}, {0, 1}, {0, 1}})
    ->ArgNames({"n", "path", "training"})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
