#include "attnlab/model/lstm/lstm_models.hpp"

#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "support/gradcheck.hpp"
#include "support/model_gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using testutil::check_model_gradient;
using testutil::perturb;

ModelConfig lstm_config(ModelKind kind) {
    ModelConfig c;
    c.architecture = Architecture::lstm;
    c.kind = kind;
    c.vocab_size = 9;
    c.d_model = 6;
    c.num_layers = 2;
    if (kind == ModelKind::encoder) c.num_classes = 3;
    return c;
}

std::size_t sum_of_sizes(const std::vector<ParameterView>& params) {
    std::size_t n = 0;
    for (const auto& p : params) n += p.size();
    return n;
}

struct LmCase {
    const char* name;
    bool tie;
    bool bias;
    std::size_t layers;
};
std::ostream& operator<<(std::ostream& out, const LmCase& c) { return out << c.name; }

const LmCase kLmCases[] = {
    {"untied_bias_two_layers", false, true, 2},
    {"tied_bias_one_layer", true, true, 1},
    {"untied_no_bias_two_layers", false, false, 2},
};

ModelConfig config_of(const LmCase& tc) {
    ModelConfig c = lstm_config(ModelKind::decoder);
    c.tie_weights = tc.tie;
    c.bias = tc.bias;
    c.num_layers = tc.layers;
    return c;
}

class LstmLMCases : public ::testing::TestWithParam<LmCase> {};

TEST_P(LstmLMCases, BackwardMatchesFiniteDifferencesOnSampledCoordinates) {
    Rng rng(3);
    LstmLM model(config_of(GetParam()), rng);
    perturb(model.parameters(), 5);
    const Index2 tokens = {{1, 4, 2, 8, 0}, {3, 3, 5, 7, 6}};
    const Tensor3 w = test::random_normal<Tensor3>({2, 5, 9}, 4);
    model.zero_grad();
    model.forward(tokens);
    model.backward(w);
    auto loss = [&] { return testutil::dot(model.logits(tokens), w); };
    // float32 through two LSTM layers, loss reduced in double. With tied weights tok_emb.weight's
    // gradient must sum the embedding and head uses.
    EXPECT_TRUE(check_model_gradient(GetParam().name, loss, model.parameters(), model.gradients(), {1e-2, 3e-3, 2e-2}));
}

TEST_P(LstmLMCases, ParameterCountEqualsTheParameters) {
    Rng rng(3);
    LstmLM model(config_of(GetParam()), rng);
    EXPECT_EQ(model.config().parameter_count(), sum_of_sizes(model.parameters()));
    const auto p = model.parameters(), g = model.gradients();
    ASSERT_EQ(p.size(), g.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
        EXPECT_EQ(p[i].name, g[i].name);
        EXPECT_EQ(p[i].shape, g[i].shape);
    }
}

// Carrying (h, c) one token at a time gives what recomputing the whole prefix gives.
TEST_P(LstmLMCases, CarriedStateGenerationEqualsRecomputingThePrefix) {
    Rng rng(3);
    LstmLM model(config_of(GetParam()), rng);
    perturb(model.parameters(), 7);
    for (const GenerateOptions options : {GenerateOptions{0.0f, 0}, GenerateOptions{1.3f, 9}}) {
        const GenerateResult a = model.generate({3, 1, 4}, 10, options);
        const GenerateResult b = model.generate_uncached({3, 1, 4}, 10, options);
        EXPECT_EQ(a.tokens, b.tokens);
        ASSERT_EQ(a.logits.shape(), b.logits.shape());
        for (std::size_t i = 0; i < a.logits.size(); ++i) {
            EXPECT_NEAR(a.logits.data()[i], b.logits.data()[i], 1e-5f) << "logit " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Variants, LstmLMCases, ::testing::ValuesIn(kLmCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(LstmLM, CrossEntropyWithIgnoredTargetsMatchesFiniteDifferences) {
    Rng rng(3);
    LstmLM model(lstm_config(ModelKind::decoder), rng);
    perturb(model.parameters(), 5);
    const Index2 tokens = {{1, 4, 2, 8}, {3, 3, 5, 7}};
    const Index2 targets = {{-1, -1, 8, 0}, {-1, 5, 7, -1}};
    model.zero_grad();
    const CrossEntropyResult r = model.loss_and_backward(tokens, targets);
    EXPECT_EQ(r.count, 4u);
    auto loss = [&] {
        const Tensor3 logits = model.logits(tokens);
        Tensor2 flat = Tensor2::from_shape({8, 9});
        std::copy(logits.begin(), logits.end(), flat.begin());
        Index1 t = Index1::from_shape({8});
        std::copy(targets.begin(), targets.end(), t.begin());
        return double(cross_entropy_forward(flat, t).loss);
    };
    EXPECT_TRUE(check_model_gradient("lstm lm cross-entropy", loss, model.parameters(), model.gradients(),
                                     {1e-2, 2e-4, 2e-2}, 30));
}

TEST(LstmLM, ParameterNamesFollowPyTorch) {
    Rng rng(3);
    LstmLM model(lstm_config(ModelKind::decoder), rng);
    std::vector<std::string> names;
    for (const auto& p : model.parameters()) names.push_back(p.name);
    const std::vector<std::string> expected = {
        "tok_emb.weight",      "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0",
        "lstm.weight_ih_l1",   "lstm.weight_hh_l1", "lstm.bias_ih_l1",   "lstm.bias_hh_l1", "head.weight"};
    EXPECT_EQ(names, expected);
    EXPECT_EQ(model.parameters()[1].shape, (std::vector<std::size_t>{24, 6}));
    EXPECT_TRUE(model.attention_stats().entropy.size() == 0);
}

TEST(LstmLM, GenerationErrorsNameTheValues) {
    Rng rng(3);
    const LstmLM model(lstm_config(ModelKind::decoder), rng);
    EXPECT_THROW(model.generate({}, 3), ValueError);
    try {
        model.generate({3, 9}, 3);
        FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("token id 9"), std::string::npos) << e.what();
    }
    EXPECT_THROW(model.generate({3}, 3, {-1.0f, 0}), ValueError);
}

TEST(LstmClassifier, BackwardMatchesFiniteDifferencesWithPadding) {
    Rng rng(3);
    LstmClassifier model(lstm_config(ModelKind::encoder), rng);
    perturb(model.parameters(), 5);
    const Index2 tokens = {{1, 4, 2, 8, 0}, {3, 3, 5, 0, 0}};
    const Mask2 padding = {{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}};
    const Tensor2 w = test::random_normal<Tensor2>({2, 3}, 4);
    model.zero_grad();
    model.forward(tokens, padding);
    model.backward(w);
    auto loss = [&] { return testutil::dot(model.logits(tokens, padding), w); };
    EXPECT_TRUE(check_model_gradient("lstm classifier", loss, model.parameters(), model.gradients(), {1e-2, 3e-3, 2e-2}));
    EXPECT_EQ(model.config().parameter_count(), sum_of_sizes(model.parameters()));
    EXPECT_EQ(model.parameters().back().name, "head.bias");
}

// The pooled step is the last non-padding one: what stands in the padding cannot change the logits.
TEST(LstmClassifier, PaddedTokensNeverReachTheLogits) {
    Rng rng(3);
    const LstmClassifier model(lstm_config(ModelKind::encoder), rng);
    const Mask2 padding = {{0, 0, 1, 1}};
    const Tensor2 a = model.logits(Index2{{1, 2, 0, 0}}, padding);
    const Tensor2 b = model.logits(Index2{{1, 2, 7, 5}}, padding);
    const Tensor2 unpadded = model.logits(Index2{{1, 2}});
    for (std::size_t k = 0; k < 3; ++k) {
        EXPECT_EQ(a(0, k), b(0, k));
        EXPECT_NEAR(a(0, k), unpadded(0, k), 1e-6f);  // another T: the products may group differently
    }
}

TEST(LstmClassifier, PaddingErrorsNameTheRow) {
    Rng rng(3);
    const LstmClassifier model(lstm_config(ModelKind::encoder), rng);
    const Index2 tokens = {{1, 2, 3}, {1, 2, 3}};
    try {
        model.logits(tokens, Mask2{{0, 0, 0}, {0, 1, 0}});
        FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("row 1 has a token at 2 after padding at 1"), std::string::npos) << e.what();
    }
    EXPECT_THROW(model.logits(tokens, Mask2{{1, 1, 1}, {0, 0, 0}}), ValueError);
    EXPECT_THROW(model.logits(tokens, Mask2{{0, 0}, {0, 0}}), ShapeError);
}

TEST(LstmConfig, TransformerOnlySwitchesAreRefusedAndTheOthersIgnored) {
    ModelConfig c = lstm_config(ModelKind::decoder);
    c.num_heads = 4;
    c.d_model = 30;  // not a multiple of the (ignored) heads
    EXPECT_NO_THROW(c.validate());
    auto refused = [](ModelConfig bad, const char* needle) {
        try {
            bad.validate();
            return ::testing::AssertionFailure() << "no ConfigError for " << needle;
        } catch (const ConfigError& e) {
            if (std::string(e.what()).find(needle) == std::string::npos) {
                return ::testing::AssertionFailure() << e.what();
            }
            return ::testing::AssertionSuccess();
        }
    };
    ModelConfig d = c;
    d.dropout = 0.1f;
    EXPECT_TRUE(refused(d, "an lstm has no dropout, got dropout 0.1"));
    d = c;
    d.attention_window = 4;
    EXPECT_TRUE(refused(d, "attention_window 4"));
    d = c;
    d.global_tokens = 1;
    EXPECT_TRUE(refused(d, "global_tokens 1"));
    d = c;
    d.causal = false;
    EXPECT_TRUE(refused(d, "causal = false"));
    d = lstm_config(ModelKind::encoder);
    d.pooling = Pooling::cls;
    EXPECT_TRUE(refused(d, "pooling cls"));
    // The Transformer classes refuse an lstm config, and the LSTM classes a transformer one.
    Rng rng(1);
    EXPECT_THROW(DecoderLM(c, rng), ConfigError);
    ModelConfig t = lstm_config(ModelKind::decoder);
    t.architecture = Architecture::transformer;
    EXPECT_THROW(LstmLM(t, rng), ConfigError);
}

TEST(LstmConfig, MetadataRoundTripsAndOlderCheckpointsAreTransformers) {
    const ModelConfig c = lstm_config(ModelKind::encoder);
    const auto meta = c.to_metadata();
    EXPECT_EQ(meta.at("architecture"), "lstm");
    EXPECT_EQ(ModelConfig::from_metadata(meta), c);
    ModelConfig t;
    t.vocab_size = 5;
    auto older = t.to_metadata();
    older.erase("architecture");
    EXPECT_EQ(ModelConfig::from_metadata(older).architecture, Architecture::transformer);
    older["architecture"] = "gru";
    EXPECT_THROW(ModelConfig::from_metadata(older), ConfigError);
}

}  // namespace
}  // namespace attnlab
