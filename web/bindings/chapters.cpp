// What the Chapters tab asks of the engine that no model class shows: the bytes a decoder's
// Transformer blocks keep for backward after one training forward (TransformerBlockCache::
// cache_bytes), with and without gradient checkpointing (Chen et al. 2016: a checkpointed block
// keeps only its input and recomputes the rest in backward).
//
//   lab.activationMemory({ dModel: 64, numHeads: 4, numLayers: 8, ffDim: 256, seqLen: 64, batch: 8,
//                          gradientCheckpointing: true, seed: 0 })
//     -> { blocks: [bytes of block 0, 1, ...], total: their sum }
//
// Every option but gradientCheckpointing and seed is required; sizes are checked by
// ModelConfig::validate (a ConfigError naming them reaches JavaScript as an Error).
#include <cstddef>
#include <cstdint>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/model/token/trunk.hpp"
#include "convert.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

constexpr std::size_t kVocab = 16;  // token ids 0..15: the cache does not depend on them

std::size_t required(const JsOptions& opt, const char* key) {
    if (!opt.has(key)) throw ValueError(std::string(opt.where()) + ": the option '" + key + "' is required");
    return opt.size(key, 0);
}

val activation_memory_unguarded(const val& options) {
    const JsOptions opt(options, {"dModel", "numHeads", "numLayers", "ffDim", "seqLen", "batch", "gradientCheckpointing", "seed"},
                        "activationMemory");
    ModelConfig config;
    config.vocab_size = kVocab;
    config.d_model = required(opt, "dModel");
    config.num_heads = required(opt, "numHeads");
    config.num_layers = required(opt, "numLayers");
    config.ff_dim = required(opt, "ffDim");
    const std::size_t T = required(opt, "seqLen"), B = required(opt, "batch");
    if (T == 0 || B == 0) {
        throw ValueError("activationMemory: seqLen and batch must be positive (got seqLen " + std::to_string(T) + ", batch " +
                         std::to_string(B) + ")");
    }
    config.max_len = T;
    config.gradient_checkpointing = opt.boolean("gradientCheckpointing", false);
    Rng rng(opt.size("seed", 0));
    const Trunk trunk(config, rng);  // validates config

    // tokens: (B, T) -> the training forward fills one cache per block.
    Index2 tokens = Index2::from_shape({B, T});
    for (std::size_t i = 0; i < tokens.size(); ++i) tokens.data()[i] = static_cast<std::int32_t>(i % kVocab);
    trunk.check_input(tokens, Mask2(), "activationMemory");
    TrunkCache cache;
    trunk.forward(tokens, Mask2(), /*causal=*/true, {}, cache, /*training=*/true);

    val blocks = val::array();
    double total = 0;
    for (const TransformerBlockCache& b : cache.blocks) {
        const double bytes = static_cast<double>(b.cache_bytes());
        blocks.call<void>("push", bytes);
        total += bytes;
    }
    val out = val::object();
    out.set("blocks", blocks);
    out.set("total", total);
    return out;
}

val activation_memory(val options) {
    return guarded("activationMemory", [&] { return activation_memory_unguarded(options); }, options);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_chapters) {
    emscripten::function("activationMemory", &activation_memory);
}

}  // namespace attnlab::web
