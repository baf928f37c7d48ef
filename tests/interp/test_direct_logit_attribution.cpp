// Direct logit attribution (attnlab/interp/direct_logit_attribution.hpp): the parts sum to the
// logit; a head's part is the frozen final LayerNorm and unembedding of z_h·W_O,hᵀ computed by
// hand; post-LN models are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attnlab/interp/direct_logit_attribution.hpp"
#include "attnlab/interp/run.hpp"
#include "interp_models.hpp"

namespace attnlab {
namespace {

const std::vector<std::int32_t> kTokens{1, 9, 4, 1, 9};

TEST(DirectLogitAttribution, ThePartsSumToTheLogit) {
    const DecoderLM lm = test::tiny_decoder();
    const DecoderLM gpt = test::gpt2_fixture();
    for (const DecoderLM* m : {&lm, &gpt}) {
        for (std::int32_t token : {0, 4, 9}) {
            const interp::Attribution a = interp::direct_logit_attribution(*m, kTokens, 4, token);
            EXPECT_NEAR(a.total(), a.logit, 1e-4 * std::max(1.0, std::abs(a.logit))) << token;
            EXPECT_EQ(a.heads.shape(0), 2u);
            EXPECT_EQ(a.mlp.size(), 2u);
        }
    }
}

TEST(DirectLogitAttribution, AHeadsPartIsItsFrozenReadout) {
    const DecoderLM gpt = test::gpt2_fixture();
    const std::size_t pos = 2, c = gpt.config().d_model, d = 16;
    const std::int32_t token = 7;
    const interp::Attribution a = interp::direct_logit_attribution(gpt, kTokens, pos, token);
    const interp::Run r = interp::run(gpt, kTokens);
    const LayerNorm& ln = gpt.trunk.ln_f;
    double mean = 0.0, var = 0.0;
    for (std::size_t k = 0; k < c; ++k) mean += r.residuals[2](pos, k);
    mean /= c;
    for (std::size_t k = 0; k < c; ++k) var += std::pow(r.residuals[2](pos, k) - mean, 2);
    const double sigma = std::sqrt(var / c + ln.eps());
    for (std::size_t l = 0; l < 2; ++l) {
        for (std::size_t h = 0; h < 2; ++h) {
            const Linear& wo = gpt.trunk.blocks[l].attn.out_proj;
            std::vector<double> part(c, 0.0);
            double part_mean = 0.0;
            for (std::size_t o = 0; o < c; ++o) {
                for (std::size_t k = h * d; k < (h + 1) * d; ++k) part[o] += double(wo.weight(o, k)) * r.head_outputs[l](pos, k);
                part_mean += part[o] / c;
            }
            double want = 0.0;
            for (std::size_t o = 0; o < c; ++o) want += gpt.head_weight()(token, o) * ln.weight(o) * (part[o] - part_mean) / sigma;
            EXPECT_NEAR(a.heads(l, h), want, 1e-5) << l << "." << h;
        }
    }
}

TEST(DirectLogitAttribution, RefusesPostLnModelsAndBadPositions) {
    EXPECT_THROW(interp::direct_logit_attribution(test::tiny_decoder(NormPlacement::post), kTokens, 0, 1), ConfigError);
    const DecoderLM lm = test::tiny_decoder();
    EXPECT_THROW(interp::direct_logit_attribution(lm, kTokens, 5, 1), ValueError);
    EXPECT_THROW(interp::direct_logit_attribution(lm, kTokens, 0, 13), ValueError);
}

}  // namespace
}  // namespace attnlab
