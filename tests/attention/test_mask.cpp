#include "attnlab/attention/mask.hpp"

#include <cmath>

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

TEST(PaddingMask, LengthBeyondMaxLenThrows) {
    EXPECT_THROW(padding_mask_from_lengths({5}, 4), ValueError);
}

}  // namespace
}  // namespace attnlab
