// Precision emulation's cost (core/numeric_format.hpp, AttentionOptions::precision): scaled
// dot-product attention forward at n = 1024, 2048 (B=1, H=4, D=32, no mask, 1 thread) in fp32,
// fp16 and bf16 on the path each runs — fp32 on the flash path, fp16 and bf16 on the recorded
// path (which rounds every stored stage) — plus fp32 forced onto the recorded path, so the
// rounding's own share shows, and the rounding of a span alone.
// Run: build/bench/attnlab_bench --benchmark_filter=Precision
//
// Arguments (n, variant): variant 0 = fp32 flash (the default path), 1 = fp32 recorded,
// 2 = fp16 recorded, 3 = bf16 recorded, 4 = fp16 recorded with the softmax 'same' and naive
// (the scalar emulated softmax). Counter: GFLOPS over 4·H·n²·D.
#include <cstddef>
#include <vector>

#include <benchmark/benchmark.h>

#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/numeric_format.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"

namespace {

constexpr std::size_t kHeads = 4, kHeadDim = 32;

attnlab::Tensor4 random4(std::size_t n, std::uint64_t seed) {
    attnlab::Tensor4 t = attnlab::Tensor4::from_shape({1, kHeads, n, kHeadDim});
    attnlab::Rng rng(seed);
    for (auto& x : t) x = rng.normal();
    return t;
}

void BM_PrecisionForward(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const int variant = static_cast<int>(state.range(1));
    attnlab::set_num_threads(1);
    const attnlab::Tensor4 q = random4(n, 1), k = random4(n, 2), v = random4(n, 3);
    attnlab::PrecisionOptions precision;
    if (variant == 2 || variant == 4) precision.format = attnlab::Precision::fp16;
    if (variant == 3) precision.format = attnlab::Precision::bf16;
    if (variant == 4) {
        precision.softmax = attnlab::SoftmaxPrecision::same;
        precision.stable_softmax = false;
    }
    const attnlab::SdpBackend backend = variant == 0 ? attnlab::SdpBackend::flash : attnlab::SdpBackend::math;
    attnlab::Tensor4 context;
    for (auto _ : state) {
        attnlab::scaled_dot_product_attention(q, k, v, {}, {}, nullptr, nullptr, backend, context, attnlab::Normalizer::softmax, precision);
        benchmark::DoNotOptimize(context.data());
    }
    const double flops = 4.0 * kHeads * double(n) * double(n) * kHeadDim;
    state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    static const char* const kLabels[] = {"fp32 flash", "fp32 recorded", "fp16 recorded", "bf16 recorded",
                                          "fp16 softmax same, naive"};
    state.SetLabel(kLabels[variant]);
}
BENCHMARK(BM_PrecisionForward)
    ->ArgsProduct({{1024, 2048}, {0, 1, 2, 3, 4}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// round_span over n floats: what each stored (T, S) stage costs in an emulated format.
void BM_PrecisionRoundSpan(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto format = state.range(1) == 0 ? attnlab::Precision::fp16 : attnlab::Precision::bf16;
    std::vector<float> data(n), work(n);
    attnlab::Rng rng(4);
    for (float& x : data) x = rng.normal();
    for (auto _ : state) {
        work = data;
        benchmark::DoNotOptimize(attnlab::round_span(format, work.data(), n));
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * sizeof(float)));
    state.SetLabel(attnlab::precision_name(format).data());
}
BENCHMARK(BM_PrecisionRoundSpan)->ArgsProduct({{1 << 20}, {0, 1}});

}  // namespace
