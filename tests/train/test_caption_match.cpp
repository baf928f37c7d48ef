// The caption_match task: shapes of the batch, the vocabulary and decode, determinism, balanced
// labels, non-matching captions differing in one word, position words that agree with the ink,
// and the options it refuses.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/train/caption_match.hpp"
#include "attnlab/train/tasks.hpp"

namespace attnlab {
namespace {

TEST(CaptionMatch, BatchesHoldImagesCaptionsAndLabels) {
    const auto task = make_task("caption_match");
    EXPECT_EQ(task->input(), TaskInput::paired);
    EXPECT_EQ(task->kind(), TaskKind::classification);
    EXPECT_EQ(task->image_size(), 16u);
    EXPECT_EQ(task->seq_len(), 4u);
    EXPECT_EQ(task->vocab_size(), 12u);
    EXPECT_EQ(task->num_classes(), 2u);
    Rng rng(1);
    const Batch b = task->sample(8, rng);
    EXPECT_EQ(b.pixels.shape(0), 8u);
    EXPECT_EQ(b.pixels.shape(1), 16u);
    EXPECT_EQ(b.tokens.shape(0), 8u);
    EXPECT_EQ(b.tokens.shape(1), 4u);
    EXPECT_EQ(b.labels.size(), 8u);
    EXPECT_EQ(b.targets.size(), 0u);
    EXPECT_EQ(b.padding.size(), 0u);
    Rng again(1);
    const Batch c = task->sample(8, again);
    EXPECT_EQ(b.tokens, c.tokens);
    EXPECT_EQ(b.pixels, c.pixels);
    EXPECT_EQ(b.labels, c.labels);
}

TEST(CaptionMatch, DecodeRendersTheWords) {
    const auto task = make_task("caption_match");
    const std::vector<std::string> words = caption_match_words(6);
    ASSERT_EQ(words.size(), 12u);
    EXPECT_EQ(words[1], "circle");
    EXPECT_EQ(words[6], "small");
    EXPECT_EQ(words[11], "right");
    const std::int32_t caption[4] = {7, 1, 8, 10};
    EXPECT_EQ(task->decode(caption, 4), "large circle top left");
    const std::int32_t bad[1] = {12};
    EXPECT_THROW((void)task->decode(bad, 1), ValueError);
}

// Every caption is [size, kind, vertical, horizontal] from the right groups of the vocabulary;
// labels are about half 1.
TEST(CaptionMatch, CaptionsAreWellFormedAndLabelsBalanced) {
    const auto task = make_task("caption_match");
    Rng rng(5);
    const Batch b = task->sample(2000, rng);
    std::size_t ones = 0;
    for (std::size_t i = 0; i < 2000; ++i) {
        ones += b.labels(i) == 1;
        EXPECT_TRUE(b.tokens(i, 0) == 6 || b.tokens(i, 0) == 7);
        EXPECT_TRUE(b.tokens(i, 1) >= 0 && b.tokens(i, 1) < 6);
        EXPECT_TRUE(b.tokens(i, 2) == 8 || b.tokens(i, 2) == 9);
        EXPECT_TRUE(b.tokens(i, 3) == 10 || b.tokens(i, 3) == 11);
    }
    EXPECT_GT(ones, 900u);
    EXPECT_LT(ones, 1100u);
}

// The shapes of the default classes are symmetric about their centre, so the centroid of the ink
// lies in the half a matching caption names (up to the pixel grid: a margin of one pixel).
TEST(CaptionMatch, MatchingCaptionsNameTheHalvesTheInkIsIn) {
    const auto task = make_task("caption_match");
    Rng rng(9);
    const Batch b = task->sample(400, rng);
    std::size_t checked = 0, agree = 0;
    for (std::size_t i = 0; i < 400; ++i) {
        if (b.labels(i) != 1) continue;
        double sx = 0, sy = 0, total = 0;
        for (std::size_t y = 0; y < 16; ++y)
            for (std::size_t x = 0; x < 16; ++x) {
                const double ink = b.pixels(i, y, x) > 0.5f ? b.pixels(i, y, x) : 0.0;
                sx += ink * (x + 0.5);
                sy += ink * (y + 0.5);
                total += ink;
            }
        const double cx = sx / total, cy = sy / total;
        if (std::abs(cx - 8.0) < 1.0 || std::abs(cy - 8.0) < 1.0) continue;  // too close to call
        ++checked;
        const bool bottom = b.tokens(i, 2) == 9, right = b.tokens(i, 3) == 11;
        agree += (cy > 8.0) == bottom && (cx > 8.0) == right;
    }
    EXPECT_GT(checked, 50u);
    EXPECT_EQ(agree, checked);
}

TEST(CaptionMatch, OptionsOutsideTheirRangesAreRefused) {
    TaskOptions o;
    o.length = 8;
    EXPECT_THROW((void)make_task("caption_match", o), ConfigError);
    o.length = 16;
    o.vocab = 11;
    EXPECT_THROW((void)make_task("caption_match", o), ConfigError);
    o.vocab.reset();
    o.k = 2;
    EXPECT_THROW((void)make_task("caption_match", o), ConfigError);
    const auto names = task_names();
    EXPECT_NE(std::find(names.begin(), names.end(), "caption_match"), names.end());
}

}  // namespace
}  // namespace attnlab
