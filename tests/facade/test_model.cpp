#include "attnlab/facade/model.hpp"

#include <string>

#include <gtest/gtest.h>

namespace attnlab {
namespace {

ModelConfig config_of(ModelKind kind) {
    ModelConfig c;
    c.kind = kind;
    c.vocab_size = 9;
    c.max_len = 12;
    c.d_model = 8;
    c.num_heads = 2;
    c.num_layers = 3;
    c.ff_dim = 12;
    if (kind == ModelKind::encoder) c.num_classes = 3;
    return c;
}

// The recorded weights of block l are the model's attention map of block l, bit for bit.
void expect_trace_matches_maps(const Model& model, const Index2& tokens, const Mask2& padding) {
    const Tensor4 maps = model.attention_maps(tokens, padding);
    for (std::size_t l = 0; l < model.config().num_layers; ++l) {
        const auto rec = model.trace_layer(tokens, l, padding);
        ASSERT_EQ(rec->num_heads(Stage::weights), maps.shape(1)) << "layer " << l;
        for (Stage s : {Stage::x, Stage::q, Stage::k, Stage::v, Stage::scores, Stage::scaled, Stage::masked,
                        Stage::weights, Stage::context, Stage::concat, Stage::output}) {
            EXPECT_GT(rec->num_batches(s), 0u) << "layer " << l << " stage " << stage_name(s);
        }
        for (std::size_t h = 0; h < maps.shape(1); ++h) {
            const Tensor2& w = rec->get(Stage::weights, 0, static_cast<std::ptrdiff_t>(h));
            ASSERT_EQ(w.shape(0), maps.shape(2));
            ASSERT_EQ(w.shape(1), maps.shape(3));
            for (std::size_t i = 0; i < w.shape(0); ++i)
                for (std::size_t j = 0; j < w.shape(1); ++j) EXPECT_EQ(w(i, j), maps(l, h, i, j)) << l << h << i << j;
        }
    }
}

TEST(ModelTraceLayer, DecoderWeightsOfEachLayerEqualTheAttentionMaps) {
    const Model model(config_of(ModelKind::decoder), 3);
    expect_trace_matches_maps(model, Index2{{1, 4, 2, 6, 0}}, {});
    // Causal: the masked stage hides the future.
    const auto rec = model.trace_layer(Index2{{1, 4, 2, 6, 0}}, 1);
    EXPECT_EQ(rec->get(Stage::weights, 0, 0)(0, 1), 0.0f);
}

TEST(ModelTraceLayer, EncoderWeightsOfEachLayerEqualTheAttentionMaps) {
    const Model model(config_of(ModelKind::encoder), 4);
    expect_trace_matches_maps(model, Index2{{1, 2, 3, 0}}, Mask2{{0, 0, 0, 1}});
}

TEST(ModelTraceLayer, ABadLayerNamesTheLayerAndTheCount) {
    const Model model(config_of(ModelKind::decoder), 3);
    try {
        (void)model.trace_layer(Index2{{1, 2}}, 3);
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("layer 3"), std::string::npos) << m;
        EXPECT_NE(m.find("3 layers"), std::string::npos) << m;
    }
    EXPECT_THROW((void)model.trace_layer(Index2{{1, 2}}, 0, Mask2{{0, 0}}), ConfigError);
}

TEST(ModelLstm, AttentionViewsAreRefusedAndGenerationCarriesTheState) {
    ModelConfig c = config_of(ModelKind::decoder);
    c.architecture = Architecture::lstm;
    const Model model(c, 1);
    const Index2 tokens = {{1, 2, 3}};
    try {
        model.attention_maps(tokens);
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("an lstm decoder; it has no attention"), std::string::npos) << e.what();
    }
    EXPECT_THROW(model.trace_layer(tokens, 0), ConfigError);
    EXPECT_THROW(model.decoder(), ConfigError);
    EXPECT_THROW(model.class_logits(tokens), ConfigError);
    const GenerateResult g = model.generate({1, 2}, 4);
    EXPECT_EQ(g.tokens, model.lstm_lm().generate_uncached({1, 2}, 4).tokens);
    EXPECT_EQ(model.sequence_logits(tokens).shape(2), 9u);

    ModelConfig e = config_of(ModelKind::encoder);
    e.architecture = Architecture::lstm;
    const Model classifier(e, 1);
    EXPECT_EQ(classifier.class_logits(tokens).shape(1), 3u);
    try {
        classifier.generate({1}, 2);
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& err) {
        EXPECT_NE(std::string(err.what()).find("an lstm encoder classifier, not a decoder"), std::string::npos)
            << err.what();
    }
}

}  // namespace
}  // namespace attnlab
