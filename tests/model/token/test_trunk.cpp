#include "attnlab/model/token/trunk.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"

namespace attnlab {
namespace {

// Two layers of width 8 with learned positions; an encoder pools at a CLS vector.
ModelConfig trunk_config(ModelKind kind) {
    ModelConfig c;
    c.kind = kind;
    c.vocab_size = 7; c.max_len = 8; c.d_model = 8; c.num_heads = 2; c.ff_dim = 12;
    c.positional = PositionalKind::learned;
    if (kind == ModelKind::encoder) {
        c.num_classes = 3;
        c.pooling = Pooling::cls;
    }
    return c;
}

std::vector<std::string> names_of(const std::vector<ParameterView>& views) {
    std::vector<std::string> out;
    for (const auto& v : views) out.push_back(v.name);
    return out;
}

// Both models are a trunk and a head: their parameters are the trunk's, then the head's.
TEST(Trunk, ModelsAreTheTrunkFollowedByTheirHead) {
    for (ModelKind kind : {ModelKind::encoder, ModelKind::decoder}) {
        const ModelConfig c = trunk_config(kind);
        Rng rng(3);
        Trunk trunk(c, rng);
        std::vector<ParameterView> views;
        trunk.parameters(views);
        std::vector<std::string> expected = names_of(views);
        std::vector<std::string> actual;
        if (kind == ModelKind::encoder) {
            Rng model_rng(3);
            EncoderClassifier model(c, model_rng);
            actual = names_of(model.parameters());
            expected.insert(expected.end(), {"head.weight", "head.bias"});
            // The same draws: the trunk's tensors equal the model's.
            EXPECT_EQ(model.trunk.cls_token, trunk.cls_token);
            EXPECT_EQ(model.trunk.blocks[1].ffn.fc2.weight, trunk.blocks[1].ffn.fc2.weight);
        } else {
            Rng model_rng(3);
            DecoderLM model(c, model_rng);
            actual = names_of(model.parameters());
            expected.push_back("head.weight");
            EXPECT_EQ(model.trunk.pos_emb.table, trunk.pos_emb.table);
        }
        EXPECT_EQ(actual, expected);
    }
}

// The gradient views name and order the tensors as the parameters do.
TEST(Trunk, GradientViewsMatchTheParameters) {
    const ModelConfig c = trunk_config(ModelKind::encoder);
    Rng rng(4);
    Trunk trunk(c, rng);
    TrunkGrad grads(trunk);
    std::vector<ParameterView> params, views;
    trunk.parameters(params);
    grads.views(views);
    ASSERT_EQ(names_of(views), names_of(params));
    for (std::size_t i = 0; i < params.size(); ++i) EXPECT_EQ(views[i].shape, params[i].shape) << params[i].name;
    EXPECT_EQ(params[2].name, "cls_token");  // an input row: after the positions, before the blocks
}

// A training forward without dropout computes what an inference forward does, with a CLS
// vector and padding (to rounding: the two may take different attention kernels).
TEST(Trunk, TrainingForwardEqualsInference) {
    const ModelConfig c = trunk_config(ModelKind::encoder);
    Rng rng(5);
    const Trunk trunk(c, rng);
    const Index2 tokens{{1, 2, 3, 4}, {5, 6, 0, 0}};
    const Mask2 padding{{0, 0, 0, 0}, {0, 0, 1, 1}};
    TrunkCache training, inference;
    const Tensor3 h = trunk.forward(tokens, padding, false, {}, training, true);
    const Tensor3& expected = trunk.forward(tokens, padding, false, {}, inference, false);
    ASSERT_EQ(h.shape(1), 5u);  // T' = T + 1
    ASSERT_EQ(h.shape(), expected.shape());
    for (std::size_t i = 0; i < h.size(); ++i) EXPECT_NEAR(h.data()[i], expected.data()[i], 1e-5f) << i;
    EXPECT_EQ(&trunk.output(training), &trunk.forward(tokens, padding, false, {}, training, true));
}

TEST(Trunk, CheckInputNamesTheProblem) {
    const ModelConfig c = trunk_config(ModelKind::encoder);
    Rng rng(6);
    const Trunk trunk(c, rng);
    EXPECT_THROW(trunk.check_input(Index2::from_shape({0, 3}), {}, "here"), ShapeError);
    EXPECT_THROW(trunk.check_input(Index2{{1, 2}}, Mask2{{1, 1}}, "here"), ValueError);
    try {
        trunk.check_input(Index2::from_shape({1, 8}), {}, "here");  // T' = 9 > max_len 8
        FAIL();
    } catch (const ValueError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("here", 0), 0u) << e.what();
    }
}

}  // namespace
}  // namespace attnlab
