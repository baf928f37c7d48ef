#include "attnlab/kernels/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/thread_pool.hpp"
#include "support/gradcheck.hpp"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_vector(std::size_t n, unsigned seed, float scale = 3.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

TEST(Softmax, HeaderExampleGivesDocumentedWeights) {
    float row[4] = {1, 2, -kInf, 3};
    attnlab::kernels::softmax_rows(row, 1, 4, 4);
    EXPECT_NEAR(row[0], 0.0900306f, 1e-6f);
    EXPECT_NEAR(row[1], 0.2447285f, 1e-6f);
    EXPECT_EQ(row[2], 0.0f);
    EXPECT_NEAR(row[3], 0.6652410f, 1e-6f);
}

TEST(Softmax, RowsSumToOne) {
    for (std::size_t cols : {1, 3, 4, 7, 8, 17, 64, 1000}) {
        const std::size_t rows = 9;
        std::vector<float> x = random_vector(rows * cols, unsigned(cols));
        attnlab::kernels::softmax_rows(x.data(), rows, cols, cols);
        for (std::size_t r = 0; r < rows; ++r) {
            double sum = 0.0;
            for (std::size_t j = 0; j < cols; ++j) {
                EXPECT_GE(x[r * cols + j], 0.0f);
                sum += x[r * cols + j];
            }
            EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << r << " cols " << cols;
        }
    }
}

TEST(Softmax, MatchesDoubleReference) {
    for (std::size_t cols : {1, 2, 5, 8, 13, 31, 32, 33, 255}) {
        const std::size_t rows = 11;
        std::vector<float> x = random_vector(rows * cols, unsigned(100 + cols), 10.0f);
        std::vector<float> ref = x;
        attnlab::kernels::softmax_rows(x.data(), rows, cols, cols);
        attnlab::kernels::softmax_rows_reference(ref.data(), rows, cols, cols);
        for (std::size_t i = 0; i < x.size(); ++i)
            ASSERT_NEAR(x[i], ref[i], 1e-6f) << "index " << i << " cols " << cols;
    }
}

TEST(Softmax, MaskedPositionsGetExactlyZeroWeight) {
    const std::size_t rows = 5, cols = 37;
    std::vector<float> x = random_vector(rows * cols, 3);
    for (std::size_t i = 0; i < x.size(); i += 3) x[i] = -kInf;
    const std::vector<float> input = x;
    attnlab::kernels::softmax_rows(x.data(), rows, cols, cols);
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (input[i] == -kInf) {
            ASSERT_EQ(x[i], 0.0f) << "index " << i;
        } else {
            ASSERT_GT(x[i], 0.0f) << "index " << i;
        }
    }
}

TEST(Softmax, FullyMaskedRowBecomesZerosNotNaN) {
    for (std::size_t cols : {1, 3, 8, 19}) {
        std::vector<float> x(2 * cols, -kInf);
        x[cols] = 0.5f;  // the second row keeps one key
        attnlab::kernels::softmax_rows(x.data(), 2, cols, cols);
        for (std::size_t j = 0; j < cols; ++j) ASSERT_EQ(x[j], 0.0f) << "cols " << cols;
        EXPECT_EQ(x[cols], 1.0f);
        std::vector<float> ref(2 * cols, -kInf);
        attnlab::kernels::softmax_rows_reference(ref.data(), 1, cols, cols);
        for (std::size_t j = 0; j < cols; ++j) ASSERT_EQ(ref[j], 0.0f) << "reference, cols " << cols;
    }
}

TEST(Softmax, HugeFiniteInputsGiveFiniteOutput) {
    const float max = std::numeric_limits<float>::max();
    std::vector<float> x = {1e30f, -1e30f, 0.0f, 1e30f, -1e30f, 5.0f, 1e30f, 1e30f, -1e30f,  // row 0
                            max,   -max,   max,  0.0f,  -max,   1.0f, 2.0f,  -max,  3.0f};   // row 1
    attnlab::kernels::softmax_rows(x.data(), 2, 9, 9);
    for (float v : x) ASSERT_TRUE(std::isfinite(v));
    // Row 0: four equal maxima share the weight; everything else underflows to 0.
    for (std::size_t j : {0, 3, 6, 7}) EXPECT_FLOAT_EQ(x[j], 0.25f);
    for (std::size_t j : {1, 2, 4, 5, 8}) EXPECT_EQ(x[j], 0.0f);
    EXPECT_FLOAT_EQ(x[9], 0.5f);
    EXPECT_FLOAT_EQ(x[11], 0.5f);
}

TEST(Softmax, LeadingDimensionPaddingIsUntouched) {
    const std::size_t rows = 4, cols = 10, ld = 13;
    std::vector<float> x = random_vector(rows * ld, 8);
    const std::vector<float> input = x;
    attnlab::kernels::softmax_rows(x.data(), rows, cols, ld);
    std::vector<float> ref = input;
    attnlab::kernels::softmax_rows_reference(ref.data(), rows, cols, ld);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t j = 0; j < ld; ++j) {
            if (j < cols) {
                EXPECT_NEAR(x[r * ld + j], ref[r * ld + j], 1e-6f);
            } else {
                EXPECT_EQ(x[r * ld + j], input[r * ld + j]) << "padding written at row " << r;
            }
        }
    }
}

TEST(Softmax, ResultsAreBitIdenticalForOneAndTwoThreads) {
    const std::size_t saved = attnlab::num_threads();
    const std::size_t rows = 512, cols = 300;
    const std::vector<float> input = random_vector(rows * cols, 21);
    std::vector<float> one = input, two = input;
    attnlab::set_num_threads(1);
    attnlab::kernels::softmax_rows(one.data(), rows, cols, cols);
    attnlab::set_num_threads(2);
    attnlab::kernels::softmax_rows(two.data(), rows, cols, cols);
    attnlab::set_num_threads(saved);
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
}

TEST(Softmax, BackwardMatchesFiniteDifferences) {
    const std::size_t rows = 3, cols = 13;
    std::vector<float> x = random_vector(rows * cols, 4, 2.0f);
    const std::vector<float> w = random_vector(rows * cols, 5, 1.0f);  // loss = Σ softmax(x) ⊙ w
    std::vector<float> y(x.size()), dx(x.size());
    auto loss = [&] {
        y = x;
        attnlab::kernels::softmax_rows(y.data(), rows, cols, cols);
        return attnlab::testutil::dot(y, w);
    };
    loss();
    attnlab::kernels::softmax_rows_backward(y.data(), /*dy=*/w.data(), dx.data(), rows, cols, cols);
    attnlab::testutil::GradCheckOptions options;
    options.h = 1e-3;
    options.atol = 2e-4;
    EXPECT_TRUE(attnlab::testutil::check_gradient("softmax dx", loss, x.data(), dx.data(), x.size(), options));
}

TEST(Softmax, BackwardGivesMaskedEntriesZeroGradient) {
    const std::size_t rows = 2, cols = 9;
    std::vector<float> y = random_vector(rows * cols, 9);
    y[2] = -kInf;
    std::fill(y.begin() + cols, y.end(), -kInf);  // second row fully masked
    attnlab::kernels::softmax_rows(y.data(), rows, cols, cols);
    const std::vector<float> dy = random_vector(rows * cols, 10);
    std::vector<float> dx(dy.size());
    attnlab::kernels::softmax_rows_backward(y.data(), dy.data(), dx.data(), rows, cols, cols);
    EXPECT_EQ(dx[2], 0.0f);
    for (std::size_t j = cols; j < 2 * cols; ++j) EXPECT_EQ(dx[j], 0.0f);
}

TEST(Softmax, BackwardMayOverwriteItsUpstreamGradient) {
    const std::size_t rows = 6, cols = 21;
    std::vector<float> y = random_vector(rows * cols, 6);
    attnlab::kernels::softmax_rows(y.data(), rows, cols, cols);
    std::vector<float> dy = random_vector(rows * cols, 7);
    std::vector<float> dx(dy.size());
    attnlab::kernels::softmax_rows_backward(y.data(), dy.data(), dx.data(), rows, cols, cols);
    attnlab::kernels::softmax_rows_backward(y.data(), dy.data(), dy.data(), rows, cols, cols);
    EXPECT_EQ(std::memcmp(dx.data(), dy.data(), dx.size() * sizeof(float)), 0);
}

TEST(Softmax, TensorWrapperReturnsANewTensor) {
    const attnlab::Tensor2 x = {{0.0f, 0.0f}, {0.0f, std::log(3.0f)}};
    const attnlab::Tensor2 y = attnlab::softmax_rows(x);
    EXPECT_FLOAT_EQ(y(0, 0), 0.5f);
    EXPECT_FLOAT_EQ(y(0, 1), 0.5f);
    EXPECT_FLOAT_EQ(y(1, 0), 0.25f);
    EXPECT_FLOAT_EQ(y(1, 1), 0.75f);
    EXPECT_EQ(x(1, 0), 0.0f);  // input untouched
}

}  // namespace
