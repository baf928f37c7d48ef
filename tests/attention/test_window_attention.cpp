// Sliding-window attention with global tokens (AttentionMask::window / global_tokens; Longformer,
// article §5.3): the tiled (flash) path against the math path for many lengths, windows and mask
// combinations, forward and backward; the identity window >= T == full causal; no NaN for rows
// with no visible key; a windowed decoder generates the same tokens with and without a KV cache;
// the config fields survive a checkpoint round trip and old checkpoints load with window 0.
#include <cmath>
#include <sstream>

#include <gtest/gtest.h>

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "support/attention_paths.hpp"
#include "support/fixtures.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

struct Inputs {
    Tensor4 q, k, v;  // (B, H, T, D), (B, Hkv, S, D), (B, Hkv, S, D)
};

Inputs make_inputs(std::size_t t, std::size_t s, std::uint64_t seed) {
    return {test::random_normal<Tensor4>({2, 2, t, 8}, seed), test::random_normal<Tensor4>({2, 1, s, 8}, seed + 1),
            test::random_normal<Tensor4>({2, 1, s, 8}, seed + 2)};
}

Tensor4 math_forward(const Inputs& in, const AttentionMask& mask, AttentionCache* cache = nullptr) {
    return scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, nullptr, cache, SdpBackend::math);
}

bool all_finite(const Tensor4& x) {
    for (float v : x) {
        if (!std::isfinite(v)) return false;
    }
    return true;
}

// The combinations every (T, window) runs with: window alone, + causal, + padding (batch row 1
// pads its last third), + globals, all of them.
struct Variant {
    const char* name;
    bool causal, padding;
    std::size_t globals;
};
constexpr Variant kVariants[] = {{"window", false, false, 0},          {"causal", true, false, 0},
                                 {"padding", false, true, 0},          {"globals", false, false, 2},
                                 {"causal+padding+globals", true, true, 3}};

AttentionMask make_mask(const Variant& variant, std::size_t window, std::size_t s) {
    AttentionMask mask;
    mask.window = window;
    mask.causal = variant.causal;
    mask.global_tokens = variant.globals;
    if (variant.padding) mask.key_padding = padding_mask_from_lengths({s, s - s / 3}, s);
    return mask;
}

TEST(WindowAttention, FlashEqualsTheMathPathForEveryWindow) {
    std::uint64_t seed = 1;
    for (std::size_t t : {1, 17, 65, 200}) {
        const Inputs in = make_inputs(t, t, seed += 3);
        for (std::size_t window = 0; window <= t; ++window) {
            for (const Variant& variant : kVariants) {
                const AttentionMask mask = make_mask(variant, window, t);
                const Tensor4 expected = math_forward(in, mask);
                const Tensor4 actual = flash_attention_forward(in.q, in.k, in.v, mask);
                ASSERT_TRUE(all_finite(actual));
                ASSERT_TRUE(test::all_close(actual, expected, 1e-5))
                    << "T=" << t << " W=" << window << " " << variant.name;
            }
        }
    }
}

TEST(WindowAttention, FlashEqualsTheMathPathWithAKvCacheShape) {
    // T new queries after S - T cached keys: the window is bottom-right aligned on both paths.
    std::uint64_t seed = 50;
    for (auto [t, s] : {std::pair<std::size_t, std::size_t>{1, 200}, {5, 70}, {17, 140}, {100, 600}}) {
        const Inputs in = make_inputs(t, s, seed += 3);
        for (std::size_t window : {1, 3, 16, 100}) {
            for (const Variant& variant : kVariants) {
                const AttentionMask mask = make_mask(variant, window, s);
                ASSERT_TRUE(test::all_close(flash_attention_forward(in.q, in.k, in.v, mask), math_forward(in, mask),
                                            1e-5))
                    << "T=" << t << " S=" << s << " W=" << window << " " << variant.name;
            }
        }
    }
}

TEST(WindowAttention, FlashBackwardEqualsTheMathBackward) {
    std::uint64_t seed = 100;
    for (std::size_t t : {17, 200, 400}) {
        const Inputs in = make_inputs(t, t, seed += 4);
        const Tensor4 dctx = test::random_normal<Tensor4>({2, 2, t, 8}, seed + 3);
        for (std::size_t window : {1, 5, 60}) {
            for (const Variant& variant : kVariants) {
                const AttentionMask mask = make_mask(variant, window, t);
                const test::AttentionResults ref = test::math_path(in.q, in.k, in.v, mask, dctx);
                const test::AttentionResults got = test::flash_path(in.q, in.k, in.v, mask, dctx);
                std::ostringstream where;
                where << "T=" << t << " W=" << window << " " << variant.name;
                ASSERT_TRUE(test::all_close(got.dq, ref.dq, 1e-4, 1e-4)) << "dq " << where.str();
                ASSERT_TRUE(test::all_close(got.dk, ref.dk, 1e-4, 1e-4)) << "dk " << where.str();
                ASSERT_TRUE(test::all_close(got.dv, ref.dv, 1e-4, 1e-4)) << "dv " << where.str();
            }
        }
    }
}

TEST(WindowAttention, WindowOfAtLeastTIsExactlyFullCausal) {
    std::uint64_t seed = 200;
    for (std::size_t t : {1, 17, 65, 200}) {
        const Inputs in = make_inputs(t, t, seed += 3);
        AttentionMask causal;
        causal.causal = true;
        const Tensor4 math_ref = math_forward(in, causal);
        const Tensor4 flash_ref = flash_attention_forward(in.q, in.k, in.v, causal);
        for (std::size_t window : {t, t + 1, 10 * t}) {
            AttentionMask windowed = causal;
            windowed.window = window;
            const Tensor4 math = math_forward(in, windowed);
            const Tensor4 flash = flash_attention_forward(in.q, in.k, in.v, windowed);
            EXPECT_TRUE(math == math_ref) << "math T=" << t << " W=" << window;
            EXPECT_TRUE(flash == flash_ref) << "flash T=" << t << " W=" << window;
        }
    }
}

TEST(WindowAttention, RowsWithNoVisibleKeyAreZeroNotNaN) {
    // Window 1 + an explicit mask hiding each query's window: rows >= 2 see only the two global
    // keys (in the first key tile; every later tile of theirs is fully masked), and the last row
    // sees nothing at all.
    const std::size_t t = 150;
    const Inputs in = make_inputs(t, t, 300);
    AttentionMask mask;
    mask.window = 1;
    mask.global_tokens = 2;
    mask.explicit_mask = Mask2::from_shape({t, t});
    for (std::size_t i = 0; i < t; ++i)
        for (std::size_t j = 0; j < t; ++j) mask.explicit_mask(i, j) = (i > j ? i - j : j - i) <= 1 ? 1 : 0;
    for (std::size_t j = 0; j < t; ++j) mask.explicit_mask(t - 1, j) = 1;  // the last row sees nothing at all
    const Tensor4 math = math_forward(in, mask);
    const Tensor4 flash = flash_attention_forward(in.q, in.k, in.v, mask);
    ASSERT_TRUE(all_finite(math));
    ASSERT_TRUE(all_finite(flash));
    EXPECT_TRUE(test::all_close(flash, math, 1e-5));
    for (std::size_t c = 0; c < 8; ++c) EXPECT_EQ(flash(0, 0, t - 1, c), 0.0f);
}

ModelConfig windowed_decoder() {
    ModelConfig c;
    c.kind = ModelKind::decoder;
    c.vocab_size = 9;
    c.max_len = 24;
    c.d_model = 8;
    c.num_heads = 2;
    c.num_layers = 2;
    c.ff_dim = 12;
    c.positional = PositionalKind::rope;
    c.attention_window = 3;
    c.global_tokens = 1;
    return c;
}

TEST(WindowAttention, DecoderCachedGenerationEqualsUncached) {
    for (std::size_t globals : {0, 1, 2}) {
        ModelConfig config = windowed_decoder();
        config.global_tokens = globals;
        Rng rng(3);
        DecoderLM model(config, rng);
        for (auto& p : model.parameters()) {
            Rng r(5 + p.size());
            for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.3f * r.normal();
        }
        for (float temperature : {0.0f, 1.0f}) {
            const GenerateOptions options{temperature, 7};
            const GenerateResult cached = model.generate({1, 4, 2, 7}, 14, options);
            const GenerateResult uncached = model.generate_uncached({1, 4, 2, 7}, 14, options);
            EXPECT_EQ(cached.tokens, uncached.tokens) << "G=" << globals << " temperature " << temperature;
            EXPECT_TRUE(test::all_close(cached.logits, uncached.logits, 1e-5))
                << "G=" << globals << " temperature " << temperature;
        }
    }
}

TEST(WindowAttention, DecoderAttentionMapsAreZeroOutsideTheWindow) {
    const ModelConfig config = windowed_decoder();
    Rng rng(4);
    DecoderLM model(config, rng);
    Index2 tokens = Index2::from_shape({1, 10});
    for (std::size_t i = 0; i < 10; ++i) tokens(0, i) = static_cast<std::int32_t>(i % 9);
    const Tensor4 maps = model.attention_maps(tokens, 0);  // (L, H, T, T)
    for (std::size_t l = 0; l < maps.shape(0); ++l)
        for (std::size_t h = 0; h < maps.shape(1); ++h)
            for (std::size_t i = 0; i < 10; ++i)
                for (std::size_t j = 0; j < 10; ++j) {
                    const bool visible = j <= i && (i - j <= 3 || j < 1 || i < 1);
                    if (!visible) EXPECT_EQ(maps(l, h, i, j), 0.0f) << l << h << " " << i << "," << j;
                    else EXPECT_GT(maps(l, h, i, j), 0.0f) << l << h << " " << i << "," << j;
                }
}

TEST(WindowAttention, ConfigRoundTripsAndOldCheckpointsDefaultToFullAttention) {
    const ModelConfig c = windowed_decoder();
    auto meta = c.to_metadata();
    EXPECT_EQ(meta.at("attention_window"), "3");
    EXPECT_EQ(meta.at("global_tokens"), "1");
    EXPECT_TRUE(ModelConfig::from_metadata(meta) == c);
    meta.erase("attention_window");
    meta.erase("global_tokens");
    const ModelConfig old = ModelConfig::from_metadata(meta);
    EXPECT_EQ(old.attention_window, 0u);
    EXPECT_EQ(old.global_tokens, 0u);
}

}  // namespace
}  // namespace attnlab
