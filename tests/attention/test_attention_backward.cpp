// Gradient checks of MultiHeadAttention::backward (attention/multi_head_attention.hpp) over its
// variants: the models' backward rests on it, so every mask and head layout is checked here.
#include <gtest/gtest.h>

#include "attnlab/attention/multi_head_attention.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

struct AttentionCase {
    const char* name;
    std::size_t heads, kv_heads;
    bool causal, padding, rope, cross, scale;
    AttentionVariant variant = AttentionVariant::full;
};

std::ostream& operator<<(std::ostream& out, const AttentionCase& c) { return out << c.name; }

class AttentionBackward : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionBackward, MatchesFiniteDifferences) {
    const AttentionCase& tc = GetParam();
    const std::size_t batch = 2, t = 4, c = 8, s = tc.cross ? 5 : t, kv_dim = tc.cross ? 6 : c;
    MultiHeadAttentionConfig config;
    config.d_model = c;
    config.num_heads = tc.heads;
    config.num_kv_heads = tc.kv_heads;
    config.kv_dim = tc.cross ? kv_dim : 0;
    Rng rng(7);
    MultiHeadAttention mha(config, rng);
    for (auto& p : mha.parameters()) {  // non-zero biases
        Rng r(p.size() + 1);
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.1f * r.normal();
    }
    Tensor3 x = test::random_normal<Tensor3>({batch, t, c}, 1);
    Tensor3 memory = test::random_normal<Tensor3>({batch, s, kv_dim}, 2);
    const Tensor3 w = test::random_normal<Tensor3>({batch, t, c}, 3);
    AttentionOptions options;
    options.mask.causal = tc.causal;
    if (tc.padding) options.mask.key_padding = padding_mask_from_lengths({s, s - 2}, s);
    options.rope = tc.rope;
    options.position_offset = tc.rope ? 3 : 0;
    options.scale.enabled = tc.scale;
    options.variant = tc.variant;
    const Tensor3* mem = tc.cross ? &memory : nullptr;

    MultiHeadAttentionCache cache;
    mha.forward(x, mem, options, nullptr, &cache);
    MultiHeadAttentionGrad grads(mha);
    Tensor3 dx, dmemory;
    mha.backward(w, cache, options, grads, dx, tc.cross ? &dmemory : nullptr);

    auto loss = [&] { return testutil::dot(mha.forward(x, mem, options), w); };
    // Float32 forward reduced in double; h = 1e-2 balances cancellation (~1e-5) and O(h²) curvature.
    const testutil::GradCheckOptions tol{1e-2, 2e-3, 1e-2};
    EXPECT_TRUE(testutil::check_gradient("mha dx", loss, x.data(), dx.data(), x.size(), tol));
    if (tc.cross) {
        EXPECT_TRUE(testutil::check_gradient("mha dmemory", loss, memory.data(), dmemory.data(), memory.size(), tol));
    }
    auto params = mha.parameters();
    auto views = grads.views();
    ASSERT_EQ(params.size(), views.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        ASSERT_EQ(params[i].name, views[i].name);
        EXPECT_TRUE(testutil::check_gradient("mha d" + params[i].name, loss, params[i].data, views[i].data,
                                             params[i].size(), tol));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, AttentionBackward,
    ::testing::Values(AttentionCase{"self", 2, 0, false, false, false, false, true},
                      AttentionCase{"causal_padding", 2, 0, true, true, false, false, true},
                      AttentionCase{"gqa", 4, 2, true, false, false, false, true},
                      AttentionCase{"mqa_padding", 4, 1, false, true, false, false, true},
                      AttentionCase{"rope_causal", 2, 0, true, false, true, false, true},
                      AttentionCase{"cross_padding", 2, 0, false, true, false, true, true},
                      AttentionCase{"cross_gqa_rope", 4, 2, false, false, true, true, true},
                      AttentionCase{"unscaled", 2, 0, true, false, false, false, false},
                      // linear attention's fast path (no observer): running sums, φ after RoPE
                      AttentionCase{"linear", 2, 0, false, false, false, false, true, AttentionVariant::linear},
                      AttentionCase{"linear_causal_padding", 2, 0, true, true, false, false, true,
                                    AttentionVariant::linear},
                      AttentionCase{"linear_gqa_rope_causal", 4, 2, true, false, true, false, true,
                                    AttentionVariant::linear},
                      AttentionCase{"linear_mqa_padding", 4, 1, false, true, false, false, true,
                                    AttentionVariant::linear},
                      AttentionCase{"linear_cross_padding", 2, 0, false, true, false, true, true,
                                    AttentionVariant::linear},
                      AttentionCase{"linear_cross_gqa_rope", 4, 2, false, false, true, true, true,
                                    AttentionVariant::linear}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace attnlab
