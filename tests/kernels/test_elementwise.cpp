#include "attnlab/kernels/elementwise.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/thread_pool.hpp"
#include "support/gradcheck.hpp"

namespace {

using attnlab::Accumulate;
namespace testutil = attnlab::testutil;

std::vector<float> random_vector(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// ---------------------------------------------------------------- gradient checker itself

TEST(GradCheck, AcceptsACorrectGradient) {
    std::vector<float> p = {0.5f, -1.0f, 2.0f};
    auto loss = [&] { return double(p[0]) * p[0] + 3.0 * p[1] + std::sin(double(p[2])); };
    const std::vector<float> grad = {1.0f, 3.0f, float(std::cos(2.0))};
    const testutil::GradCheckResult r = testutil::compare_gradient(loss, p.data(), grad.data(), p.size());
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.first_bad_index, -1);
    EXPECT_LT(r.max_abs_error, 1e-4);
    EXPECT_EQ(p, (std::vector<float>{0.5f, -1.0f, 2.0f}));  // parameters restored
}

TEST(GradCheck, ReportsTheFirstBadIndexOfAWrongGradient) {
    std::vector<float> p = {1.0f, 1.0f, 1.0f, 1.0f};
    auto loss = [&] { return double(p[0]) + 2.0 * p[1] + 3.0 * p[2] + 4.0 * p[3]; };
    const std::vector<float> grad = {1.0f, 2.0f, 3.5f, 0.0f};  // indices 2 and 3 wrong
    const testutil::GradCheckResult r = testutil::compare_gradient(loss, p.data(), grad.data(), p.size());
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.first_bad_index, 2);
    EXPECT_EQ(r.num_bad, 2u);
    EXPECT_EQ(r.worst_index, 3u);
    const ::testing::AssertionResult a = testutil::check_gradient("toy", loss, p.data(), grad.data(), p.size());
    EXPECT_FALSE(a);
    EXPECT_NE(std::string(a.message()).find("first bad index 2"), std::string::npos) << a.message();
}

// ---------------------------------------------------------------- ReLU

TEST(Relu, ZeroesNegativesAndKeepsPositives) {
    const std::vector<float> x = {-2.0f, -0.0f, 0.0f, 0.25f, 3.0f, -1e-30f, 7.0f, -7.0f, 1.0f};
    std::vector<float> y(x.size());
    attnlab::kernels::relu_forward(x.data(), y.data(), x.size());
    const std::vector<float> expected = {0.0f, -0.0f, 0.0f, 0.25f, 3.0f, 0.0f, 7.0f, 0.0f, 1.0f};
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], expected[i]) << "index " << i;
}

TEST(Relu, PropagatesNaN) {
    std::vector<float> x(11, 1.0f);
    x[2] = x[10] = std::numeric_limits<float>::quiet_NaN();        // one in the vector body, one in the tail
    attnlab::kernels::relu_forward(x.data(), x.data(), x.size());  // in place
    EXPECT_TRUE(std::isnan(x[2]));
    EXPECT_TRUE(std::isnan(x[10]));
}

TEST(Relu, BackwardPassesGradientOnlyWherePositive) {
    const std::vector<float> x = {-1.0f, 0.0f, 2.0f, 3.0f, -4.0f, 5.0f};
    const std::vector<float> dy = {10.0f, 20.0f, 30.0f, 40.0f, 50.0f, 60.0f};
    std::vector<float> dx(x.size(), 1.0f);
    attnlab::kernels::relu_backward(x.data(), dy.data(), dx.data(), x.size());
    EXPECT_EQ(dx, (std::vector<float>{0.0f, 0.0f, 30.0f, 40.0f, 0.0f, 60.0f}));
    attnlab::kernels::relu_backward(x.data(), dy.data(), dx.data(), x.size(), Accumulate::yes);
    EXPECT_EQ(dx, (std::vector<float>{0.0f, 0.0f, 60.0f, 80.0f, 0.0f, 120.0f}));
}

TEST(Relu, BackwardMatchesFiniteDifferencesAwayFromTheKink) {
    const std::size_t n = 37;
    std::vector<float> x = random_vector(n, 1, 0.1f, 2.0f);
    for (std::size_t i = 0; i < n; i += 2) x[i] = -x[i];  // |x| >= 0.1 > h
    const std::vector<float> w = random_vector(n, 2);
    std::vector<float> y(n), dx(n);
    auto loss = [&] {
        attnlab::kernels::relu_forward(x.data(), y.data(), n);
        return testutil::dot(y, w);
    };
    attnlab::kernels::relu_backward(x.data(), w.data(), dx.data(), n);
    EXPECT_TRUE(testutil::check_gradient("relu dx", loss, x.data(), dx.data(), n));
}

TEST(Relu, TensorWrapperKeepsShape) {
    const attnlab::Tensor2 x = {{-1.0f, 2.0f, -3.0f}, {4.0f, -5.0f, 6.0f}};
    const attnlab::Tensor2 expected = {{0.0f, 2.0f, 0.0f}, {4.0f, 0.0f, 6.0f}};
    EXPECT_EQ(attnlab::relu(x), expected);
}

// ---------------------------------------------------------------- GELU

TEST(Gelu, MatchesKnownValuesOfTheErfForm) {
    // x·Φ(x) evaluated in double (torch.nn.GELU() gives the same to float precision).
    const std::vector<float> x = {-3.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f, 10.0f, -10.0f};
    const std::vector<double> expected = {-0.00404969409489031,
                                          -0.15865525393145707,
                                          -0.15426876936299344,
                                          0.0,
                                          0.34573123063700656,
                                          0.8413447460685429,
                                          1.9544997361036416,
                                          10.0,
                                          -0.0};
    std::vector<float> y(x.size());
    attnlab::kernels::gelu_forward(x.data(), y.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(y[i], expected[i], 2e-7 + 2e-7 * std::fabs(expected[i])) << "gelu(" << x[i] << ")";
    }
}

TEST(Gelu, BackwardMatchesKnownDerivatives) {
    // d/dx x·Φ(x) = Φ(x) + x·φ(x), in double.
    const std::vector<float> x = {-3.0f, -1.0f, 0.0f, 0.5f, 1.0f, 2.0f};
    const std::vector<double> expected = {-0.01194564720418392, -0.08331547058768629, 0.5,
                                          0.8674951246561629,   1.0833154705876864,   1.085231801078197};
    const std::vector<float> dy(x.size(), 1.0f);
    std::vector<float> dx(x.size());
    attnlab::kernels::gelu_backward(x.data(), dy.data(), dx.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(dx[i], expected[i], 1e-6) << "gelu'(" << x[i] << ")";
}

TEST(Gelu, BackwardMatchesFiniteDifferences) {
    const std::size_t n = 64;
    std::vector<float> x = random_vector(n, 3, -4.0f, 4.0f);
    const std::vector<float> w = random_vector(n, 4);
    std::vector<float> y(n), dx(n);
    auto loss = [&] {
        attnlab::kernels::gelu_forward(x.data(), y.data(), n);
        return testutil::dot(y, w);
    };
    attnlab::kernels::gelu_backward(x.data(), w.data(), dx.data(), n);
    testutil::GradCheckOptions options;
    options.h = 1e-2;
    options.atol = 2e-4;  // truncation error h²/6·|gelu'''| stays below 1e-4
    options.rtol = 1e-3;
    EXPECT_TRUE(testutil::check_gradient("gelu dx", loss, x.data(), dx.data(), n, options));
}

TEST(Gelu, BackwardAccumulateAddsToExistingGradient) {
    const std::vector<float> x = random_vector(19, 5, -2.0f, 2.0f);
    const std::vector<float> dy = random_vector(19, 6);
    std::vector<float> fresh(19), acc(19, 0.5f);
    attnlab::kernels::gelu_backward(x.data(), dy.data(), fresh.data(), x.size());
    attnlab::kernels::gelu_backward(x.data(), dy.data(), acc.data(), x.size(), Accumulate::yes);
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(acc[i], 0.5f + fresh[i]) << "index " << i;
}

TEST(Gelu, TensorWrapperAppliesElementwise) {
    const attnlab::Tensor2 x = {{1.0f, 0.0f}, {-1.0f, 2.0f}};
    const attnlab::Tensor2 y = attnlab::gelu(x);
    EXPECT_NEAR(y(0, 0), 0.8413447f, 1e-6f);
    EXPECT_EQ(y(0, 1), 0.0f);
    EXPECT_NEAR(y(1, 0), -0.1586553f, 1e-6f);
    EXPECT_NEAR(y(1, 1), 1.9544997f, 1e-6f);
}

// GELU's tanh form 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) in double, as written in the
// paper and in torch.nn.functional.gelu(x, approximate='tanh').
double gelu_tanh_reference(double x) {
    const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + std::tanh(u));
}
double gelu_tanh_derivative_reference(double x) {
    const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    const double du = std::sqrt(2.0 / M_PI) * (1.0 + 3.0 * 0.044715 * x * x);
    const double t = std::tanh(u);
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
}

TEST(GeluTanh, MatchesTheTanhFormulaInDouble) {
    std::vector<float> x = random_vector(101, 11, -6.0f, 6.0f);
    for (float v : {0.0f, -0.0f, 1e-6f, -1e-6f, 10.0f, -10.0f, 50.0f, -50.0f, 1e4f, -1e4f}) x.push_back(v);
    std::vector<float> y(x.size());
    attnlab::kernels::gelu_tanh_forward(x.data(), y.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double expected = gelu_tanh_reference(x[i]);
        EXPECT_NEAR(y[i], expected, 1e-7 + 4e-7 * std::fabs(expected)) << "gelu_tanh(" << x[i] << ")";
    }
}

TEST(GeluTanh, DiffersFromTheErfFormBySmallAmounts) {
    // The approximation is within 5e-4 of x·Φ(x) everywhere (Hendrycks & Gimpel 2016) but not equal.
    const std::vector<float> x = random_vector(64, 12, -4.0f, 4.0f);
    std::vector<float> exact(x.size()), approx(x.size());
    attnlab::kernels::gelu_forward(x.data(), exact.data(), x.size());
    attnlab::kernels::gelu_tanh_forward(x.data(), approx.data(), x.size());
    float largest = 0.0f;
    for (std::size_t i = 0; i < x.size(); ++i) largest = std::max(largest, std::fabs(exact[i] - approx[i]));
    EXPECT_GT(largest, 1e-5f);
    EXPECT_LT(largest, 5e-4f);
}

TEST(GeluTanh, BackwardMatchesTheAnalyticDerivative) {
    std::vector<float> x = random_vector(67, 13, -6.0f, 6.0f);
    for (float v : {0.0f, 10.0f, -10.0f, 50.0f, -50.0f}) x.push_back(v);
    const std::vector<float> dy(x.size(), 1.0f);
    std::vector<float> dx(x.size());
    attnlab::kernels::gelu_tanh_backward(x.data(), dy.data(), dx.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(dx[i], gelu_tanh_derivative_reference(x[i]), 1e-6) << "gelu_tanh'(" << x[i] << ")";
    }
}

TEST(GeluTanh, BackwardMatchesFiniteDifferences) {
    const std::size_t n = 64;
    std::vector<float> x = random_vector(n, 14, -4.0f, 4.0f);
    const std::vector<float> w = random_vector(n, 15);
    std::vector<float> y(n), dx(n);
    auto loss = [&] {
        attnlab::kernels::gelu_tanh_forward(x.data(), y.data(), n);
        return testutil::dot(y, w);
    };
    attnlab::kernels::gelu_tanh_backward(x.data(), w.data(), dx.data(), n);
    testutil::GradCheckOptions options;
    options.h = 1e-2;
    options.atol = 2e-4;  // the truncation error h²/6 times the third derivative stays below 1e-4
    options.rtol = 1e-3;
    EXPECT_TRUE(testutil::check_gradient("gelu_tanh dx", loss, x.data(), dx.data(), n, options));
}

TEST(GeluTanh, BackwardAccumulateAddsToExistingGradient) {
    const std::vector<float> x = random_vector(19, 16, -2.0f, 2.0f);
    const std::vector<float> dy = random_vector(19, 17);
    std::vector<float> fresh(19), acc(19, 0.5f);
    attnlab::kernels::gelu_tanh_backward(x.data(), dy.data(), fresh.data(), x.size());
    attnlab::kernels::gelu_tanh_backward(x.data(), dy.data(), acc.data(), x.size(), Accumulate::yes);
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(acc[i], 0.5f + fresh[i]) << "index " << i;
}

// ---------------------------------------------------------------- LayerNorm

// torch.nn.LayerNorm written out in double: y = (x - mean) / sqrt(var + eps) · gamma + beta.
std::vector<double> layer_norm_reference(const std::vector<float>& x, const std::vector<float>& gamma,
                                         const std::vector<float>& beta, std::size_t rows, std::size_t cols,
                                         double eps) {
    std::vector<double> y(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
        double mean = 0.0, var = 0.0;
        for (std::size_t j = 0; j < cols; ++j) mean += x[r * cols + j];
        mean /= double(cols);
        for (std::size_t j = 0; j < cols; ++j) var += (x[r * cols + j] - mean) * (x[r * cols + j] - mean);
        var /= double(cols);
        for (std::size_t j = 0; j < cols; ++j) {
            y[r * cols + j] = (x[r * cols + j] - mean) / std::sqrt(var + eps) * gamma[j] + beta[j];
        }
    }
    return y;
}

TEST(LayerNorm, HandComputedRow) {
    // x = (1, 2, 3, 4): mean 2.5, biased var 1.25, eps 0 -> xhat = (-1.5, -0.5, 0.5, 1.5) / √1.25.
    const std::vector<float> x = {1, 2, 3, 4}, gamma = {1, 1, 2, 1}, beta = {0, 0, 0, 10};
    std::vector<float> y(4), mean(1), rstd(1);
    attnlab::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), 1, 4,
                                         0.0f);
    const double s = std::sqrt(1.25);
    EXPECT_FLOAT_EQ(mean[0], 2.5f);
    EXPECT_FLOAT_EQ(rstd[0], float(1.0 / s));
    EXPECT_FLOAT_EQ(y[0], float(-1.5 / s));
    EXPECT_FLOAT_EQ(y[1], float(-0.5 / s));
    EXPECT_FLOAT_EQ(y[2], float(2 * 0.5 / s));
    EXPECT_FLOAT_EQ(y[3], float(1.5 / s + 10));
}

TEST(LayerNorm, MatchesReferenceIncludingLargeOffsets) {
    for (std::size_t cols : {1, 3, 8, 17, 64, 100}) {
        const std::size_t rows = 7;
        std::vector<float> x = random_vector(rows * cols, unsigned(cols), -2.0f, 2.0f);
        for (std::size_t j = 0; j < cols; ++j) x[j] += 1000.0f;  // row 0: |mean| >> std
        const std::vector<float> gamma = random_vector(cols, 11, 0.5f, 1.5f), beta = random_vector(cols, 12);
        std::vector<float> y(rows * cols), mean(rows), rstd(rows);
        attnlab::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(),
                                             rows, cols, 1e-5f);
        const std::vector<double> ref = layer_norm_reference(x, gamma, beta, rows, cols, 1e-5);
        for (std::size_t i = 0; i < y.size(); ++i) {
            // Row 0's inputs carry float rounding of 1000 + u (~6e-5 absolute), which the
            // normalisation scales by rstd ~ 1/std.
            ASSERT_NEAR(y[i], ref[i], i < cols ? 1e-4 : 2e-6) << "index " << i << " cols " << cols;
        }
    }
}

TEST(LayerNorm, ConstantRowNormalisesToBeta) {
    const std::vector<float> x(6, 3.0f), gamma(6, 2.0f), beta = {1, 2, 3, 4, 5, 6};
    std::vector<float> y(6);
    attnlab::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), nullptr, nullptr, 1, 6, 1e-5f);
    EXPECT_EQ(y, beta);
}

// Runs forward + backward on random data and checks dx, dgamma, dbeta by central differences.
TEST(LayerNorm, BackwardMatchesFiniteDifferences) {
    const std::size_t rows = 5, cols = 11;
    std::vector<float> x = random_vector(rows * cols, 21, -2.0f, 2.0f);
    std::vector<float> gamma = random_vector(cols, 22, 0.5f, 1.5f), beta = random_vector(cols, 23);
    const std::vector<float> w = random_vector(rows * cols, 24);  // loss = Σ y ⊙ w, so dy = w
    std::vector<float> y(rows * cols), mean(rows), rstd(rows);
    auto loss = [&] {
        attnlab::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(),
                                             rows, cols, 1e-5f);
        return testutil::dot(y, w);
    };
    loss();
    std::vector<float> dx(rows * cols), dgamma(cols, 0.0f), dbeta(cols, 0.0f);
    attnlab::kernels::layer_norm_backward(x.data(), gamma.data(), mean.data(), rstd.data(), w.data(), dx.data(),
                                          dgamma.data(), dbeta.data(), rows, cols);
    testutil::GradCheckOptions options;
    options.h = 1e-2;
    options.atol = 5e-4;
    options.rtol = 5e-3;
    EXPECT_TRUE(testutil::check_gradient("layer_norm dx", loss, x.data(), dx.data(), x.size(), options));
    EXPECT_TRUE(testutil::check_gradient("layer_norm dgamma", loss, gamma.data(), dgamma.data(), cols, options));
    EXPECT_TRUE(testutil::check_gradient("layer_norm dbeta", loss, beta.data(), dbeta.data(), cols, options));
}

TEST(LayerNorm, BackwardAccumulatesIntoDgammaAndDbeta) {
    const std::size_t rows = 3, cols = 9;
    const std::vector<float> x = random_vector(rows * cols, 31), gamma = random_vector(cols, 32),
                             beta = random_vector(cols, 33), dy = random_vector(rows * cols, 34);
    std::vector<float> y(rows * cols), mean(rows), rstd(rows), dx(rows * cols);
    attnlab::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows,
                                         cols, 1e-5f);
    std::vector<float> dgamma(cols, 0.0f), dbeta(cols, 0.0f);
    attnlab::kernels::layer_norm_backward(x.data(), gamma.data(), mean.data(), rstd.data(), dy.data(), dx.data(),
                                          dgamma.data(), dbeta.data(), rows, cols);
    std::vector<float> dgamma2(cols, 1.0f), dbeta2(cols, -1.0f);
    attnlab::kernels::layer_norm_backward(x.data(), gamma.data(), mean.data(), rstd.data(), dy.data(), dx.data(),
                                          dgamma2.data(), dbeta2.data(), rows, cols);
    for (std::size_t j = 0; j < cols; ++j) {
        EXPECT_FLOAT_EQ(dgamma2[j], 1.0f + dgamma[j]);
        EXPECT_FLOAT_EQ(dbeta2[j], -1.0f + dbeta[j]);
    }
}

TEST(LayerNorm, ResultsAreBitIdenticalForOneAndTwoThreads) {
    const std::size_t saved = attnlab::num_threads();
    const std::size_t rows = 700, cols = 96;
    const std::vector<float> x = random_vector(rows * cols, 41), gamma = random_vector(cols, 42),
                             beta = random_vector(cols, 43), dy = random_vector(rows * cols, 44);
    auto run = [&](std::size_t threads) {
        attnlab::set_num_threads(threads);
        std::vector<float> out(rows * cols), mean(rows), rstd(rows), dx(rows * cols), dg(cols, 0.0f), db(cols, 0.0f);
        attnlab::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), out.data(), mean.data(), rstd.data(),
                                             rows, cols, 1e-5f);
        attnlab::kernels::layer_norm_backward(x.data(), gamma.data(), mean.data(), rstd.data(), dy.data(), dx.data(),
                                              dg.data(), db.data(), rows, cols);
        out.insert(out.end(), dx.begin(), dx.end());
        out.insert(out.end(), dg.begin(), dg.end());
        out.insert(out.end(), db.begin(), db.end());
        return out;
    };
    const std::vector<float> one = run(1), two = run(2);
    attnlab::set_num_threads(saved);
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
}

TEST(LayerNorm, TensorWrapperMatchesKernel) {
    const attnlab::Tensor2 x = {{1, 2, 3, 4}, {-1, 0, 1, 5}};
    const attnlab::Tensor1 gamma = {1, 2, 3, 4}, beta = {0, 1, 0, 1};
    const attnlab::Tensor2 y = attnlab::layer_norm(x, gamma, beta, 1e-5f);
    std::vector<float> expected(8);
    attnlab::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), expected.data(), nullptr, nullptr, 2, 4,
                                         1e-5f);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(y.data()[i], expected[i]);
}

TEST(LayerNorm, WrongGammaOrBetaShapeThrowsShapeErrorNamingShapes) {
    const attnlab::Tensor2 x = attnlab::Tensor2::from_shape({4, 8});
    const attnlab::Tensor1 good = attnlab::Tensor1::from_shape({8}), bad = attnlab::Tensor1::from_shape({7});
    try {
        (void)attnlab::layer_norm(x, bad, good);
        FAIL() << "expected ShapeError";
    } catch (const attnlab::ShapeError& e) {
        EXPECT_EQ(std::string(e.what()), "layer_norm: gamma must be (8) to match x (4, 8), got (7)");
    }
    try {
        (void)attnlab::layer_norm(x, good, bad);
        FAIL() << "expected ShapeError";
    } catch (const attnlab::ShapeError& e) {
        EXPECT_EQ(std::string(e.what()), "layer_norm: beta must be (8) to match x (4, 8), got (7)");
    }
}

TEST(LayerNorm, NegativeOrNaNEpsThrowsValueError) {
    const attnlab::Tensor2 x = attnlab::Tensor2::from_shape({2, 3});
    const attnlab::Tensor1 g = attnlab::Tensor1::from_shape({3});
    EXPECT_THROW((void)attnlab::layer_norm(x, g, g, -1e-5f), attnlab::ValueError);
    EXPECT_THROW((void)attnlab::layer_norm(x, g, g, std::numeric_limits<float>::quiet_NaN()), attnlab::ValueError);
}

// ---------------------------------------------------------------- LSTM cell

// The cell in double: gates (rows, 4H) pre-activations, c_prev (rows, H) -> activations, c,
// tanh(c), h.
struct CellReference {
    std::vector<double> act, c, tanh_c, h;
};
CellReference lstm_cell_reference(const std::vector<float>& a, const std::vector<float>& c_prev, std::size_t rows,
                                  std::size_t hidden) {
    CellReference r{std::vector<double>(a.size()), std::vector<double>(c_prev.size()),
                    std::vector<double>(c_prev.size()), std::vector<double>(c_prev.size())};
    const auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    for (std::size_t i = 0; i < rows; ++i) {
        for (std::size_t j = 0; j < hidden; ++j) {
            const std::size_t g0 = i * 4 * hidden + j, k = i * hidden + j;
            const double ig = sig(a[g0]), fg = sig(a[g0 + hidden]), gg = std::tanh(double(a[g0 + 2 * hidden]));
            const double og = sig(a[g0 + 3 * hidden]);
            r.act[g0] = ig, r.act[g0 + hidden] = fg, r.act[g0 + 2 * hidden] = gg, r.act[g0 + 3 * hidden] = og;
            r.c[k] = fg * c_prev[k] + ig * gg;
            r.tanh_c[k] = std::tanh(r.c[k]);
            r.h[k] = og * r.tanh_c[k];
        }
    }
    return r;
}

// H = 21 runs the vector body and leaves a scalar tail with every ISA (4, 8 or 16 lanes); the
// pre-activations span ±12 and include saturating ones (60, -100: e^100 overflows to +inf).
TEST(LstmCell, ForwardMatchesDoubleReferenceIncludingTailAndSaturation) {
    const std::size_t rows = 3, hidden = 21;
    std::vector<float> a = random_vector(rows * 4 * hidden, 21, -12.0f, 12.0f);
    a[0] = 60.0f, a[hidden + 1] = -100.0f, a[2 * hidden + 20] = 60.0f, a[3 * hidden + 5] = -100.0f;
    const std::vector<float> c_prev = random_vector(rows * hidden, 22, -3.0f, 3.0f);
    const CellReference ref = lstm_cell_reference(a, c_prev, rows, hidden);
    std::vector<float> c(rows * hidden), tc(rows * hidden), h(rows * hidden);
    attnlab::kernels::lstm_cell_forward(a.data(), c_prev.data(), c.data(), tc.data(), h.data(), rows, hidden);
    for (std::size_t k = 0; k < a.size(); ++k) ASSERT_NEAR(a[k], ref.act[k], 2e-7) << "gate element " << k;
    for (std::size_t k = 0; k < c.size(); ++k) {
        ASSERT_NEAR(c[k], ref.c[k], 1e-6) << "c " << k;
        ASSERT_NEAR(tc[k], ref.tanh_c[k], 2e-7) << "tanh_c " << k;
        ASSERT_NEAR(h[k], ref.h[k], 2e-7) << "h " << k;
    }
    EXPECT_EQ(a[0], 1.0f);
    EXPECT_EQ(a[hidden + 1], 0.0f);
    EXPECT_EQ(a[2 * hidden + 20], 1.0f);
}

// L = Σ h·wh + Σ c·wc over one step, differentiated through the kernel's backward with
// dh = wh and dc = wc in: the pre-activation gradients and dc_prev against central differences.
TEST(LstmCell, BackwardMatchesFiniteDifferences) {
    const std::size_t rows = 2, hidden = 19;
    std::vector<float> a = random_vector(rows * 4 * hidden, 31, -2.0f, 2.0f);
    std::vector<float> c_prev = random_vector(rows * hidden, 32, -2.0f, 2.0f);
    const std::vector<float> wh = random_vector(rows * hidden, 33), wc = random_vector(rows * hidden, 34);
    std::vector<float> c(rows * hidden), tc(rows * hidden), h(rows * hidden), act(a.size());
    const auto loss = [&] {
        act = a;
        attnlab::kernels::lstm_cell_forward(act.data(), c_prev.data(), c.data(), tc.data(), h.data(), rows, hidden);
        return testutil::dot(h.data(), wh.data(), h.size()) + testutil::dot(c.data(), wc.data(), c.size());
    };
    loss();
    std::vector<float> dc = wc, da(a.size());
    attnlab::kernels::lstm_cell_backward(act.data(), c_prev.data(), tc.data(), wh.data(), dc.data(), da.data(), rows,
                                         hidden);
    testutil::GradCheckOptions options;
    options.h = 1e-3;
    EXPECT_TRUE(testutil::check_gradient("lstm cell da", loss, a.data(), da.data(), a.size(), options));
    EXPECT_TRUE(testutil::check_gradient("lstm cell dc_prev", loss, c_prev.data(), dc.data(), c_prev.size(), options));
}

}  // namespace
