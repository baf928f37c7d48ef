// The models the interp/ tests read: small engine decoders (pre- and post-LN) with sharpened
// attention, and the tiny GPT-2 checkpoint of tests/reference/fixtures/gpt2/hf_f32.
#pragma once

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/io/hf_gpt2.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace attnlab::test {

// A decoder of 2 layers and 2 heads (C = 16) whose query weights are scaled up, so its maps are
// far from uniform.
inline DecoderLM tiny_decoder(NormPlacement norm = NormPlacement::pre, std::uint64_t seed = 3,
                              PositionalKind positional = PositionalKind::learned) {
    ModelConfig config;
    config.kind = ModelKind::decoder;
    config.vocab_size = 13;
    config.d_model = 16;
    config.num_heads = 2;
    config.num_layers = 2;
    config.ff_dim = 32;
    config.max_len = 32;
    config.norm = norm;
    config.positional = positional;
    Rng rng(seed);
    DecoderLM lm(config, rng);
    for (auto& block : lm.trunk.blocks) block.attn.q_proj.weight *= 4.0f;
    return lm;
}

inline std::vector<std::uint8_t> fixture_bytes(const std::string& relative) {
    std::ifstream in(std::string(ATTNLAB_FIXTURE_DIR) + "/" + relative, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// 2 layers, 2 heads (D = 16), V = 96, 24 learned positions, pre-LN.
inline DecoderLM gpt2_fixture() {
    const std::vector<std::uint8_t> json = fixture_bytes("gpt2/hf_f32/config.json");
    const std::string config(json.begin(), json.end());
    return io::load_hf_gpt2(fixture_bytes("gpt2/hf_f32/model.safetensors"), &config);
}

}  // namespace attnlab::test
