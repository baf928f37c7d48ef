// Head detectors (attnlab/interp/detectors.hpp): the patterns of known sequences, scores of
// hand-made attention maps whose answer is known, and every head of small engine decoders and a
// GPT-2 checkpoint against a direct computation from the model's recorded weights.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <vector>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "attnlab/interp/detectors.hpp"
#include "interp_models.hpp"

namespace attnlab {
namespace {

using interp::detection_pattern;
using interp::pattern_score;

// Causal (T, T) weights with 1/(i + 1) on every key j <= i.
Tensor2 uniform_causal(std::size_t t) {
    Tensor2 w = xt::zeros<float>({t, t});
    for (std::size_t i = 0; i < t; ++i)
        for (std::size_t j = 0; j <= i; ++j) w(i, j) = 1.0f / static_cast<float>(i + 1);
    return w;
}

TEST(HeadPatterns, MarkTheKeysOfEachDefinition) {
    const std::vector<std::int32_t> tokens{5, 7, 9, 5, 7, 5};
    const Tensor2 dup = detection_pattern(HeadPattern::duplicate_token, tokens);
    const Tensor2 ind = detection_pattern(HeadPattern::induction, tokens);
    // query 5 (token 5): earlier 5s at 0 and 3; the keys after them, 1 and 4
    EXPECT_EQ(dup(5, 0), 1.0f);
    EXPECT_EQ(dup(5, 3), 1.0f);
    EXPECT_EQ(xt::sum(xt::view(dup, 5, xt::all()))(), 2.0f);
    EXPECT_EQ(ind(5, 1), 1.0f);
    EXPECT_EQ(ind(5, 4), 1.0f);
    EXPECT_EQ(xt::sum(xt::view(ind, 5, xt::all()))(), 2.0f);
    EXPECT_EQ(xt::sum(xt::view(dup, 2, xt::all()))(), 0.0f);  // token 9 occurs once
    EXPECT_EQ(detection_pattern(HeadPattern::previous_token, tokens)(3, 2), 1.0f);
    EXPECT_EQ(xt::sum(detection_pattern(HeadPattern::previous_token, tokens))(), 5.0f);
    EXPECT_EQ(xt::sum(detection_pattern(HeadPattern::first_token, tokens))(), 6.0f);
    EXPECT_EQ(xt::sum(detection_pattern(HeadPattern::self, tokens))(), 6.0f);
    // A token repeated at once: the induction key after position i-1 is i itself.
    EXPECT_EQ(detection_pattern(HeadPattern::induction, {4, 4})(1, 1), 1.0f);
}

TEST(HeadScore, APerfectPreviousTokenHeadScoresOne) {
    const std::size_t t = 6;
    Tensor2 w = xt::zeros<float>({t, t});
    w(0, 0) = 1.0f;
    for (std::size_t i = 1; i < t; ++i) w(i, i - 1) = 1.0f;
    const std::vector<std::int32_t> tokens{1, 2, 3, 4, 5, 6};
    EXPECT_DOUBLE_EQ(*pattern_score(w, detection_pattern(HeadPattern::previous_token, tokens)), 1.0);
    EXPECT_DOUBLE_EQ(*pattern_score(w, detection_pattern(HeadPattern::self, tokens)), 0.0);  // row 0 left out
    // first_token: only row 1 puts its weight on key 0
    EXPECT_DOUBLE_EQ(*pattern_score(w, detection_pattern(HeadPattern::first_token, tokens)), 1.0 / 5.0);
    // no token repeats: no row has a duplicate or induction key
    EXPECT_FALSE(pattern_score(w, detection_pattern(HeadPattern::duplicate_token, tokens)).has_value());
    EXPECT_FALSE(pattern_score(w, detection_pattern(HeadPattern::induction, tokens)).has_value());
}

TEST(HeadScore, UniformAttentionScoresTheMeanShareOfEachRow) {
    const Tensor2 w = uniform_causal(4);
    const std::vector<std::int32_t> tokens{1, 2, 1, 2};
    const double rows = (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3;
    EXPECT_NEAR(*pattern_score(w, detection_pattern(HeadPattern::previous_token, tokens)), rows, 1e-7);
    EXPECT_NEAR(*pattern_score(w, detection_pattern(HeadPattern::first_token, tokens)), rows, 1e-7);
    // duplicate rows: 2 (one earlier 1 of 3 keys) and 3 (one earlier 2 of 4 keys)
    EXPECT_NEAR(*pattern_score(w, detection_pattern(HeadPattern::duplicate_token, tokens)), (1.0 / 3 + 1.0 / 4) / 2, 1e-7);
}

TEST(HeadScore, AnInductionHeadOnARepeatedSequenceScoresOne) {
    const std::vector<std::int32_t> tokens{3, 8, 1, 6, 3, 8, 1, 6};
    Tensor2 w = uniform_causal(8);  // first half: spread
    for (std::size_t i = 4; i < 8; ++i) {
        for (std::size_t j = 0; j < 8; ++j) w(i, j) = 0.0f;
        w(i, i - 3) = 1.0f;  // the token after the earlier occurrence
    }
    EXPECT_DOUBLE_EQ(*pattern_score(w, detection_pattern(HeadPattern::induction, tokens)), 1.0);
    EXPECT_DOUBLE_EQ(*pattern_score(w, detection_pattern(HeadPattern::duplicate_token, tokens)), 0.0);
}

TEST(HeadScore, SharesAreOfTheRowsOwnWeightAndEmptyRowsAreLeftOut) {
    // relu-like rows: unnormalised weights, one row all zero
    Tensor2 w = xt::zeros<float>({3, 3});
    w(0, 0) = 2.0f;
    w(1, 0) = 1.0f, w(1, 1) = 3.0f;  // share on key 0: 1/4
    const std::vector<std::int32_t> tokens{1, 2, 3};
    EXPECT_DOUBLE_EQ(*pattern_score(w, detection_pattern(HeadPattern::previous_token, tokens)), 0.25);
    EXPECT_THROW(pattern_score(w, xt::zeros<float>({3, 2})), ShapeError);
}

TEST(RandomRepeat, IsTheSameHalfTwiceAndSeeded) {
    const auto a = interp::random_repeat(20, 13, 7);
    ASSERT_EQ(a.size(), 40u);
    for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(a[i], a[20 + i]);
    for (auto id : a) EXPECT_TRUE(id >= 0 && id < 13);
    EXPECT_EQ(a, interp::random_repeat(20, 13, 7));
    EXPECT_NE(a, interp::random_repeat(20, 13, 8));
    EXPECT_THROW(interp::random_repeat(0, 13, 1), ValueError);
}

// The definitions computed straight from a model's recorded weights (the math path's, through
// a TraceRecorder per block), pattern by pattern, without the pattern matrices.
double direct_score(const Tensor2& w, const std::vector<std::int32_t>& tok, HeadPattern p, bool& any_row) {
    double sum = 0.0;
    std::size_t rows = 0;
    for (std::size_t i = 1; i < tok.size(); ++i) {
        double on = 0.0;
        bool has = false;
        for (std::size_t j = 0; j <= i; ++j) {
            bool in = false;
            switch (p) {
                case HeadPattern::previous_token: in = j + 1 == i; break;
                case HeadPattern::duplicate_token: in = j < i && tok[j] == tok[i]; break;
                case HeadPattern::induction: in = j >= 1 && j - 1 < i && tok[j - 1] == tok[i]; break;
                case HeadPattern::first_token: in = j == 0; break;
                case HeadPattern::self: in = j == i; break;
            }
            if (in) has = true, on += w(i, j);
        }
        if (has) sum += on, ++rows;  // softmax rows sum to 1
    }
    any_row = rows > 0;
    return rows ? sum / rows : 0.0;
}

void expect_direct_scores(const DecoderLM& lm, const std::vector<std::int32_t>& tokens) {
    const auto heads = interp::detect_heads(lm, tokens);
    const ModelConfig& c = lm.config();
    ASSERT_EQ(heads.size(), c.num_layers * c.num_heads);
    std::deque<TraceRecorder> recorders(c.num_layers);  // recorders hold a mutex: they never move
    std::vector<StageObserver*> observers;
    for (auto& r : recorders) observers.push_back(&r);
    Index2 ids = Index2::from_shape({1, tokens.size()});
    std::copy(tokens.begin(), tokens.end(), ids.data());
    lm.forward_observed(ids, observers);
    for (const auto& h : heads) {
        const Tensor2& w = recorders[h.layer].get(Stage::weights, 0, static_cast<std::ptrdiff_t>(h.head));
        for (const auto& v : choice_values<HeadPattern>()) {
            bool any = false;
            const double want = direct_score(w, tokens, v.value, any);
            ASSERT_EQ(h.score(v.value).has_value(), any) << v.name;
            if (any) EXPECT_NEAR(*h.score(v.value), want, 1e-5) << "head " << h.layer << "." << h.head << " " << v.name;
        }
    }
}

TEST(DetectHeads, EngineDecodersEqualADirectComputation) {
    expect_direct_scores(test::tiny_decoder(NormPlacement::pre), interp::random_repeat(9, 13, 2));
    expect_direct_scores(test::tiny_decoder(NormPlacement::post, 5, PositionalKind::rope), {1, 4, 1, 4, 2, 7, 2, 0, 1});
}

TEST(DetectHeads, Gpt2CheckpointEqualsADirectComputation) {
    const DecoderLM gpt = test::gpt2_fixture();
    expect_direct_scores(gpt, interp::random_repeat(10, gpt.config().vocab_size, 4));
}

TEST(DetectHeads, RefusesSequencesTheModelCannotRead) {
    const DecoderLM lm = test::tiny_decoder();
    EXPECT_THROW(interp::detect_heads(lm, {}), ValueError);
    EXPECT_THROW(interp::detect_heads(lm, {1, 13}), ValueError);
    EXPECT_THROW(interp::detect_heads(lm, std::vector<std::int32_t>(33, 1)), ValueError);  // 32 learned positions
}

}  // namespace
}  // namespace attnlab
