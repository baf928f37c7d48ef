// Activation patching (attnlab/interp/patching.hpp): patching the embedding row where two prompts
// differ restores everything and elsewhere nothing; a head's share is its definition computed
// from runs with that head copied; prompts of different lengths are refused by name.
#include <gtest/gtest.h>

#include <vector>

#include "attnlab/interp/patching.hpp"
#include "attnlab/interp/run.hpp"
#include "interp_models.hpp"

namespace attnlab {
namespace {

const std::vector<std::int32_t> kClean{5, 1, 7, 2, 5, 1};
const std::vector<std::int32_t> kCorrupted{5, 1, 3, 2, 5, 1};  // position 2 differs

double diff_at_end(const Tensor2& logits, std::int32_t a, std::int32_t b) {
    const std::size_t last = logits.shape(0) - 1;
    return double(logits(last, a)) - double(logits(last, b));
}

TEST(Patch, TheEmbeddingWhereThePromptsDifferRestoresAll) {
    const DecoderLM lm = test::tiny_decoder();
    const interp::Patching p = interp::patch(lm, kClean, kCorrupted, 7, 3);
    ASSERT_EQ(p.residual.shape(0), 2u);
    ASSERT_EQ(p.residual.shape(1), kClean.size());
    EXPECT_NEAR(p.residual(0, 2), 1.0, 1e-5);  // the corrupted run becomes the clean one
    for (std::size_t i = 0; i < kClean.size(); ++i) {
        if (i != 2) EXPECT_EQ(p.residual(0, i), 0.0f) << i;  // the same row as before
    }
    EXPECT_NEAR(p.clean_diff, diff_at_end(interp::run(lm, kClean).logits, 7, 3), 1e-6);
}

TEST(Patch, AHeadsShareIsItsDefinition) {
    const DecoderLM gpt = test::gpt2_fixture();
    const std::vector<std::int32_t> clean{11, 40, 12, 41, 11}, corrupted{11, 40, 13, 41, 11};
    const interp::Patching p = interp::patch(gpt, clean, corrupted, 40, 41);
    const interp::Run c = interp::run(gpt, clean);
    const double dc = diff_at_end(c.logits, 40, 41), dx = diff_at_end(interp::run(gpt, corrupted).logits, 40, 41);
    for (std::size_t l = 0; l < 2; ++l) {
        for (std::size_t h = 0; h < 2; ++h) {
            interp::Edits e;
            e.heads.push_back({l, h, interp::head_slice(c.head_outputs[l], h, 16)});
            const double dp = diff_at_end(interp::run(gpt, corrupted, e).logits, 40, 41);
            EXPECT_NEAR(p.heads(l, h), (dp - dx) / (dc - dx), 1e-5) << l << "." << h;
        }
    }
    // Nothing before the corrupted position changes: its residual rows restore nothing.
    EXPECT_EQ(p.residual(1, 0), 0.0f);
    EXPECT_EQ(p.residual(1, 1), 0.0f);
}

TEST(Patch, PromptsOfDifferentLengthsAreRefusedByName) {
    const DecoderLM lm = test::tiny_decoder();
    try {
        interp::patch(lm, {1, 2, 3}, {1, 2}, 1, 2);
        FAIL() << "accepted";
    } catch (const interp::PatchingError& e) {
        EXPECT_NE(std::string(e.what()).find("clean prompt has 3 tokens and the corrupted one 2"), std::string::npos) << e.what();
    }
    EXPECT_THROW(interp::patch(lm, kClean, kClean, 7, 3), interp::PatchingError);  // nothing to restore
    EXPECT_THROW(interp::patch(lm, kClean, kCorrupted, 7, 7), ValueError);
    EXPECT_THROW(interp::patch(lm, kClean, kCorrupted, 13, 3), ValueError);
}

}  // namespace
}  // namespace attnlab
