// The Heads tab's detector scores (interp/detectors.hpp) for every head of a 4-layer decoder on a
// 256-token sequence, against the model's own forward pass on the same tokens. Run:
//   build/bench/attnlab_bench --benchmark_filter=HeadScores
//
// The model: 4 layers of 4 heads, d_model 128, ff 512, vocabulary 2304 (the shipped brown
// model's), learned positions, seeded weights; the tokens are interp::random_repeat(128): 128
// random ids, then the same 128 again. Arguments (what, threads):
//   0 forward         DecoderLM::forward, evaluation mode: logits (1, 256, V)
//   1 maps            DecoderLM::attention_maps: every head's weights (L, H, T, T)
//   2 detect_heads    interp::detect_heads(model, tokens): maps, then every pattern's score
//   3 score maps      interp::detect_heads(maps, tokens) on maps already computed: the scoring alone
// The ratio of 2 to 0 is what the Heads tab's gallery costs in forward passes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/interp/detectors.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace {

constexpr std::size_t kTokens = 256;

attnlab::DecoderLM bench_decoder() {
    attnlab::ModelConfig config;
    config.kind = attnlab::ModelKind::decoder;
    config.vocab_size = 2304;
    config.d_model = 128;
    config.num_heads = 4;
    config.num_layers = 4;
    config.ff_dim = 512;
    config.max_len = kTokens;
    attnlab::Rng rng(1);
    attnlab::DecoderLM lm(config, rng);
    lm.eval();
    return lm;
}

const char* what_name(long what) {
    switch (what) {
        case 0: return "forward";
        case 1: return "attention_maps";
        case 2: return "detect_heads";
        default: return "score_maps";
    }
}

void BM_HeadScores(benchmark::State& state) {
    const long what = state.range(0);
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    attnlab::DecoderLM lm = bench_decoder();
    const std::vector<std::int32_t> tokens = attnlab::interp::random_repeat(kTokens / 2, lm.config().vocab_size, 1);
    attnlab::Index2 ids = attnlab::Index2::from_shape({1, kTokens});
    std::copy(tokens.begin(), tokens.end(), ids.begin());
    const attnlab::Tensor4 maps = lm.attention_maps(ids);
    for (auto _ : state) {
        if (what == 0) {
            attnlab::Tensor3 logits = lm.forward(ids);
            benchmark::DoNotOptimize(logits.data());
        } else if (what == 1) {
            attnlab::Tensor4 m = lm.attention_maps(ids);
            benchmark::DoNotOptimize(m.data());
        } else {
            const auto scores = what == 2 ? attnlab::interp::detect_heads(lm, tokens) : attnlab::interp::detect_heads(maps, tokens);
            benchmark::DoNotOptimize(scores.data());
        }
    }
    state.SetLabel(what_name(what));
}

BENCHMARK(BM_HeadScores)
    ->ArgNames({"what", "threads"})
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
