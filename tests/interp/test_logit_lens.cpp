// The logit lens (attnlab/interp/logit_lens.hpp): its last layer is the model's logits, every
// layer the final LayerNorm and unembedding of that residual computed by hand; top_ids orders.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attnlab/interp/logit_lens.hpp"
#include "attnlab/interp/run.hpp"
#include "interp_models.hpp"

namespace attnlab {
namespace {

const std::vector<std::int32_t> kTokens{8, 3, 8, 3, 6};

void expect_last_layer_is_logits(const DecoderLM& lm) {
    const interp::Run r = interp::run(lm, kTokens);
    for (std::size_t pos : {std::size_t{0}, kTokens.size() - 1}) {
        const Tensor2 lens = interp::logit_lens(lm, kTokens, pos);
        ASSERT_EQ(lens.shape(0), lm.config().num_layers + 1);
        for (std::size_t v = 0; v < lens.shape(1); ++v) EXPECT_NEAR(lens(lm.config().num_layers, v), r.logits(pos, v), 1e-5);
    }
}

TEST(LogitLens, ItsLastLayerIsTheModelsLogits) {
    expect_last_layer_is_logits(test::tiny_decoder(NormPlacement::pre));
    expect_last_layer_is_logits(test::tiny_decoder(NormPlacement::post));
    expect_last_layer_is_logits(test::gpt2_fixture());
}

TEST(LogitLens, EachLayerIsTheFinalNormAndUnembeddingOfItsResidual) {
    const DecoderLM gpt = test::gpt2_fixture();
    const std::size_t pos = 3, c = gpt.config().d_model;
    const Tensor2 lens = interp::logit_lens(gpt, kTokens, pos);
    const interp::Run r = interp::run(gpt, kTokens);
    const LayerNorm& ln = gpt.trunk.ln_f;
    for (std::size_t l = 0; l + 1 < lens.shape(0); ++l) {
        double mean = 0.0, var = 0.0;
        for (std::size_t k = 0; k < c; ++k) mean += r.residuals[l](pos, k);
        mean /= c;
        for (std::size_t k = 0; k < c; ++k) var += std::pow(r.residuals[l](pos, k) - mean, 2);
        const double rstd = 1.0 / std::sqrt(var / c + ln.eps());
        for (std::size_t v = 0; v < lens.shape(1); ++v) {
            double logit = 0.0;
            for (std::size_t k = 0; k < c; ++k) {
                const double y = (r.residuals[l](pos, k) - mean) * rstd * ln.weight(k) + ln.bias(k);
                logit += y * gpt.head_weight()(v, k);
            }
            ASSERT_NEAR(lens(l, v), logit, 1e-4) << "layer " << l << " token " << v;
        }
    }
    EXPECT_THROW(interp::logit_lens(gpt, kTokens, kTokens.size()), ValueError);
}

TEST(TopIds, AreLargestFirstAndLowerIdOnATie) {
    const Tensor2 rows = {{0.5f, 2.0f, 2.0f, -1.0f}};
    EXPECT_EQ(interp::top_ids(rows, 0, 3), (std::vector<std::int32_t>{1, 2, 0}));
    EXPECT_EQ(interp::top_ids(rows, 0, 9).size(), 4u);
}

}  // namespace
}  // namespace attnlab
