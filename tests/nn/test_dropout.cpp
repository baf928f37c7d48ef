#include "attnlab/nn/dropout.hpp"

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

TEST(Dropout, ZeroProbabilityIsTheIdentityAndDrawsNothing) {
    const Tensor3 x = test::random_normal<Tensor3>({2, 3, 4}, 1);
    Rng rng(5), untouched(5);
    DropoutCache cache;
    const Tensor3 y = dropout_forward(x, 0.0f, rng, &cache);
    EXPECT_EQ(y, x);
    EXPECT_EQ(cache.keep.size(), 0u);
    EXPECT_EQ(rng.next_u64(), untouched.next_u64());
}

TEST(Dropout, KeptElementsAreScaledAndTheRestAreZero) {
    const Tensor3 x = xt::ones<float>({4, 16, 32});
    Rng rng(9);
    DropoutCache cache;
    const Tensor3 y = dropout_forward(x, 0.25f, rng, &cache);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        if (cache.keep.data()[i]) {
            EXPECT_FLOAT_EQ(y.data()[i], 1.0f / 0.75f);
            ++kept;
        } else {
            EXPECT_EQ(y.data()[i], 0.0f);
        }
    }
    EXPECT_NEAR(double(kept) / double(y.size()), 0.75, 0.03);  // 2048 Bernoulli draws
}

TEST(Dropout, SameSeedGivesTheSameMask) {
    const Tensor3 x = test::random_normal<Tensor3>({2, 5, 7}, 1);
    Rng a(3), b(3);
    EXPECT_EQ(dropout_forward(x, 0.5f, a), dropout_forward(x, 0.5f, b));
}

TEST(Dropout, ProbabilityOutsideRangeIsAValueError) {
    const Tensor3 x = xt::ones<float>({1, 1, 2});
    Rng rng(1);
    EXPECT_THROW(dropout_forward(x, 1.0f, rng), ValueError);
    EXPECT_THROW(dropout_forward(x, -0.1f, rng), ValueError);
}

TEST(Dropout, BackwardMatchesFiniteDifferencesForAFixedMask) {
    Tensor3 x = test::random_normal<Tensor3>({2, 3, 4}, 1);
    const Tensor3 w = test::random_normal<Tensor3>({2, 3, 4}, 2);
    Rng rng(7);
    DropoutCache cache;
    dropout_forward(x, 0.3f, rng, &cache);
    Tensor3 dx;
    dropout_backward(w, cache, dx);
    // Each evaluation redraws the same mask from a fresh copy of the generator.
    auto loss = [&] {
        Rng again(7);
        return testutil::dot(dropout_forward(x, 0.3f, again), w);
    };
    EXPECT_TRUE(testutil::check_gradient("dropout dx", loss, x.data(), dx.data(), x.size(), {1e-2, 1e-4, 1e-3}));
}

}  // namespace
}  // namespace attnlab
