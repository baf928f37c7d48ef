// Head ablation (attnlab/interp/ablation.hpp): a zero-ablated head equals the model with that
// head's W_O columns set to zero, a mean-ablated one the model with those columns folded into
// W_O's bias; the loss and KL are their definitions; bad requests are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attnlab/interp/ablation.hpp"
#include "attnlab/interp/run.hpp"
#include "interp_models.hpp"

namespace attnlab {
namespace {

const std::vector<std::int32_t> kTokens{4, 2, 9, 4, 2, 9, 1, 3};

Tensor2 logits_of(const DecoderLM& lm, const std::vector<std::int32_t>& tokens) { return interp::run(lm, tokens).logits; }

void expect_near(const Tensor2& a, const Tensor2& b, double tol) {
    ASSERT_EQ(a.shape(), b.shape());
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a.data()[i], b.data()[i], tol) << i;
}

TEST(NextTokenLoss, IsTheMeanCrossEntropyOfEachNextToken) {
    Tensor2 logits = {{0.0f, 1.0f}, {2.0f, 0.0f}, {5.0f, 5.0f}};
    const double want = ((std::log(1 + std::exp(-1.0)) + 0.0) +            // row 0 -> token 1: -log σ(1)
                         (std::log(std::exp(2.0) + 1.0) - 0.0)) / 2;      // row 1 -> token 1
    EXPECT_NEAR(interp::next_token_loss(logits, {0, 1, 1}), want, 1e-12);
    EXPECT_NEAR(interp::kl_divergence(logits, logits, 1), 0.0, 1e-15);
    Tensor2 other = {{0.0f, 0.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}};
    const double p = 1 / (1 + std::exp(-2.0));  // row 1: p = (σ(2), 1 - σ(2)) against (1/2, 1/2)
    EXPECT_NEAR(interp::kl_divergence(logits, other, 1), p * std::log(2 * p) + (1 - p) * std::log(2 * (1 - p)), 1e-7);
}

TEST(Ablate, ZeroIsTheModelWithoutTheHeadsColumnsOfW_O) {
    const DecoderLM lm = test::tiny_decoder();
    const interp::Ablation a = interp::ablate(lm, kTokens, {{1, 0}}, AblationMethod::zero);
    DecoderLM cut = lm;
    auto& w = cut.trunk.blocks[1].attn.out_proj.weight;  // (C, C), head 0 = columns 0..7
    for (std::size_t o = 0; o < 16; ++o)
        for (std::size_t k = 0; k < 8; ++k) w(o, k) = 0.0f;
    const Tensor2 want = logits_of(cut, kTokens);
    EXPECT_NEAR(a.loss_ablated, interp::next_token_loss(want, kTokens), 1e-5);
    EXPECT_NEAR(a.loss_clean, interp::next_token_loss(logits_of(lm, kTokens), kTokens), 1e-9);
    const Tensor1 p = interp::softmax_row(want, kTokens.size() - 1);
    for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(a.probs_ablated(i), p(i), 1e-5);
    EXPECT_GT(a.kl_mean, 0.0);
}

TEST(Ablate, MeanIsTheHeadsMeanOutputFoldedIntoTheBias) {
    const DecoderLM lm = test::tiny_decoder(NormPlacement::pre, 11);
    const interp::Run clean = interp::run(lm, kTokens);
    const interp::Ablation a = interp::ablate(lm, kTokens, {{0, 1}, {1, 0}}, AblationMethod::mean);
    DecoderLM folded = lm;
    for (const auto& [layer, head] : std::vector<std::pair<std::size_t, std::size_t>>{{0, 1}, {1, 0}}) {
        // the mean z of the head, over the clean run's positions (layer 1's from the clean run,
        // as ablation replaces with the clean mean)
        auto& proj = folded.trunk.blocks[layer].attn.out_proj;
        for (std::size_t o = 0; o < 16; ++o) {
            double b = 0.0;
            for (std::size_t k = head * 8; k < head * 8 + 8; ++k) {
                double mean = 0.0;
                for (std::size_t i = 0; i < kTokens.size(); ++i) mean += clean.head_outputs[layer](i, k);
                b += double(proj.weight(o, k)) * mean / kTokens.size();
            }
            proj.bias(o) += static_cast<float>(b);
        }
        for (std::size_t o = 0; o < 16; ++o)
            for (std::size_t k = head * 8; k < head * 8 + 8; ++k) proj.weight(o, k) = 0.0f;
    }
    EXPECT_NEAR(a.loss_ablated, interp::next_token_loss(logits_of(folded, kTokens), kTokens), 1e-5);
}

TEST(Ablate, EachHeadAloneMatchesAblatingItByName) {
    const DecoderLM gpt = test::gpt2_fixture();
    const std::vector<std::int32_t> tokens{10, 20, 30, 10, 20, 30};
    const auto each = interp::ablate_each(gpt, tokens, AblationMethod::zero);
    ASSERT_EQ(each.size(), 4u);
    const interp::Ablation one = interp::ablate(gpt, tokens, {{1, 1}}, AblationMethod::zero);
    EXPECT_DOUBLE_EQ(each[3].loss_ablated, one.loss_ablated);
    EXPECT_DOUBLE_EQ(each[3].kl_mean, one.kl_mean);
}

TEST(Ablate, RefusesBadRequestsByName) {
    const DecoderLM lm = test::tiny_decoder();
    EXPECT_THROW(interp::ablate(lm, kTokens, {{0, 2}}, AblationMethod::zero), ValueError);
    EXPECT_THROW(interp::ablate(lm, kTokens, {{2, 0}}, AblationMethod::zero), ValueError);
    EXPECT_THROW(interp::ablate(lm, kTokens, {{0, 1}, {0, 1}}, AblationMethod::zero), ValueError);
    EXPECT_THROW(interp::ablate(lm, kTokens, {}, AblationMethod::zero), ValueError);
    EXPECT_THROW(interp::ablate(lm, {3}, {{0, 0}}, AblationMethod::zero), ValueError);
}

}  // namespace
}  // namespace attnlab
