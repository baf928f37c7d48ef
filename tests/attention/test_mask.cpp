#include "attnlab/attention/mask.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace attnlab {
namespace {

TEST(AttentionMask, CausalHidesTheFutureOnly) {
    AttentionMask mask;
    mask.causal = true;
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(mask.is_masked(0, i, j, 4, 4), j > i) << i << "," << j;
}

TEST(AttentionMask, CausalIsBottomRightAlignedForKvCache) {
    AttentionMask mask;
    mask.causal = true;
    // 2 new queries after 3 cached keys (S = 5): query 0 is position 3, query 1 is position 4.
    EXPECT_FALSE(mask.is_masked(0, 0, 3, 2, 5));
    EXPECT_TRUE(mask.is_masked(0, 0, 4, 2, 5));
    EXPECT_FALSE(mask.is_masked(0, 1, 4, 2, 5));
}

TEST(AttentionMask, ComponentsCombineByLogicalOr) {
    AttentionMask mask;
    mask.causal = true;
    mask.key_padding = padding_mask_from_lengths({3, 2}, 3);
    mask.explicit_mask = Mask2::from_shape({3, 3});
    mask.explicit_mask.fill(0);
    mask.explicit_mask(2, 0) = 1;
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 3; ++j) {
                const bool expected = (j > i) || (b == 1 && j >= 2) || (i == 2 && j == 0);
                EXPECT_EQ(mask.is_masked(b, i, j, 3, 3), expected) << b << " " << i << " " << j;
            }
}

TEST(AttentionMask, ApplyWritesMinusInfinityExactlyWhereMasked) {
    AttentionMask mask;
    mask.causal = true;
    mask.key_padding = padding_mask_from_lengths({2}, 3);
    float scores[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    mask.apply(scores, 0, 3, 3, 3);
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 3; ++j) {
            const float v = scores[i * 3 + j];
            if (mask.is_masked(0, i, j, 3, 3)) EXPECT_TRUE(std::isinf(v) && v < 0);
            else EXPECT_EQ(v, static_cast<float>(i * 3 + j + 1));
        }
}

TEST(AttentionMask, WrongShapesNameBothShapes) {
    AttentionMask mask;
    mask.key_padding = padding_mask_from_lengths({3, 3}, 3);
    try {
        mask.validate(2, 3, 4, "test");
        FAIL();
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("(B=2, S=4)"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("(2, 3)"), std::string::npos) << e.what();
    }
    AttentionMask explicit_only;
    explicit_only.explicit_mask = Mask2::from_shape({2, 2});
    EXPECT_THROW(explicit_only.validate(1, 3, 3, "test"), ShapeError);
}

TEST(AttentionMask, WindowHidesKeysFartherThanW) {
    AttentionMask mask;
    mask.window = 1;
    EXPECT_TRUE(mask.any());
    // T = S = 5: query i sees keys i-1, i, i+1.
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 5; ++j)
            EXPECT_EQ(mask.is_masked(0, i, j, 5, 5), (i > j ? i - j : j - i) > 1) << i << "," << j;
}

TEST(AttentionMask, CausalWindowIsALocalPast) {
    AttentionMask mask;
    mask.causal = true;
    mask.window = 2;
    // Query 4 sees keys 2, 3, 4 only.
    const bool expected[5] = {true, true, false, false, false};
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(mask.is_masked(0, 4, j, 5, 5), expected[j]) << j;
    EXPECT_TRUE(mask.is_masked(0, 1, 2, 5, 5));  // the future stays hidden
}

TEST(AttentionMask, WindowIsBottomRightAlignedForKvCache) {
    AttentionMask mask;
    mask.causal = true;
    mask.window = 1;
    // 1 new query (position 4) after 4 cached keys: it sees keys 3 and 4.
    EXPECT_TRUE(mask.is_masked(0, 0, 2, 1, 5));
    EXPECT_FALSE(mask.is_masked(0, 0, 3, 1, 5));
    EXPECT_FALSE(mask.is_masked(0, 0, 4, 1, 5));
}

TEST(AttentionMask, GlobalTokensSeeAndAreSeenByAll) {
    AttentionMask mask;
    mask.window = 1;
    mask.global_tokens = 1;
    EXPECT_FALSE(mask.is_masked(0, 5, 0, 6, 6));  // every query sees key 0
    EXPECT_FALSE(mask.is_masked(0, 0, 5, 6, 6));  // query 0 sees every key
    EXPECT_TRUE(mask.is_masked(0, 5, 1, 6, 6));   // key 1 is not global and outside the window
    EXPECT_TRUE(mask.is_masked(0, 1, 5, 6, 6));
    // Globals never unhide what causal, padding or the explicit mask hide.
    mask.causal = true;
    EXPECT_TRUE(mask.is_masked(0, 0, 5, 6, 6));
    mask.causal = false;
    mask.key_padding = padding_mask_from_lengths({6, 0}, 6);
    EXPECT_FALSE(mask.is_masked(0, 5, 0, 6, 6));
    EXPECT_TRUE(mask.is_masked(1, 5, 0, 6, 6));
    // With a KV cache, globals are positions: one new query at position 0 of S = 1 is global.
    AttentionMask cached;
    cached.window = 1;
    cached.global_tokens = 2;
    EXPECT_FALSE(cached.is_masked(0, 0, 1, 1, 6));  // position 5 sees the global key 1
    EXPECT_TRUE(cached.is_masked(0, 0, 2, 1, 6));   // but not key 2
}

TEST(AttentionMask, GlobalTokensWithoutWindowChangeNothing) {
    AttentionMask mask;
    mask.global_tokens = 3;
    EXPECT_FALSE(mask.any());
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) EXPECT_FALSE(mask.is_masked(0, i, j, 4, 4));
}

TEST(AttentionMask, ApplyAgreesWithIsMaskedForWindows) {
    AttentionMask mask;
    mask.causal = true;
    mask.window = 2;
    mask.global_tokens = 1;
    const std::size_t t = 4, s = 7;
    std::vector<float> scores(t * s, 1.0f);
    mask.apply(scores.data(), 0, t, s, s);
    for (std::size_t i = 0; i < t; ++i)
        for (std::size_t j = 0; j < s; ++j)
            EXPECT_EQ(std::isinf(scores[i * s + j]), mask.is_masked(0, i, j, t, s)) << i << "," << j;
}

TEST(PaddingMask, LengthBeyondMaxLenThrows) {
    EXPECT_THROW(padding_mask_from_lengths({5}, 4), ValueError);
}

}  // namespace
}  // namespace attnlab
