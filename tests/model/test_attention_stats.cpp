#include "attnlab/model/attention_stats.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/kernels/softmax.hpp"

namespace attnlab {
namespace {

TEST(AttentionStatsRecorder, MeasuresLargestScoreAndEntropy) {
    AttentionStatsRecorder stats(2);
    const float scaled[] = {1.0f, -7.5f, 2.0f, 0.5f};
    stats.on_stage(StageView{Stage::scaled, 0, 1, 2, 2, 2, scaled});
    const float uniform[] = {0.5f, 0.5f, 1.0f, 0.0f};  // entropies ln 2 and 0
    stats.on_stage(StageView{Stage::weights, 0, 1, 2, 2, 2, uniform});
    const float masked[] = {0.0f, 0.0f};  // a fully masked row: skipped
    stats.on_stage(StageView{Stage::weights, 1, 1, 1, 2, 2, masked});
    EXPECT_EQ(stats.max_abs_score(), 7.5f);
    const Tensor1 e = stats.mean_entropy();
    EXPECT_EQ(e(0), 0.0f);
    EXPECT_NEAR(e(1), std::log(2.0) / 2, 1e-6);
    EXPECT_FALSE(stats.wants(Stage::q));
}

// The entropy from the masked scores (lse - Σ w·x, one log per row) equals -Σ w ln w of the
// weights, with masked keys (-inf), an additive bias in the scores, a fully masked row, and
// scores large enough that the weights are nearly one-hot.
TEST(AttentionStatsRecorder, EntropyFromTheMaskedScoresEqualsTheDirectSum) {
    const std::size_t rows = 4, cols = 6;
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const std::vector<float> x = {0.3f,  -1.2f, 2.0f,  0.7f,  -kInf, 1.1f,   // one masked key
                                  -kInf, -kInf, -kInf, -kInf, -kInf, -kInf,  // no visible key
                                  40.0f, -3.0f, 25.0f, 0.0f,  12.5f, 39.0f,  // large scores
                                  0.0f,  0.0f,  0.0f,  0.0f,  0.0f,  0.0f};  // uniform: ln 6
    std::vector<float> w = x;
    kernels::softmax_rows(w.data(), rows, cols, cols);
    double expected = 0.0;
    std::size_t counted = 0;
    for (std::size_t i = 0; i < rows; ++i) {
        double h = 0.0, total = 0.0;
        for (std::size_t j = 0; j < cols; ++j) {
            const double wij = w[i * cols + j];
            total += wij;
            if (wij > 0) h -= wij * std::log(wij);
        }
        if (total == 0.0) continue;
        expected += h;
        ++counted;
    }
    ASSERT_EQ(counted, 3u);
    expected /= static_cast<double>(counted);

    AttentionStatsRecorder with_scores(1), weights_only(1);
    with_scores.reserve_score_slots(rows * cols);
    with_scores.on_stage(StageView{Stage::masked, 0, 0, rows, cols, cols, x.data()});
    with_scores.on_stage(StageView{Stage::weights, 0, 0, rows, cols, cols, w.data()});
    weights_only.on_stage(StageView{Stage::weights, 0, 0, rows, cols, cols, w.data()});
    EXPECT_NEAR(with_scores.mean_entropy(0), expected, 1e-5);
    EXPECT_NEAR(weights_only.mean_entropy(0), expected, 1e-6);
}

}  // namespace
}  // namespace attnlab
