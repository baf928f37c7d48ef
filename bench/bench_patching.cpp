// One activation-patching table (interp/patching.hpp) on a decoder of the shipped `brown` model's
// shape (4 layers of 4 heads, C = 128, F = 512, V = 2304, RoPE, pre-LN, tied), random weights:
// every head's output and every (layer, position) residual patched from a clean prompt into a
// corrupted one that differs in one token, beside one plain forward of the same prompt (the table
// costs 2 + L·H + L·T forwards). bench/wasm/patching.mjs times the same case in WebAssembly. Run:
//   build/bench/attnlab_bench --benchmark_filter=Patching
//
// Arguments (T, threads).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/interp/patching.hpp"
#include "attnlab/interp/run.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace {

attnlab::DecoderLM brown_shaped() {
    attnlab::ModelConfig c;
    c.kind = attnlab::ModelKind::decoder;
    c.vocab_size = 2304;
    c.max_len = 128;
    c.d_model = 128;
    c.num_heads = 4;
    c.num_layers = 4;
    c.ff_dim = 512;
    c.positional = attnlab::PositionalKind::rope;
    c.tie_weights = true;
    attnlab::Rng rng(1);
    return attnlab::DecoderLM(c, rng);
}

// The bench/wasm/patching.mjs prompts: ids (37 i + 5) mod V, the corrupted one differing at position T - 4.
std::vector<std::int32_t> prompt(std::size_t t, bool corrupted) {
    std::vector<std::int32_t> ids(t);
    for (std::size_t i = 0; i < t; ++i) ids[i] = static_cast<std::int32_t>((37 * i + 5) % 2304);
    if (corrupted) ids[t - 4] = 1882;
    return ids;
}

void BM_PatchingTable(benchmark::State& state) {
    const auto t = static_cast<std::size_t>(state.range(0));
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    const attnlab::DecoderLM model = brown_shaped();
    const auto clean = prompt(t, false), corrupted = prompt(t, true);
    for (auto _ : state) benchmark::DoNotOptimize(attnlab::interp::patch(model, clean, corrupted, 1882, 459));
    state.SetLabel("L=4 H=4 T=" + std::to_string(t) + ": " + std::to_string(2 + 16 + 4 * t) + " forwards");
}

void BM_PatchingOneForward(benchmark::State& state) {
    const auto t = static_cast<std::size_t>(state.range(0));
    attnlab::set_num_threads(static_cast<std::size_t>(state.range(1)));
    const attnlab::DecoderLM model = brown_shaped();
    const auto clean = prompt(t, false);
    for (auto _ : state) benchmark::DoNotOptimize(attnlab::interp::run(model, clean));
}

}  // namespace

BENCHMARK(BM_PatchingTable)->Args({20, 1})->Args({64, 1})->Args({20, 2})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PatchingOneForward)->Args({20, 1})->Args({64, 1})->Unit(benchmark::kMillisecond);
