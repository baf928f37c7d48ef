#include "attnlab/attention/scaled_dot_product.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "attnlab/core/thread_pool.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

// Plain double-precision attention for one (b, h): the "math" reference.
// q: (B, H, T, D), k/v: (B, Hkv, S, D) -> context (B, H, T, D), weights (B, H, T, S)
void reference_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                         float scale, Tensor4& context, Tensor4& weights) {
    const std::size_t B = q.shape(0), H = q.shape(1), T = q.shape(2), D = q.shape(3);
    const std::size_t Hkv = k.shape(1), S = k.shape(2);
    context = Tensor4::from_shape({B, H, T, D});
    weights = Tensor4::from_shape({B, H, T, S});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h) {
            const std::size_t hk = h / (H / Hkv);
            for (std::size_t i = 0; i < T; ++i) {
                std::vector<double> s(S);
                double mx = -std::numeric_limits<double>::infinity();
                for (std::size_t j = 0; j < S; ++j) {
                    double dot = 0;
                    for (std::size_t d = 0; d < D; ++d) dot += double(q(b, h, i, d)) * k(b, hk, j, d);
                    s[j] = mask.is_masked(b, i, j, T, S) ? -std::numeric_limits<double>::infinity() : dot * scale;
                    mx = std::max(mx, s[j]);
                }
                double sum = 0;
                for (std::size_t j = 0; j < S; ++j) sum += (s[j] = std::isinf(mx) ? 0.0 : std::exp(s[j] - mx));
                for (std::size_t j = 0; j < S; ++j) weights(b, h, i, j) = float(sum > 0 ? s[j] / sum : 0.0);
                for (std::size_t d = 0; d < D; ++d) {
                    double acc = 0;
                    for (std::size_t j = 0; j < S; ++j) acc += double(weights(b, h, i, j)) * v(b, hk, j, d);
                    context(b, h, i, d) = float(acc);
                }
            }
        }
}

double max_abs_diff(const Tensor4& a, const Tensor4& b) {
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::abs(a.data()[i] - b.data()[i])));
    return m;
}

struct Inputs {
    Tensor4 q, k, v;
};
Inputs make_inputs(std::size_t B, std::size_t H, std::size_t Hkv, std::size_t T, std::size_t S, std::size_t D,
                   std::uint64_t seed) {
    return {random_normal<Tensor4>({B, H, T, D}, seed), random_normal<Tensor4>({B, Hkv, S, D}, seed + 1),
            random_normal<Tensor4>({B, Hkv, S, D}, seed + 2)};
}

TEST(ScaledDotProductAttention, MatchesDoubleReferenceOnOddSizes) {
    for (auto [T, S, D] : {std::array<std::size_t, 3>{1, 1, 1}, {3, 17, 5}, {17, 3, 63}, {65, 64, 8}}) {
        const Inputs in = make_inputs(2, 2, 2, T, S, D, 7 + T);
        AttentionMask mask;
        AttentionCache cache;
        const Tensor4 ctx = scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, nullptr, &cache);
        Tensor4 ref_ctx, ref_w;
        reference_attention(in.q, in.k, in.v, mask, 1.0f / std::sqrt(float(D)), ref_ctx, ref_w);
        EXPECT_LT(max_abs_diff(ctx, ref_ctx), 1e-5) << T << " " << S << " " << D;
        EXPECT_LT(max_abs_diff(cache.weights, ref_w), 1e-6) << T << " " << S << " " << D;
    }
}

TEST(ScaledDotProductAttention, WeightRowsSumToOneAndMaskedWeightsAreExactlyZero) {
    const Inputs in = make_inputs(2, 3, 3, 9, 9, 8, 3);
    AttentionMask mask;
    mask.causal = true;
    mask.key_padding = padding_mask_from_lengths({9, 6}, 9);
    AttentionCache cache;
    scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, nullptr, &cache);
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 3; ++h)
            for (std::size_t i = 0; i < 9; ++i) {
                double sum = 0;
                for (std::size_t j = 0; j < 9; ++j) {
                    const float w = cache.weights(b, h, i, j);
                    if (mask.is_masked(b, i, j, 9, 9)) EXPECT_EQ(w, 0.0f) << b << h << i << j;
                    sum += w;
                }
                EXPECT_NEAR(sum, 1.0, 1e-6);
            }
}

TEST(ScaledDotProductAttention, CausalFirstPositionAttendsOnlyToItself) {
    const Inputs in = make_inputs(1, 2, 2, 6, 6, 4, 11);
    AttentionMask mask;
    mask.causal = true;
    AttentionCache cache;
    const Tensor4 ctx = scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, nullptr, &cache);
    for (std::size_t h = 0; h < 2; ++h) {
        EXPECT_EQ(cache.weights(0, h, 0, 0), 1.0f);
        for (std::size_t d = 0; d < 4; ++d) EXPECT_FLOAT_EQ(ctx(0, h, 0, d), in.v(0, h, 0, d));
    }
}

TEST(ScaledDotProductAttention, FullyMaskedRowGivesZeroWeightsAndContextNotNaN) {
    const Inputs in = make_inputs(1, 1, 1, 3, 3, 4, 5);
    AttentionMask mask;
    mask.explicit_mask = Mask2::from_shape({3, 3});
    mask.explicit_mask.fill(0);
    for (std::size_t j = 0; j < 3; ++j) mask.explicit_mask(1, j) = 1;  // query 1 sees nothing
    AttentionCache cache;
    const Tensor4 ctx = scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, nullptr, &cache);
    for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(cache.weights(0, 0, 1, j), 0.0f);
    for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(ctx(0, 0, 1, d), 0.0f);
    for (float x : ctx) EXPECT_TRUE(std::isfinite(x));
}

TEST(ScaledDotProductAttention, ScalingSwitches) {
    const Inputs in = make_inputs(1, 1, 1, 4, 5, 16, 9);
    for (auto [opt, factor] : {std::pair<ScaleOptions, float>{{true, std::nullopt}, 0.25f},
                               {{false, std::nullopt}, 1.0f},
                               {{true, 0.5f}, 0.5f}}) {
        EXPECT_FLOAT_EQ(opt.effective(16), factor);
        AttentionCache cache;
        scaled_dot_product_attention(in.q, in.k, in.v, {}, opt, nullptr, &cache);
        Tensor4 ref_ctx, ref_w;
        reference_attention(in.q, in.k, in.v, {}, factor, ref_ctx, ref_w);
        EXPECT_LT(max_abs_diff(cache.weights, ref_w), 1e-6);
    }
}

TEST(ScaledDotProductAttention, GroupedQueryEqualsMhaWithRepeatedKvHeads) {
    const Inputs in = make_inputs(2, 4, 2, 5, 7, 6, 21);
    // Repeat each kv head for its group of H / Hkv = 2 query heads.
    Tensor4 k_rep = Tensor4::from_shape({2, 4, 7, 6}), v_rep = Tensor4::from_shape({2, 4, 7, 6});
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 4; ++h)
            for (std::size_t j = 0; j < 7; ++j)
                for (std::size_t d = 0; d < 6; ++d) {
                    k_rep(b, h, j, d) = in.k(b, h / 2, j, d);
                    v_rep(b, h, j, d) = in.v(b, h / 2, j, d);
                }
    AttentionMask mask;
    mask.causal = true;
    const Tensor4 gqa = scaled_dot_product_attention(in.q, in.k, in.v, mask);
    const Tensor4 mha = scaled_dot_product_attention(in.q, k_rep, v_rep, mask);
    EXPECT_EQ(max_abs_diff(gqa, mha), 0.0);
}

TEST(ScaledDotProductAttention, RecordedStagesEqualTheComputation) {
    const Inputs in = make_inputs(2, 2, 1, 4, 4, 4, 13);
    AttentionMask mask;
    mask.causal = true;
    TraceRecorder trace;
    AttentionCache cache;
    const Tensor4 ctx = scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, &trace, &cache);
    const Tensor4 plain = scaled_dot_product_attention(in.q, in.k, in.v, mask);
    EXPECT_EQ(max_abs_diff(ctx, plain), 0.0) << "recording must not change the result";
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 2; ++h) {
            const Tensor2& scores = trace.get(Stage::scores, b, h);
            const Tensor2& scaled = trace.get(Stage::scaled, b, h);
            const Tensor2& masked = trace.get(Stage::masked, b, h);
            const Tensor2& weights = trace.get(Stage::weights, b, h);
            const Tensor2& context = trace.get(Stage::context, b, h);
            for (std::size_t i = 0; i < 4; ++i) {
                for (std::size_t j = 0; j < 4; ++j) {
                    float dot = 0;
                    for (std::size_t d = 0; d < 4; ++d) dot += in.q(b, h, i, d) * in.k(b, 0, j, d);
                    EXPECT_NEAR(scores(i, j), dot, 1e-5);
                    EXPECT_FLOAT_EQ(scaled(i, j), scores(i, j) * 0.5f);
                    if (j > i) EXPECT_TRUE(std::isinf(masked(i, j)) && masked(i, j) < 0);
                    else EXPECT_EQ(masked(i, j), scaled(i, j));
                    EXPECT_EQ(weights(i, j), cache.weights(b, h, i, j));
                }
                for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(context(i, d), ctx(b, h, i, d));
            }
        }
}

TEST(ScaledDotProductAttention, SameResultWithOneAndTwoThreads) {
    const Inputs in = make_inputs(2, 4, 4, 33, 33, 16, 17);
    AttentionMask mask;
    mask.causal = true;
    const std::size_t before = num_threads();
    set_num_threads(1);
    const Tensor4 one = scaled_dot_product_attention(in.q, in.k, in.v, mask);
    set_num_threads(2);
    const Tensor4 two = scaled_dot_product_attention(in.q, in.k, in.v, mask);
    set_num_threads(before);
    EXPECT_EQ(max_abs_diff(one, two), 0.0);
}

TEST(ScaledDotProductAttention, BadShapesAndHeadCountsThrowWithTheShapes) {
    const Inputs in = make_inputs(1, 3, 3, 4, 4, 4, 1);
    const Tensor4 k2 = random_normal<Tensor4>({1, 2, 4, 4}, 2);
    try {
        scaled_dot_product_attention(in.q, k2, k2);
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("(3)"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("(2)"), std::string::npos) << e.what();
    }
    const Tensor4 k_bad_d = random_normal<Tensor4>({1, 3, 4, 5}, 2);
    EXPECT_THROW(scaled_dot_product_attention(in.q, k_bad_d, k_bad_d), ShapeError);
    const Tensor4 v_bad_s = random_normal<Tensor4>({1, 3, 5, 4}, 2);
    EXPECT_THROW(scaled_dot_product_attention(in.q, in.k, v_bad_s), ShapeError);
    AttentionMask mask;
    mask.key_padding = padding_mask_from_lengths({4, 4}, 4);  // B = 2, but the batch is 1
    EXPECT_THROW(scaled_dot_product_attention(in.q, in.k, in.v, mask), ShapeError);
}

TEST(ScaledDotProductAttention, SizeOverTheMemoryBudgetThrowsInsteadOfAllocating) {
    const std::size_t before = max_tensor_elements();
    set_max_tensor_elements(1000);
    const Inputs in = make_inputs(1, 1, 1, 40, 40, 2, 1);  // 1600 scores > 1000
    // The recorded path would allocate the (T, S) matrix; the flash path (what a call without
    // observer or cache takes) never does, so the same call fits there.
    EXPECT_THROW(scaled_dot_product_attention(in.q, in.k, in.v, {}, {}, nullptr, nullptr, SdpBackend::math),
                 ValueError);
    EXPECT_NO_THROW(scaled_dot_product_attention(in.q, in.k, in.v));
    set_max_tensor_elements(before);
}

}  // namespace
}  // namespace attnlab
