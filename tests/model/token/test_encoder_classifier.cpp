#include "attnlab/model/token/encoder_classifier.hpp"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/model_gradcheck.hpp"
#include "support/random_tensor.hpp"
#include "support/thread_count.hpp"

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

// ---- The first block's projections over the input's tables (post-LN, src/model/token/input_tables.hpp) ----

// 8 sequences of 12 tokens (96 rows >= 4 x (V 7 + T 12) table rows: the tables are used), with padding.
struct TableBatch {
    Index2 tokens = Index2::from_shape({8, 12});
    Mask2 padding = Mask2::from_shape({8, 12});
    Index1 labels = Index1::from_shape({8});
    TableBatch() {
        Rng data(6);
        for (auto& x : tokens) x = static_cast<std::int32_t>(data.below(7));
        for (std::size_t b = 0; b < 8; ++b) {
            for (std::size_t i = 0; i < 12; ++i) padding(b, i) = i >= 12 - b % 3;
            labels(b) = static_cast<std::int32_t>(data.below(3));
        }
    }
};

ModelConfig table_config(PositionalKind positional) {
    ModelConfig config = encoder_config();
    config.max_len = 12;
    config.norm = NormPlacement::post;
    config.pooling = Pooling::mean;
    config.positional = positional;
    return config;
}

TEST(EncoderClassifier, FirstBlockTablesEqualTheDirectProjections) {
    for (PositionalKind positional : {PositionalKind::sinusoidal, PositionalKind::learned, PositionalKind::none}) {
        SCOPED_TRACE(positional_name(positional));
        const TableBatch batch;
        Rng rng(3);
        EncoderClassifier tables(table_config(positional), rng);
        perturb(tables.parameters(), 9);
        // Checkpointing makes the first block project x itself (and changes nothing else, bit
        // for bit: TransformerBlock's tests).
        EncoderClassifier direct = tables;
        direct.set_gradient_checkpointing(true);
        CrossEntropyResult r[2];
        EncoderClassifier* models[2] = {&tables, &direct};
        for (int i = 0; i < 2; ++i) {
            models[i]->zero_grad();
            r[i] = models[i]->loss_and_backward(batch.tokens, batch.padding, batch.labels);
        }
        EXPECT_NEAR(r[0].loss, r[1].loss, 1e-6);
        EXPECT_TRUE(testutil::values_near(tables.gradients(), testutil::copy_values(direct.gradients()), 1e-5f, 1e-3f));
    }
}

TEST(EncoderClassifier, FirstBlockTablesMatchFiniteDifferences) {
    const TableBatch batch;
    Rng rng(2);
    EncoderClassifier model(table_config(PositionalKind::learned), rng);
    perturb(model.parameters(), 7);
    const Tensor2 w = test::random_normal<Tensor2>({8, 3}, 4);
    model.zero_grad();
    model.forward(batch.tokens, batch.padding);
    model.backward(w);
    auto loss = [&] { return testutil::dot(model.forward(batch.tokens, batch.padding), w); };
    EXPECT_TRUE(check_model_gradient("post-LN tables", loss, model.parameters(), model.gradients(), {1e-2, 3e-3, 2e-2}));
}

// ---- Split training steps (loss_and_backward on more rows than one micro-batch) ----

// A batch of 12 sequences of 48 positions (576 rows): split into micro-batches on any thread count.
struct SplitBatch {
    Index2 tokens = Index2::from_shape({12, 48});
    Mask2 padding = Mask2::from_shape({12, 48});
    Index1 labels = Index1::from_shape({12});
    explicit SplitBatch(std::size_t vocab, std::size_t classes) {
        Rng data(5);
        for (auto& x : tokens) x = static_cast<std::int32_t>(data.below(vocab));
        for (std::size_t b = 0; b < 12; ++b) {
            for (std::size_t i = 0; i < 48; ++i) padding(b, i) = i >= 48 - 3 * (b % 4);  // 0, 3, 6 or 9 padded
            labels(b) = static_cast<std::int32_t>(data.below(classes));
        }
        labels(7) = kIgnoreTarget;
    }
};

ModelConfig split_config(Pooling pooling, NormPlacement norm, PositionalKind positional) {
    ModelConfig config = encoder_config();
    config.max_len = 49;  // T' = 48 + 1 with CLS
    config.pooling = pooling;
    config.norm = norm;
    config.positional = positional;
    return config;
}

using testutil::ThreadCountScope;

TEST(EncoderClassifier, SplitStepEqualsTheWholeBatchStep) {
    for (std::size_t threads : {1, 2}) {
        for (const ModelConfig& config : {split_config(Pooling::mean, NormPlacement::post, PositionalKind::sinusoidal),
                                          split_config(Pooling::cls, NormPlacement::pre, PositionalKind::learned)}) {
            SCOPED_TRACE(testing::Message() << threads << " threads, " << pooling_name(config.pooling));
            const ThreadCountScope scope(threads);
            const SplitBatch batch(config.vocab_size, config.num_classes);
            Rng rng(3);
            EncoderClassifier model(config, rng);
            perturb(model.parameters(), 9);

            // The reference: one forward and one backward over the whole batch.
            model.zero_grad();
            CrossEntropyCache ce;
            const CrossEntropyResult whole = cross_entropy_forward(model.forward(batch.tokens, batch.padding),
                                                                   batch.labels, &ce);
            Tensor2 dlogits;
            cross_entropy_backward(ce, 1.0f, dlogits);
            model.backward(dlogits);
            const std::vector<std::vector<float>> expected = testutil::copy_values(model.gradients());

            model.zero_grad();
            const CrossEntropyResult split = model.loss_and_backward(batch.tokens, batch.padding, batch.labels);
            // It was split: the model's own cache holds no forward of this step.
            EXPECT_THROW(model.backward(dlogits), ValueError);
            EXPECT_EQ(split.count, 11u);
            EXPECT_EQ(split.count, whole.count);
            EXPECT_EQ(split.correct, whole.correct);
            EXPECT_NEAR(split.loss, whole.loss, 1e-6);
            EXPECT_TRUE(testutil::values_near(model.gradients(), expected, 1e-5f, 1e-3f));

            // A second step accumulates (+=) like the whole-batch step does.
            model.loss_and_backward(batch.tokens, batch.padding, batch.labels);
            std::vector<std::vector<float>> doubled = expected;
            for (auto& g : doubled)
                for (auto& v : g) v *= 2.0f;
            EXPECT_TRUE(testutil::values_near(model.gradients(), doubled, 2e-5f));
        }
    }
}

TEST(EncoderClassifier, SplitStepRecordsTheWholeBatchsAttentionStats) {
    const ModelConfig config = split_config(Pooling::mean, NormPlacement::pre, PositionalKind::rope);
    const SplitBatch batch(config.vocab_size, config.num_classes);
    Rng rng(3);
    EncoderClassifier model(config, rng);
    perturb(model.parameters(), 9);
    model.set_record_attention_stats(true);
    model.forward(batch.tokens, batch.padding);
    const AttentionStats whole = model.attention_stats();
    model.loss_and_backward(batch.tokens, batch.padding, batch.labels);
    const AttentionStats split = model.attention_stats();
    ASSERT_EQ(split.entropy.shape(), whole.entropy.shape());
    for (std::size_t l = 0; l < 2; ++l) {
        EXPECT_FLOAT_EQ(split.max_abs_score(l), whole.max_abs_score(l));
        for (std::size_t h = 0; h < 2; ++h) EXPECT_NEAR(split.entropy(l, h), whole.entropy(l, h), 1e-5);
    }
    EXPECT_GT(whole.max_abs(), 0.0f);
}

TEST(EncoderClassifier, SplitStepWithDropoutIsReproducible) {
    ModelConfig config = split_config(Pooling::cls, NormPlacement::post, PositionalKind::sinusoidal);
    config.dropout = 0.2f;
    const SplitBatch batch(config.vocab_size, config.num_classes);
    std::vector<std::vector<float>> runs[2];
    float losses[2] = {0, 0};
    for (int r = 0; r < 2; ++r) {
        const ThreadCountScope scope(r == 0 ? 1 : 2);  // the same slices on 1 and 2 threads
        Rng rng(3);
        EncoderClassifier model(config, rng);
        model.seed_dropout(17);
        model.zero_grad();
        losses[r] = model.loss_and_backward(batch.tokens, batch.padding, batch.labels).loss;
        for (const auto& g : model.gradients()) runs[r].emplace_back(g.data, g.data + g.size());
    }
    EXPECT_TRUE(std::isfinite(losses[0]));
    EXPECT_FLOAT_EQ(losses[0], losses[1]);
    for (std::size_t i = 0; i < runs[0].size(); ++i) {
        for (std::size_t j = 0; j < runs[0][i].size(); ++j) ASSERT_NEAR(runs[0][i][j], runs[1][i][j], 1e-5f);
    }
}

TEST(EncoderClassifier, SplitStepErrorsNameTheBatchRow) {
    const ModelConfig config = split_config(Pooling::mean, NormPlacement::post, PositionalKind::sinusoidal);
    Rng rng(3);
    EncoderClassifier model(config, rng);
    const auto message = [&](const SplitBatch& b) {
        try {
            model.loss_and_backward(b.tokens, b.padding, b.labels);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    SplitBatch bad_label(config.vocab_size, config.num_classes);
    bad_label.labels(10) = 3;  // K = 3
    EXPECT_NE(message(bad_label).find("label 3 of row 10"), std::string::npos) << message(bad_label);
    SplitBatch bad_token(config.vocab_size, config.num_classes);
    bad_token.tokens(9, 5) = 7;  // V = 7
    EXPECT_NE(message(bad_token).find("at (9, 5)"), std::string::npos) << message(bad_token);
    SplitBatch all_padding(config.vocab_size, config.num_classes);
    for (std::size_t i = 0; i < 48; ++i) all_padding.padding(11, i) = 1;
    EXPECT_NE(message(all_padding).find("row 11 of the batch is all padding"), std::string::npos);
    SplitBatch short_labels(config.vocab_size, config.num_classes);
    short_labels.labels = Index1::from_shape({11});
    EXPECT_THROW(model.loss_and_backward(short_labels.tokens, short_labels.padding, short_labels.labels), ShapeError);
    SplitBatch wrong_mask(config.vocab_size, config.num_classes);
    wrong_mask.padding = Mask2::from_shape({12, 47});
    EXPECT_THROW(model.loss_and_backward(wrong_mask.tokens, wrong_mask.padding, wrong_mask.labels), ShapeError);
}

}  // namespace
}  // namespace attnlab
