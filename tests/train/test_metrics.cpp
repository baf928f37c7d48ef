#include "attnlab/train/metrics.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(AttentionEntropy, OneHotRowsHaveZeroAndUniformRowsLogS) {
    const float one_hot[2 * 4] = {0, 1, 0, 0, 1, 0, 0, 0};
    EXPECT_FLOAT_EQ(attention_entropy(one_hot, 2, 4), 0.0f);
    const float uniform[2 * 4] = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
    EXPECT_FLOAT_EQ(attention_entropy(uniform, 2, 4), std::log(4.0f));
}

TEST(AttentionEntropy, IsTheMeanOverRowsAndIgnoresZeroWeights) {
    // Row 0: causal first query, all weight on key 0 (entropy 0). Row 1: (0.5, 0.5, 0) -> ln 2.
    const float weights[2 * 3] = {1, 0, 0, 0.5f, 0.5f, 0};
    EXPECT_FLOAT_EQ(attention_entropy(weights, 2, 3), 0.5f * std::log(2.0f));
    const float all_masked[3] = {0, 0, 0};
    EXPECT_FLOAT_EQ(attention_entropy(all_masked, 1, 3), 0.0f);
}

TEST(AttentionEntropy, EmptyShapeThrowsNamingIt) {
    const float w[1] = {1};
    try {
        attention_entropy(w, 0, 4);
        ADD_FAILURE();
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("(0, 4)"), std::string::npos) << e.what();
    }
}

TEST(AttentionEntropy, HeadEntropiesAverageEachHeadOverTheBatch) {
    // (B=2, H=2, T=1, S=2): head 0 is one-hot in both examples, head 1 uniform in one of them.
    const float weights[2 * 2 * 1 * 2] = {1, 0, 0.5f, 0.5f,  // batch 0: head 0, head 1
                                          0, 1, 1, 0};       // batch 1
    const std::vector<float> h = head_entropies(weights, 2, 2, 1, 2);
    ASSERT_EQ(h.size(), 2u);
    EXPECT_FLOAT_EQ(h[0], 0.0f);
    EXPECT_FLOAT_EQ(h[1], 0.5f * std::log(2.0f));
    EXPECT_THROW(head_entropies(weights, 2, 0, 1, 2), ShapeError);
}

TEST(LargestScore, SkipsMaskedAndNonFiniteScores) {
    const float scores[5] = {-kInf, 3.5f, kNaN, -2.0f, kInf};
    EXPECT_FLOAT_EQ(largest_score(scores, 5), 3.5f);
    const float masked[2] = {-kInf, -kInf};
    EXPECT_EQ(largest_score(masked, 2), -kInf);
    EXPECT_EQ(largest_score(nullptr, 0), -kInf);
}

TEST(TokenAccuracy, CountsOnlyTargetsThatAreNotMinusOne) {
    // (N=4, V=3): argmax 2, 0, 1, 1.
    const float logits[4 * 3] = {0, 1, 2, 5, 1, 0, 0, 3, 1, 0, 9, 1};
    const std::int32_t targets[4] = {2, -1, 0, 1};
    const TokenCounts c = count_correct_tokens(logits, targets, 4, 3);
    EXPECT_EQ(c.counted, 3u);
    EXPECT_EQ(c.correct, 2u);
    EXPECT_FLOAT_EQ(token_accuracy(logits, targets, 4, 3), 2.0f / 3.0f);
}

TEST(TokenAccuracy, TiesGoToTheFirstMaximumAndNaNWinsLikeTorchArgmax) {
    const float logits[2 * 3] = {1, 1, 0, 0, kNaN, 5};
    const std::int32_t first[2] = {0, 1};
    EXPECT_FLOAT_EQ(token_accuracy(logits, first, 2, 3), 1.0f);
    const std::int32_t second[2] = {1, 2};
    EXPECT_FLOAT_EQ(token_accuracy(logits, second, 2, 3), 0.0f);
}

TEST(TokenAccuracy, NoCountedTargetGivesNaN) {
    const float logits[2] = {0, 1};
    const std::int32_t ignored[1] = {-1};
    EXPECT_TRUE(std::isnan(token_accuracy(logits, ignored, 1, 2)));
    EXPECT_TRUE(std::isnan(token_accuracy(logits, ignored, 0, 2)));
}

TEST(TokenAccuracy, TargetOutsideTheVocabularyThrowsNamingIt) {
    const float logits[2 * 2] = {0, 1, 1, 0};
    const std::int32_t targets[2] = {1, 2};
    try {
        count_correct_tokens(logits, targets, 2, 2);
        ADD_FAILURE();
    } catch (const ValueError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("target 2 at index 1"), std::string::npos) << m;
    }
    EXPECT_THROW(count_correct_tokens(logits, targets, 2, 0), ShapeError);
}

}  // namespace
}  // namespace attnlab
