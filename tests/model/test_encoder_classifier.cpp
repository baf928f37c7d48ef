#include "attnlab/model/encoder_classifier.hpp"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/model_gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

ModelConfig encoder_config() {
    ModelConfig c;
    c.kind = ModelKind::encoder;
    c.vocab_size = 7;
    c.max_len = 8;
    c.d_model = 8;
    c.num_heads = 2;
    c.num_layers = 2;
    c.ff_dim = 12;
    c.num_classes = 3;
    return c;
}

using testutil::check_model_gradient;
using testutil::perturb;

struct EncoderCase {
    const char* name;
    Pooling pooling;
    PositionalKind positional;
    NormPlacement norm;
    std::size_t kv_heads;
    bool padding, bias, scale;
    float dropout;
};

std::ostream& operator<<(std::ostream& out, const EncoderCase& c) { return out << c.name; }

class EncoderBackward : public ::testing::TestWithParam<EncoderCase> {};

TEST_P(EncoderBackward, MatchesFiniteDifferencesOnSampledCoordinates) {
    const EncoderCase& tc = GetParam();
    ModelConfig config = encoder_config();
    config.pooling = tc.pooling;
    config.positional = tc.positional;
    config.norm = tc.norm;
    config.num_kv_heads = tc.kv_heads;
    config.bias = tc.bias;
    config.scale_attention = tc.scale;
    config.dropout = tc.dropout;
    Rng rng(2);
    EncoderClassifier model(config, rng);
    perturb(model.parameters(), 7);
    const Index2 tokens = {{1, 4, 2, 6, 0}, {3, 3, 5, 0, 0}};
    const Mask2 padding = tc.padding ? Mask2{{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}} : Mask2();
    const Tensor2 w = test::random_normal<Tensor2>({2, 3}, 4);

    model.zero_grad();
    model.seed_dropout(11);
    model.forward(tokens, padding);
    model.backward(w);
    auto loss = [&] {
        model.seed_dropout(11);  // the same dropout masks at every evaluation
        return testutil::dot(model.forward(tokens, padding), w);
    };
    // Whole model in float32, loss reduced in double: h = 1e-2, |error| <= 3e-3 + 2e-2·|numeric|.
    EXPECT_TRUE(check_model_gradient(tc.name, loss, model.parameters(), model.gradients(), {1e-2, 3e-3, 2e-2}));
}

INSTANTIATE_TEST_SUITE_P(
    Variants, EncoderBackward,
    ::testing::Values(
        EncoderCase{"mean_learned_preln_gqa_padding", Pooling::mean, PositionalKind::learned, NormPlacement::pre, 1,
                    true, true, true, 0.0f},
        EncoderCase{"cls_rope_postln_padding_dropout", Pooling::cls, PositionalKind::rope, NormPlacement::post, 0,
                    true, false, true, 0.1f},
        EncoderCase{"mean_sinusoidal_preln_unscaled", Pooling::mean, PositionalKind::sinusoidal, NormPlacement::pre,
                    0, false, true, false, 0.0f},
        EncoderCase{"cls_learned_preln", Pooling::cls, PositionalKind::learned, NormPlacement::pre, 0, true, true,
                    true, 0.0f}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(EncoderClassifier, PaddedPositionsNeverInfluenceTheLogits) {
    for (Pooling pooling : {Pooling::mean, Pooling::cls}) {
        ModelConfig config = encoder_config();
        config.pooling = pooling;
        config.positional = PositionalKind::rope;
        Rng rng(2);
        EncoderClassifier model(config, rng);
        model.eval();
        const Mask2 padding = {{0, 0, 0, 1, 1}};
        const Tensor2 a = model.forward(Index2{{1, 2, 3, 4, 5}}, padding);
        const Tensor2 b = model.forward(Index2{{1, 2, 3, 0, 6}}, padding);
        EXPECT_EQ(a, b);
        // ...and equal the unpadded short sequence.
        const Tensor2 c = model.forward(Index2{{1, 2, 3}});
        for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(a(0, k), c(0, k), 1e-5);
    }
}

TEST(EncoderClassifier, LossAndBackwardEqualsBackwardOfTheCrossEntropyGradient) {
    Rng rng(2);
    EncoderClassifier model(encoder_config(), rng);
    const Index2 tokens = {{1, 4, 2}, {3, 3, 5}, {0, 1, 2}};
    const Mask2 padding = {{0, 0, 0}, {0, 0, 1}, {0, 1, 1}};
    const Index1 labels = {2, -1, 0};
    model.zero_grad();
    const CrossEntropyResult r = model.loss_and_backward(tokens, padding, labels);
    EXPECT_EQ(r.count, 2u);
    std::vector<std::vector<float>> first;
    for (const auto& g : model.gradients()) first.emplace_back(g.data, g.data + g.size());

    model.zero_grad();
    CrossEntropyCache ce;
    cross_entropy_forward(model.forward(tokens, padding), labels, &ce);
    Tensor2 dlogits;
    cross_entropy_backward(ce, 1.0f, dlogits);
    model.backward(dlogits);
    const auto grads = model.gradients();
    for (std::size_t i = 0; i < grads.size(); ++i) {
        EXPECT_EQ(std::memcmp(first[i].data(), grads[i].data, first[i].size() * sizeof(float)), 0) << grads[i].name;
    }
}

TEST(EncoderClassifier, ParameterNamesAndGradientViewsAgree) {
    ModelConfig config = encoder_config();
    config.num_layers = 1;
    config.pooling = Pooling::cls;
    config.positional = PositionalKind::learned;
    Rng rng(2);
    EncoderClassifier model(config, rng);
    const auto p = model.parameters();
    const auto g = model.gradients();
    ASSERT_EQ(p.size(), g.size());
    std::vector<std::string> names;
    for (std::size_t i = 0; i < p.size(); ++i) {
        EXPECT_EQ(p[i].name, g[i].name);
        EXPECT_EQ(p[i].shape, g[i].shape);
        names.push_back(p[i].name);
    }
    ASSERT_EQ(names.size(), 23u);
    EXPECT_EQ(names[0], "tok_emb.weight");
    EXPECT_EQ(names[1], "pos_emb.weight");
    EXPECT_EQ(names[2], "cls_token");
    EXPECT_EQ(names[3], "blocks.0.ln1.weight");
    EXPECT_EQ(names[19], "ln_f.weight");
    EXPECT_EQ(names[21], "head.weight");
    EXPECT_EQ(names[22], "head.bias");
    EXPECT_EQ(p[1].shape, (std::vector<std::size_t>{8, 8}));
    EXPECT_EQ(p[21].shape, (std::vector<std::size_t>{3, 8}));
}

TEST(EncoderClassifier, ErrorsNameTheProblem) {
    ModelConfig config = encoder_config();
    config.positional = PositionalKind::learned;
    config.pooling = Pooling::cls;  // T' = T + 1 must fit max_len = 8
    Rng rng(2);
    EncoderClassifier model(config, rng);
    EXPECT_THROW(model.forward(Index2{{1, 2, 3, 4, 5, 6, 0, 1}}), ValueError);
    EXPECT_THROW(model.forward(Index2{{1, 2}}, Mask2{{1, 1}}), ValueError);    // all padding
    EXPECT_THROW(model.forward(Index2{{1, 2}}, Mask2{{0, 0, 0}}), ShapeError);  // mask shape
    EXPECT_THROW(model.forward(Index2{{1, 9}}), ValueError);                    // id >= V
    EncoderClassifier fresh(encoder_config(), rng);
    EXPECT_THROW(fresh.backward(Tensor2::from_shape({1, 3})), ValueError);      // no forward yet
    fresh.eval();                                                                // nothing to differentiate
    EXPECT_THROW(fresh.loss_and_backward(Index2{{1, 2}}, Mask2{}, Index1{0}), ValueError);
    ModelConfig decoder = encoder_config();
    decoder.kind = ModelKind::decoder;
    EXPECT_THROW(EncoderClassifier(decoder, rng), ConfigError);
}

TEST(EncoderClassifier, AttentionMapsHideThePaddedKeys) {
    Rng rng(2);
    EncoderClassifier model(encoder_config(), rng);
    const Tensor4 maps = model.attention_maps(Index2{{1, 2, 3, 4}, {1, 2, 0, 0}}, Mask2{{0, 0, 0, 0}, {0, 0, 1, 1}}, 1);
    ASSERT_EQ(maps.shape(0), 2u);  // layers
    ASSERT_EQ(maps.shape(1), 2u);  // heads
    ASSERT_EQ(maps.shape(2), 4u);
    ASSERT_EQ(maps.shape(3), 4u);
    for (std::size_t l = 0; l < 2; ++l)
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 4; ++i) {
                EXPECT_EQ(maps(l, h, i, 2), 0.0f);
                EXPECT_EQ(maps(l, h, i, 3), 0.0f);
                EXPECT_NEAR(maps(l, h, i, 0) + maps(l, h, i, 1), 1.0f, 1e-6);
            }
}

}  // namespace
}  // namespace attnlab
