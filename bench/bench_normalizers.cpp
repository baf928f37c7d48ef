// The normalisers on the flash (tiled) path: softmax (online softmax), sigmoid and relu
// (attention/normalizer.hpp: one pointwise pass per tile, no running max or sum), H = 4 heads,
// D = 32, batch 1, no mask and causal. Run:
//   build/bench/attnlab_bench --benchmark_filter=VariantNormalizer
//
// Arguments (normalizer, causal, n, threads); normalizer 0 softmax, 1 sigmoid, 2 relu. The
// forward reports GFLOPS over the visible pairs (4·H·D per pair); the backward case times one
// forward with its cache plus the backward, as a training step runs them.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "attnlab/attention/normalizer.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "bench_support.hpp"

namespace {

constexpr std::size_t kHeads = 4, kHeadDim = 32;
constexpr attnlab::Normalizer kNormalizers[] = {attnlab::Normalizer::softmax, attnlab::Normalizer::sigmoid,
                                                attnlab::Normalizer::relu};

attnlab::Tensor4 random4(std::size_t n, std::uint64_t seed) {
    attnlab::Tensor4 t = attnlab::Tensor4::from_shape({1, kHeads, n, kHeadDim});
    attnlab::Rng rng(seed);
    for (auto& x : t) x = rng.normal();
    return t;
}

// One case's arguments (normalizer, causal, n, threads) and inputs q, k, v: (1, H, n, D); the
// thread count is set and the label written.
struct Case {
    attnlab::Normalizer normalizer;
    attnlab::AttentionMask mask;
    std::size_t n, threads;
    attnlab::Tensor4 q, k, v;
    explicit Case(benchmark::State& state)
        : normalizer(kNormalizers[state.range(0)]), n(static_cast<std::size_t>(state.range(2))),
          threads(static_cast<std::size_t>(state.range(3))), q(random4(n, 1)), k(random4(n, 2)), v(random4(n, 3)) {
        mask.causal = state.range(1) != 0;
        attnlab::set_num_threads(threads);
        state.SetLabel(std::string(attnlab::normalizer_name(normalizer)) + (mask.causal ? " causal" : " full"));
    }
};

void BM_VariantNormalizerForward(benchmark::State& state) {
    const Case c(state);
    const double pairs = c.mask.causal ? double(c.n) * double(c.n + 1) / 2.0 : double(c.n) * double(c.n);
    const bench::Stopwatch watch;
    for (auto _ : state) {
        attnlab::Tensor4 out = attnlab::scaled_dot_product_attention(c.q, c.k, c.v, c.mask, {}, nullptr, nullptr,
                                                                     attnlab::SdpBackend::flash, c.normalizer);
        benchmark::DoNotOptimize(out.data());
    }
    bench::report_flops(state, 4.0 * kHeads * kHeadDim * pairs, watch, c.threads);
}

void BM_VariantNormalizerTrainingStep(benchmark::State& state) {
    const Case c(state);
    const attnlab::Tensor4 dctx = random4(c.n, 4);
    attnlab::AttentionCache cache = attnlab::AttentionCache::without_weights();
    attnlab::Tensor4 context, dq, dk, dv;
    for (auto _ : state) {
        attnlab::scaled_dot_product_attention(c.q, c.k, c.v, c.mask, {}, nullptr, &cache, attnlab::SdpBackend::flash,
                                              context, c.normalizer);
        attnlab::scaled_dot_product_attention_backward(dctx, c.q, c.k, c.v, cache, {}, dq, dk, dv);
        benchmark::DoNotOptimize(dq.data());
    }
}

BENCHMARK(BM_VariantNormalizerForward)
    ->ArgNames({"normalizer", "causal", "n", "threads"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {2048}, {1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_VariantNormalizerTrainingStep)
    ->ArgNames({"normalizer", "causal", "n", "threads"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {2048}, {1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
