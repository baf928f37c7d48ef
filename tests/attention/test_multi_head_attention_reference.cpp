// MultiHeadAttention against PyTorch golden fixtures (tests/reference/make_fixtures.py):
// torch.nn.MultiheadAttention(batch_first=True, need_weights=True, average_attn_weights=False)
// for the MHA cases, and a plain-torch reimplementation for GQA, MQA and RoPE.
// Outputs and per-head weights must match to 1e-5 absolute.
#include <gtest/gtest.h>
#include <xtensor/xview.hpp>

#include "attnlab/attention/multi_head_attention.hpp"
#include "support/fixtures.hpp"

namespace attnlab {
namespace {

constexpr double kAtol = 1e-5;

struct Loaded {
    MultiHeadAttention mha;
    AttentionOptions options;
};

Loaded load_layer(const test::Fixture& fx, std::size_t d_model, std::size_t kv_dim) {
    MultiHeadAttentionConfig config;
    config.d_model = d_model;
    config.num_heads = static_cast<std::size_t>(fx.meta_int("num_heads"));
    config.num_kv_heads = static_cast<std::size_t>(fx.meta_int("num_kv_heads"));
    config.bias = fx.meta_bool("bias");
    config.kv_dim = kv_dim;
    Rng rng(0);
    Loaded out{MultiHeadAttention(config, rng), {}};
    auto params = out.mha.parameters();
    for (const auto& p : params) {
        if (p.shape.size() == 2) {
            const Tensor2 t = fx.tensor<2>(p.name);
            assign_parameter(params, p.name, {t.shape(0), t.shape(1)}, t.data(), "fixture");
        } else {
            const Tensor1 t = fx.tensor<1>(p.name);
            assign_parameter(params, p.name, {t.shape(0)}, t.data(), "fixture");
        }
    }
    out.options.mask.causal = fx.meta_bool("causal");
    out.options.rope = fx.meta_string("positional") == "rope";
    out.options.rope_base = fx.meta_double("rope_base");
    if (fx.has("key_padding_mask")) out.options.mask.key_padding = fx.mask<2>("key_padding_mask");
    if (fx.has("attn_mask")) out.options.mask.explicit_mask = fx.mask<2>("attn_mask");
    return out;
}

// Runs the batched fixture `name` and compares output, per-head weights and (if stored) q_rot/k_rot.
void check_batched(const std::string& name) {
    SCOPED_TRACE(name);
    const test::Fixture fx = test::load_fixture(name);
    const Tensor3 x = fx.tensor<3>("x");
    Tensor3 memory;
    if (fx.has("memory")) memory = fx.tensor<3>("memory");
    const std::size_t kv_dim = fx.has("memory") ? memory.shape(2) : 0;
    Loaded layer = load_layer(fx, x.shape(2), kv_dim);  // a missing tensor fails the test
    TraceRecorder trace;
    const Tensor3 y = layer.mha.forward(x, fx.has("memory") ? &memory : nullptr, layer.options, &trace);
    EXPECT_TRUE(test::all_close(y, fx.tensor<3>("output"), kAtol));

    const Tensor4 weights = fx.tensor<4>("weights");  // (B, H, T, S)
    for (std::size_t b = 0; b < weights.shape(0); ++b)
        for (std::size_t h = 0; h < weights.shape(1); ++h) {
            const Tensor2 expected = xt::view(weights, b, h, xt::all(), xt::all());
            EXPECT_TRUE(test::all_close(trace.get(Stage::weights, b, h), expected, kAtol)) << "batch " << b << " head " << h;
        }
    for (auto [stage, key] : {std::pair{Stage::q_rot, "q_rot"}, std::pair{Stage::k_rot, "k_rot"}}) {
        if (!fx.has(key)) continue;
        const Tensor4 rot = fx.tensor<4>(key);
        for (std::size_t b = 0; b < rot.shape(0); ++b)
            for (std::size_t h = 0; h < rot.shape(1); ++h) {
                const Tensor2 expected = xt::view(rot, b, h, xt::all(), xt::all());
                EXPECT_TRUE(test::all_close(trace.get(stage, b, h), expected, kAtol)) << key << " " << b << " " << h;
            }
    }
}

TEST(MultiHeadAttentionReference, Basic) { check_batched("mha_basic"); }
TEST(MultiHeadAttentionReference, OddHeadWidthWithCausalMask) { check_batched("mha_odd_width"); }
TEST(MultiHeadAttentionReference, KeyPaddingCombinedWithCausal) { check_batched("mha_padding_causal"); }
TEST(MultiHeadAttentionReference, ExplicitMaskCombinedWithPadding) { check_batched("mha_explicit_mask"); }
TEST(MultiHeadAttentionReference, CrossAttentionWithDifferentLengths) { check_batched("mha_cross"); }
TEST(MultiHeadAttentionReference, NoBias) { check_batched("mha_nobias"); }
TEST(MultiHeadAttentionReference, LargerWidthExercisesSimdBodyAndTails) { check_batched("mha_large"); }
TEST(MultiHeadAttentionReference, GroupedQueryTwoKvHeads) { check_batched("gqa_h4_kv2"); }
TEST(MultiHeadAttentionReference, MultiQueryOneKvHead) { check_batched("mqa_h4_kv1"); }
TEST(MultiHeadAttentionReference, GroupedQueryWithRope) { check_batched("gqa_rope"); }
TEST(MultiHeadAttentionReference, RopeMultiHead) { check_batched("rope_mha"); }

TEST(MultiHeadAttentionReference, Unbatched) {
    const test::Fixture fx = test::load_fixture("mha_unbatched");
    const Tensor2 x = fx.tensor<2>("x");
    Loaded layer = load_layer(fx, x.shape(1), 0);
    TraceRecorder trace;
    const Tensor2 y = layer.mha.forward(x, nullptr, layer.options, &trace);
    EXPECT_TRUE(test::all_close(y, fx.tensor<2>("output"), kAtol));
    const Tensor3 weights = fx.tensor<3>("weights");  // (H, T, S)
    for (std::size_t h = 0; h < weights.shape(0); ++h) {
        const Tensor2 expected = xt::view(weights, h, xt::all(), xt::all());
        EXPECT_TRUE(test::all_close(trace.get(Stage::weights, 0, h), expected, kAtol)) << "head " << h;
    }
}

}  // namespace
}  // namespace attnlab
