#include "attnlab/posenc/rope.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

// q: (D) rotated to position p (a (1, 1, 1, D) tensor with offset p).
Tensor4 at_position(const Tensor4& v, std::size_t p) {
    Tensor4 out = v;
    apply_rope(out, p);
    return out;
}

float dot(const Tensor4& a, const Tensor4& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += double(a.data()[i]) * b.data()[i];
    return float(s);
}

TEST(Rope, ScoresDependOnlyOnTheOffset) {
    const Tensor4 q = test::random_normal<Tensor4>({1, 1, 1, 16}, 1);
    const Tensor4 k = test::random_normal<Tensor4>({1, 1, 1, 16}, 2);
    for (std::size_t offset : {0u, 1u, 5u}) {
        const float reference = dot(at_position(q, offset), at_position(k, 0));
        for (std::size_t j : {1u, 7u, 30u, 200u}) {
            EXPECT_NEAR(dot(at_position(q, j + offset), at_position(k, j)), reference, 2e-4)
                << "offset " << offset << " at j " << j;
        }
    }
}

TEST(Rope, PreservesNormsAndInverseUndoesIt) {
    Tensor4 x = test::random_normal<Tensor4>({2, 3, 9, 8}, 3);
    const Tensor4 original = x;
    apply_rope(x, 4);
    for (std::size_t r = 0; r < 2 * 3 * 9; ++r) {
        double n0 = 0, n1 = 0;
        for (std::size_t d = 0; d < 8; ++d) {
            n0 += double(original.data()[r * 8 + d]) * original.data()[r * 8 + d];
            n1 += double(x.data()[r * 8 + d]) * x.data()[r * 8 + d];
        }
        EXPECT_NEAR(n0, n1, 1e-4 * n0);
    }
    apply_rope(x, 4, kRopeDefaultBase, /*inverse=*/true);
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x.data()[i], original.data()[i], 1e-5);
}

TEST(Rope, PositionZeroIsIdentityAndPairsAreRotateHalf) {
    Tensor4 x = Tensor4::from_shape({1, 1, 2, 4});
    x.fill(0);
    x(0, 0, 0, 0) = 1;  // position 0
    x(0, 0, 1, 0) = 1;  // position 1: dim 0 pairs with dim 2 (rotate-half), angle = 1 rad
    apply_rope(x);
    EXPECT_FLOAT_EQ(x(0, 0, 0, 0), 1);
    EXPECT_FLOAT_EQ(x(0, 0, 0, 2), 0);
    EXPECT_NEAR(x(0, 0, 1, 0), std::cos(1.0), 1e-7);
    EXPECT_NEAR(x(0, 0, 1, 2), std::sin(1.0), 1e-7);
    EXPECT_EQ(x(0, 0, 1, 1), 0);
}

TEST(Rope, OddHeadDimensionThrows) {
    Tensor4 x = Tensor4::from_shape({1, 1, 2, 5});
    EXPECT_THROW(apply_rope(x), ConfigError);
}

}  // namespace
}  // namespace attnlab
