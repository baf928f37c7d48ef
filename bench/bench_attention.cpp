// Attention forward throughput. Run: build/bench/attnlab_bench --benchmark_filter=Attention
//
// Arguments are (T, threads): multi-head self-attention on (B=1, T, C=128) with 4 heads of
// D = 32, causal mask off. Two views: the whole layer (projections included) and scaled
// dot-product attention alone on (1, 4, T, 32) Q/K/V. FLOPS counts 4·H·T²·D for Q·Kᵀ and
// weights·V (plus 8·T·C² for the four projections of the layer).
#include <cstddef>

#include <benchmark/benchmark.h>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/thread_pool.hpp"

namespace {

constexpr std::size_t kModel = 128, kHeads = 4, kHeadDim = kModel / kHeads;

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

void BM_AttentionLayerForward(benchmark::State& state) {
    const auto t = static_cast<std::size_t>(state.range(0));
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    attnlab::Rng rng(1);
    const attnlab::MultiHeadAttention mha({kModel, kHeads}, rng);
    const attnlab::Tensor3 x = random3(1, t, kModel, 2);
    for (auto _ : state) {
        attnlab::Tensor3 y = mha.forward(x);
        benchmark::DoNotOptimize(y.data());
    }
    const double flops = 4.0 * kHeads * double(t) * double(t) * kHeadDim + 8.0 * double(t) * kModel * kModel;
    state.counters["FLOPS"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

void BM_ScaledDotProductAttention(benchmark::State& state) {
    const auto t = static_cast<std::size_t>(state.range(0));
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    const attnlab::Tensor4 q = random4(1, kHeads, t, kHeadDim, 1), k = random4(1, kHeads, t, kHeadDim, 2),
                           v = random4(1, kHeads, t, kHeadDim, 3);
    for (auto _ : state) {
        attnlab::Tensor4 c = attnlab::scaled_dot_product_attention(q, k, v);
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["FLOPS"] = benchmark::Counter(4.0 * kHeads * double(t) * double(t) * kHeadDim,
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

void attention_args(benchmark::internal::Benchmark* b) {
    for (long t : {64, 256, 1024, 2048})
        for (long threads : {1, 2}) b->Args({t, threads});
    b->ArgNames({"T", "threads"})->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(BM_AttentionLayerForward)->Apply(attention_args);
BENCHMARK(BM_ScaledDotProductAttention)->Apply(attention_args);
