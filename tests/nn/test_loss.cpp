#include "attnlab/nn/loss.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

TEST(CrossEntropy, UniformLogitsGiveLogV) {
    const Tensor2 logits = xt::zeros<float>({2, 4});
    const Index1 targets = {1, 3};
    const CrossEntropyResult r = cross_entropy_forward(logits, targets);
    EXPECT_NEAR(r.loss, std::log(4.0), 1e-6);
    EXPECT_EQ(r.count, 2u);
}

TEST(CrossEntropy, IgnoredTargetsAreLeftOutOfTheMeanAndGetZeroGradient) {
    const Tensor2 logits = test::random_normal<Tensor2>({3, 5}, 1);
    const Index1 targets = {2, -1, 4};
    CrossEntropyCache cache;
    const CrossEntropyResult r = cross_entropy_forward(logits, targets, &cache);
    // The mean of the two counted rows, computed by hand.
    double expected = 0;
    for (std::size_t i : {0u, 2u}) {
        double sum = 0;
        for (std::size_t j = 0; j < 5; ++j) sum += std::exp(double(logits(i, j)));
        expected += std::log(sum) - logits(i, static_cast<std::size_t>(targets(i)));
    }
    EXPECT_NEAR(r.loss, expected / 2, 1e-6);
    EXPECT_EQ(r.count, 2u);
    Tensor2 dlogits;
    cross_entropy_backward(cache, 1.0f, dlogits);
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(dlogits(1, j), 0.0f);
}

TEST(CrossEntropy, HugeLogitsStayFinite) {
    const Tensor2 logits = {{1e4f, -1e4f, 0.0f}, {-3e4f, 3e4f, 2.9e4f}};
    const Index1 targets = {1, 2};
    CrossEntropyCache cache;
    const CrossEntropyResult r = cross_entropy_forward(logits, targets, &cache);
    EXPECT_NEAR(r.loss, (2e4 + 1e3) / 2, 1e-2);
    Tensor2 d;
    cross_entropy_backward(cache, 1.0f, d);
    for (float v : d) EXPECT_TRUE(std::isfinite(v));
}

TEST(CrossEntropy, AllIgnoredGivesZeroLossAndZeroGradient) {
    const Tensor2 logits = test::random_normal<Tensor2>({2, 3}, 1);
    CrossEntropyCache cache;
    const CrossEntropyResult r = cross_entropy_forward(logits, Index1{-1, -1}, &cache);
    EXPECT_EQ(r.loss, 0.0f);
    EXPECT_EQ(r.count, 0u);
    Tensor2 d;
    cross_entropy_backward(cache, 1.0f, d);
    for (float v : d) EXPECT_EQ(v, 0.0f);
}

TEST(CrossEntropy, CountsCorrectArgmaxPredictions) {
    const Tensor2 logits = {{0, 2, 1}, {3, 0, 0}, {0, 0, 5}};
    const CrossEntropyResult r = cross_entropy_forward(logits, Index1{1, 1, -1});
    EXPECT_EQ(r.correct, 1u);
    EXPECT_EQ(r.count, 2u);
}

TEST(CrossEntropy, OutOfRangeTargetIsAValueErrorNamingIt) {
    const Tensor2 logits = xt::zeros<float>({2, 3});
    try {
        cross_entropy_forward(logits, Index1{0, 3});
        FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("target 3"), std::string::npos) << e.what();
    }
    EXPECT_THROW(cross_entropy_forward(logits, Index1{0, -2}), ValueError);
    EXPECT_THROW(cross_entropy_forward(logits, Index1{0}), ShapeError);
}

TEST(CrossEntropy, BackwardMatchesFiniteDifferences) {
    Tensor2 logits = test::random_normal<Tensor2>({4, 6}, 3, 2.0f);
    const Index1 targets = {5, -1, 0, 2};
    CrossEntropyCache cache;
    cross_entropy_forward(logits, targets, &cache);
    Tensor2 d;
    cross_entropy_backward(cache, 1.0f, d);
    // The loss is a float (mean over 3 rows, ~2): rounding ~2e-7 / 2h; gradients are ~0.1.
    auto loss = [&] { return double(cross_entropy_forward(logits, targets).loss); };
    EXPECT_TRUE(testutil::check_gradient("cross_entropy dlogits", loss, logits.data(), d.data(), logits.size(),
                                         {1e-2, 2e-4, 1e-2}));
}

// pred - target = [[1, -2], [0.5, 0]]: squares 1, 4, 0.25, 0 -> mean 5.25 / 4; absolutes 1, 2, 0.5, 0
// -> mean 3.5 / 4; gradient 2 · diff / 4.
TEST(Mse, HandComputedMseMaeAndGradient) {
    const Tensor2 pred = {{2.0f, -1.0f}, {0.5f, 3.0f}};
    const Tensor2 target = {{1.0f, 1.0f}, {0.0f, 3.0f}};
    MseCache cache;
    const RegressionResult r = mse_forward(pred, target, &cache);
    EXPECT_FLOAT_EQ(r.mse, 5.25f / 4.0f);
    EXPECT_FLOAT_EQ(r.mae, 3.5f / 4.0f);
    EXPECT_EQ(r.count, 4u);
    Tensor2 d;
    mse_backward(cache, 2.0f, d);  // dloss = 2 doubles it
    const Tensor2 expected = {{1.0f, -2.0f}, {0.5f, 0.0f}};
    EXPECT_EQ(d, expected);
}

TEST(Mse, ExactPredictionGivesZero) {
    const Tensor2 y = test::random_normal<Tensor2>({3, 4}, 8);
    const RegressionResult r = mse_forward(y, y);
    EXPECT_EQ(r.mse, 0.0f);
    EXPECT_EQ(r.mae, 0.0f);
}

TEST(Mse, ShapeMismatchAndNonFiniteEntriesAreErrorsNamingThem) {
    const Tensor2 a = xt::zeros<float>({2, 3}), b = xt::zeros<float>({3, 2});
    try {
        mse_forward(a, b);
        FAIL() << "no throw";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("got pred (2, 3) and target (3, 2)"), std::string::npos) << e.what();
    }
    Tensor2 c = xt::zeros<float>({2, 3});
    c(1, 2) = std::nanf("");
    try {
        mse_forward(a, c);
        FAIL() << "no throw";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("entry (1, 2) is not finite"), std::string::npos) << e.what();
    }
    EXPECT_THROW(mse_forward(Tensor2::from_shape({0, 3}), Tensor2::from_shape({0, 3})), ShapeError);
}

TEST(Mse, BackwardMatchesFiniteDifferences) {
    Tensor2 pred = test::random_normal<Tensor2>({5, 3}, 4);
    const Tensor2 target = test::random_normal<Tensor2>({5, 3}, 5);
    MseCache cache;
    mse_forward(pred, target, &cache);
    Tensor2 d;
    mse_backward(cache, 1.0f, d);
    auto loss = [&] { return double(mse_forward(pred, target).mse); };
    EXPECT_TRUE(testutil::check_gradient("mse dpred", loss, pred.data(), d.data(), pred.size(), {1e-2, 2e-4, 1e-2}));
}

}  // namespace
}  // namespace attnlab
