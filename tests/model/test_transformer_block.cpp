#include "attnlab/model/transformer_block.hpp"

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>

#include <gtest/gtest.h>

#include "attnlab/kernels/softmax.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

ModelConfig block_config(NormPlacement norm, float dropout = 0.0f, bool attention_only = false) {
    ModelConfig c;
    c.attention_only = attention_only;
    c.vocab_size = 5;
    c.d_model = 8;
    c.num_heads = 2;
    c.ff_dim = 12;
    c.norm = norm;
    c.dropout = dropout;
    return c;
}

// Perturbs every parameter so that LayerNorm gains/biases and projection biases are not trivial.
TransformerBlock make_block(const ModelConfig& config, std::uint64_t seed = 3) {
    Rng rng(seed);
    TransformerBlock block(config, rng);
    for (auto& p : block.parameters()) {
        Rng r(p.size() + seed);
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.1f * r.normal();
    }
    return block;
}

struct BlockCase {
    const char* name;
    NormPlacement norm;
    float dropout;
    bool causal, padding, rope;
    bool attention_only = false;
};

std::ostream& operator<<(std::ostream& out, const BlockCase& c) { return out << c.name; }

class BlockBackward : public ::testing::TestWithParam<BlockCase> {};

TEST_P(BlockBackward, MatchesFiniteDifferences) {
    const BlockCase& tc = GetParam();
    const TransformerBlock block = make_block(block_config(tc.norm, tc.dropout, tc.attention_only));
    TransformerBlock mutable_block = block;
    Tensor3 x = test::random_normal<Tensor3>({2, 4, 8}, 1);
    const Tensor3 w = test::random_normal<Tensor3>({2, 4, 8}, 2);
    AttentionOptions options;
    options.mask.causal = tc.causal;
    if (tc.padding) options.mask.key_padding = padding_mask_from_lengths({4, 2}, 4);
    options.rope = tc.rope;

    TransformerBlockCache cache;
    Rng rng(99);
    mutable_block.forward(x, options, nullptr, &cache, &rng);
    TransformerBlockGrad grads(mutable_block);
    Tensor3 dx;
    mutable_block.backward(w, cache, options, grads, dx);

    // Dropout masks are fixed by redrawing from the same seed at every evaluation.
    auto loss = [&] {
        Rng again(99);
        return testutil::dot(mutable_block.forward(x, options, nullptr, nullptr, &again), w);
    };
    // A whole block in float32 (two LayerNorms, softmax, GELU) reduced in double: h = 1e-2,
    // |error| <= 3e-3 + 2e-2·|numeric|.
    const testutil::GradCheckOptions tol{1e-2, 3e-3, 2e-2};
    EXPECT_TRUE(testutil::check_gradient(std::string(tc.name) + " dx", loss, x.data(), dx.data(), x.size(), tol));
    auto params = mutable_block.parameters();
    auto views = grads.views();
    ASSERT_EQ(params.size(), views.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        ASSERT_EQ(params[i].name, views[i].name);
        ASSERT_EQ(params[i].shape, views[i].shape);
        EXPECT_TRUE(testutil::check_gradient(std::string(tc.name) + " d" + params[i].name, loss, params[i].data,
                                             views[i].data, params[i].size(), tol));
    }
}

INSTANTIATE_TEST_SUITE_P(Variants, BlockBackward,
                         ::testing::Values(BlockCase{"pre_ln", NormPlacement::pre, 0.0f, false, false, false},
                                           BlockCase{"post_ln", NormPlacement::post, 0.0f, false, false, false},
                                           BlockCase{"pre_ln_causal_padding_dropout", NormPlacement::pre, 0.2f, true,
                                                     true, false},
                                           BlockCase{"post_ln_rope_padding_dropout", NormPlacement::post, 0.2f,
                                                     false, true, true},
                                           BlockCase{"pre_ln_attention_only_causal_dropout", NormPlacement::pre, 0.2f,
                                                     true, false, false, true},
                                           BlockCase{"post_ln_attention_only_rope", NormPlacement::post, 0.0f, true,
                                                     false, true, true}),
                         [](const auto& info) { return std::string(info.param.name); });

// With the attention and feed-forward outputs zeroed (W_O, b_O, W2, b2 = 0), a pre-LN block is
// the identity, so the whole upstream gradient must reach x through the two residual adds.
TEST(TransformerBlock, PreLnResidualsCarryTheGradientStraightThrough) {
    TransformerBlock block = make_block(block_config(NormPlacement::pre));
    for (auto* t : {&block.attn.out_proj.weight, &block.ffn.fc2.weight}) t->fill(0.0f);
    for (auto* t : {&block.attn.out_proj.bias, &block.ffn.fc2.bias}) t->fill(0.0f);
    const Tensor3 x = test::random_normal<Tensor3>({1, 3, 8}, 1);
    const Tensor3 dy = test::random_normal<Tensor3>({1, 3, 8}, 2);
    TransformerBlockCache cache;
    EXPECT_EQ(block.forward(x, {}, nullptr, &cache), x);
    TransformerBlockGrad grads(block);
    Tensor3 dx;
    block.backward(dy, cache, {}, grads, dx);
    EXPECT_EQ(dx, dy);
    // ...while the zeroed output projections still learn: their gradient is not zero.
    EXPECT_GT(xt::amax(xt::abs(grads.attn.out_proj.weight))(), 0.0f);
    EXPECT_GT(xt::amax(xt::abs(grads.ffn.fc2.weight))(), 0.0f);
}

TEST(TransformerBlock, GradientCheckpointingGivesBitIdenticalGradientsAndSavesMemory) {
    for (NormPlacement norm : {NormPlacement::pre, NormPlacement::post}) {
        ModelConfig config = block_config(norm, 0.1f);
        config.d_model = 32;
        config.num_heads = 4;
        config.ff_dim = 128;
        const TransformerBlock plain = make_block(config);
        TransformerBlock checkpointed = plain;
        checkpointed.set_gradient_checkpointing(true);
        const Tensor3 x = test::random_normal<Tensor3>({4, 32, 32}, 1);
        const Tensor3 dy = test::random_normal<Tensor3>({4, 32, 32}, 2);
        AttentionOptions options;
        options.mask.causal = true;

        TransformerBlockCache cache_plain, cache_ckpt;
        Rng rng_plain(5), rng_ckpt(5);
        const Tensor3 y_plain = plain.forward(x, options, nullptr, &cache_plain, &rng_plain);
        const Tensor3 y_ckpt = checkpointed.forward(x, options, nullptr, &cache_ckpt, &rng_ckpt);
        ASSERT_EQ(y_plain, y_ckpt);
        EXPECT_EQ(rng_plain.next_u64(), rng_ckpt.next_u64());  // both drew the same masks

        TransformerBlockGrad g_plain(plain), g_ckpt(checkpointed);
        Tensor3 dx_plain, dx_ckpt;
        plain.backward(dy, cache_plain, options, g_plain, dx_plain);
        checkpointed.backward(dy, cache_ckpt, options, g_ckpt, dx_ckpt);
        ASSERT_EQ(dx_plain.size(), dx_ckpt.size());
        EXPECT_EQ(std::memcmp(dx_plain.data(), dx_ckpt.data(), dx_plain.size() * sizeof(float)), 0);
        const auto a = g_plain.views(), b = g_ckpt.views();
        for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(std::memcmp(a[i].data, b[i].data, a[i].size() * sizeof(float)), 0) << a[i].name;
        }

        const std::size_t full = cache_plain.cache_bytes(), kept = cache_ckpt.cache_bytes();
        std::cout << "[ checkpointing ] " << norm_placement_name(norm) << "-LN block, B=4 T=32 C=32 H=4 F=128, dropout 0.1: "
                  << full << " bytes cached without, " << kept << " with (" << double(full) / double(kept)
                  << "x less)\n";
        EXPECT_LT(kept * 10, full);
    }
}

TEST(TransformerBlock, IncrementalForwardEqualsTheCausalForward) {
    for (int variant = 0; variant < 4; ++variant) {
        const NormPlacement norm = variant % 2 ? NormPlacement::post : NormPlacement::pre;
        const TransformerBlock block = make_block(block_config(norm, 0.0f, /*attention_only=*/variant >= 2));
        const Tensor3 x = test::random_normal<Tensor3>({2, 5, 8}, 1);
        AttentionOptions options;
        options.mask.causal = true;
        options.rope = true;
        const Tensor3 full = block.forward(x, options);
        KvCache kv;
        AttentionOptions incremental;
        incremental.rope = true;
        // Three rows, then one, then one: the pieces must line up with the full result.
        std::size_t row = 0;
        for (std::size_t n : {3u, 1u, 1u}) {
            Tensor3 part = Tensor3::from_shape({2, n, 8});
            for (std::size_t b = 0; b < 2; ++b)
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t c = 0; c < 8; ++c) part(b, i, c) = x(b, row + i, c);
            const Tensor3 y = block.forward_incremental(part, kv, incremental);
            for (std::size_t b = 0; b < 2; ++b)
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t c = 0; c < 8; ++c) EXPECT_NEAR(y(b, i, c), full(b, row + i, c), 1e-5);
            row += n;
        }
    }
}

TEST(TransformerBlock, ParameterNamesFollowPyTorch) {
    TransformerBlock block = make_block(block_config(NormPlacement::pre));
    const auto p = block.parameters("blocks.0.");
    std::vector<std::string> names;
    for (const auto& v : p) names.push_back(v.name);
    const std::vector<std::string> expected = {
        "blocks.0.ln1.weight",          "blocks.0.ln1.bias",          "blocks.0.attn.q_proj.weight",
        "blocks.0.attn.q_proj.bias",    "blocks.0.attn.k_proj.weight", "blocks.0.attn.k_proj.bias",
        "blocks.0.attn.v_proj.weight",  "blocks.0.attn.v_proj.bias",  "blocks.0.attn.out_proj.weight",
        "blocks.0.attn.out_proj.bias",  "blocks.0.ln2.weight",        "blocks.0.ln2.bias",
        "blocks.0.ffn.fc1.weight",      "blocks.0.ffn.fc1.bias",      "blocks.0.ffn.fc2.weight",
        "blocks.0.ffn.fc2.bias"};
    EXPECT_EQ(names, expected);
}

// attention_only: the block is y = x + attn(ln1(x)) (pre-LN), with no ln2 and no feed-forward
// parameters, and its parameter count says so.
TEST(TransformerBlock, AttentionOnlyHasNoFeedForwardAndEqualsItsResidualAttention) {
    TransformerBlock block = make_block(block_config(NormPlacement::pre, 0.0f, true));
    std::vector<std::string> names;
    for (const auto& v : block.parameters()) names.push_back(v.name);
    const std::vector<std::string> expected = {"ln1.weight",      "ln1.bias",        "attn.q_proj.weight",
                                               "attn.q_proj.bias", "attn.k_proj.weight", "attn.k_proj.bias",
                                               "attn.v_proj.weight", "attn.v_proj.bias", "attn.out_proj.weight",
                                               "attn.out_proj.bias"};
    EXPECT_EQ(names, expected);
    const Tensor3 x = test::random_normal<Tensor3>({2, 4, 8}, 5);
    AttentionOptions options;
    options.mask.causal = true;
    const Tensor3 y = block.forward(x, options);
    Tensor3 expected_y = block.attn.forward(block.ln1.forward(x), nullptr, options);
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y.data()[i], expected_y.data()[i] + x.data()[i], 1e-6);

    ModelConfig full = block_config(NormPlacement::pre);
    ModelConfig only = block_config(NormPlacement::pre, 0.0f, true);
    full.num_layers = only.num_layers = 2;
    const std::uint64_t feed_forward = 2 * 8 + (12 * 8 + 12) + (8 * 12 + 8);  // ln2, fc1, fc2
    EXPECT_EQ(full.parameter_count() - only.parameter_count(), 2 * feed_forward);
}

TEST(TransformerBlock, AttentionOnlyIsRefusedWhereThereAreNoTransformerBlocks) {
    ModelConfig c = block_config(NormPlacement::pre, 0.0f, true);
    c.architecture = Architecture::lstm;
    try {
        c.validate();
        FAIL() << "an lstm with attention_only was accepted";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("attention_only"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace attnlab
