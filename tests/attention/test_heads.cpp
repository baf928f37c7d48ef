#include "attnlab/attention/heads.hpp"

#include <gtest/gtest.h>

#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

TEST(SplitHeads, HeadHHoldsColumnsHTimesDOnwardOfEveryPosition) {
    const Tensor3 x = test::random_normal<Tensor3>({2, 3, 8}, 1);
    const Tensor4 heads = split_heads(x, 4);  // D = 2
    ASSERT_EQ(heads.shape(), (std::array<std::size_t, 4>{2, 4, 3, 2}));
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 4; ++h)
            for (std::size_t t = 0; t < 3; ++t)
                for (std::size_t d = 0; d < 2; ++d) EXPECT_EQ(heads(b, h, t, d), x(b, t, h * 2 + d));
}

TEST(SplitHeads, MergeIsTheExactInverse) {
    const Tensor3 x = test::random_normal<Tensor3>({2, 5, 12}, 2);
    EXPECT_EQ(merge_heads(split_heads(x, 3)), x);
}

TEST(SplitHeads, WidthNotDivisibleByHeadsNamesBoth) {
    const Tensor3 x = test::random_normal<Tensor3>({1, 2, 10}, 3);
    try {
        split_heads(x, 4);
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("10"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("4"), std::string::npos);
    }
}

// The article's reshape trap (§3.2): viewing (B, T, C) directly as (B, H, T, D) — a reshape
// without the transpose — runs without error on the same memory but mixes positions into heads.
Tensor4 wrong_split_heads(const Tensor3& x, std::size_t heads) {
    const std::size_t d = x.shape(2) / heads;
    Tensor4 out = Tensor4::from_shape({x.shape(0), heads, x.shape(1), d});
    std::copy(x.begin(), x.end(), out.begin());  // same bytes, reinterpreted: view(B, H, T, D)
    return out;
}

TEST(SplitHeads, ReshapeTrapGivesDifferentHeads) {
    const Tensor3 x = test::random_normal<Tensor3>({1, 4, 8}, 4);
    const Tensor4 right = split_heads(x, 2);
    const Tensor4 wrong = wrong_split_heads(x, 2);
    EXPECT_EQ(right.shape(), wrong.shape()) << "the trap has the right shape, which is why it goes unnoticed";
    EXPECT_NE(right, wrong);
    // Concretely: in the wrong split, head 0 position 1 holds the *second half of position 0*.
    for (std::size_t d = 0; d < 4; ++d) {
        EXPECT_EQ(wrong(0, 0, 1, d), x(0, 0, 4 + d));
        EXPECT_EQ(right(0, 0, 1, d), x(0, 1, d));
    }
}

}  // namespace
}  // namespace attnlab
