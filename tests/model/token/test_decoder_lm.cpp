#include "attnlab/model/token/decoder_lm.hpp"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/model_gradcheck.hpp"
#include "support/random_tensor.hpp"
#include "support/thread_count.hpp"

namespace attnlab {
namespace {

ModelConfig decoder_config() {
    ModelConfig c;
    c.kind = ModelKind::decoder;
    c.vocab_size = 9;
    c.max_len = 12;
    c.d_model = 8;
    c.num_heads = 2;
    c.num_layers = 2;
    c.ff_dim = 12;
    return c;
}

using testutil::check_model_gradient;
using testutil::perturb;

struct DecoderCase {
    const char* name;
    PositionalKind positional;
    NormPlacement norm;
    std::size_t kv_heads;
    bool tie;
    Activation activation;
    float dropout;
    std::optional<float> scale;
};

std::ostream& operator<<(std::ostream& out, const DecoderCase& c) { return out << c.name; }

ModelConfig config_of(const DecoderCase& tc) {
    ModelConfig config = decoder_config();
    config.positional = tc.positional;
    config.norm = tc.norm;
    config.num_kv_heads = tc.kv_heads;
    config.tie_weights = tc.tie;
    config.activation = tc.activation;
    config.dropout = tc.dropout;
    config.attention_scale = tc.scale;
    return config;
}

const DecoderCase kCases[] = {
    {"preln_sinusoidal_tied_gqa", PositionalKind::sinusoidal, NormPlacement::pre, 1, true, Activation::gelu, 0.0f, {}},
    {"postln_learned_relu_dropout", PositionalKind::learned, NormPlacement::post, 0, false, Activation::relu, 0.1f, {}},
    {"preln_rope_scale_override", PositionalKind::rope, NormPlacement::pre, 0, false, Activation::gelu, 0.0f, 0.5f},
    {"postln_none_tied", PositionalKind::none, NormPlacement::post, 0, true, Activation::gelu, 0.0f, {}},
};

class DecoderBackward : public ::testing::TestWithParam<DecoderCase> {};

TEST_P(DecoderBackward, MatchesFiniteDifferencesOnSampledCoordinates) {
    const DecoderCase& tc = GetParam();
    Rng rng(3);
    DecoderLM model(config_of(tc), rng);
    perturb(model.parameters(), 5);
    const Index2 tokens = {{1, 4, 2, 8, 0}, {3, 3, 5, 7, 6}};
    const Tensor3 w = test::random_normal<Tensor3>({2, 5, 9}, 4);
    model.zero_grad();
    model.seed_dropout(11);
    model.forward(tokens);
    model.backward(w);
    auto loss = [&] {
        model.seed_dropout(11);
        return testutil::dot(model.forward(tokens), w);
    };
    // Whole model in float32, loss reduced in double: h = 1e-2, |error| <= 3e-3 + 2e-2·|numeric|.
    // With tied weights tok_emb.weight's gradient must sum the embedding and head uses.
    EXPECT_TRUE(check_model_gradient(tc.name, loss, model.parameters(), model.gradients(), {1e-2, 3e-3, 2e-2}));
}

INSTANTIATE_TEST_SUITE_P(Variants, DecoderBackward, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The real training loss, with ignored targets, through the whole model.
TEST(DecoderLM, CrossEntropyWithIgnoredTargetsMatchesFiniteDifferences) {
    Rng rng(3);
    DecoderLM model(decoder_config(), rng);
    perturb(model.parameters(), 5);
    const Index2 tokens = {{1, 4, 2, 8}, {3, 3, 5, 7}};
    const Index2 targets = {{-1, -1, 8, 0}, {-1, 5, 7, -1}};
    model.zero_grad();
    const CrossEntropyResult r = model.loss_and_backward(tokens, targets);
    EXPECT_EQ(r.count, 4u);
    auto loss = [&] {
        Tensor3 logits = model.forward(tokens);
        Tensor2 flat = Tensor2::from_shape({8, 9});
        std::copy(logits.begin(), logits.end(), flat.begin());
        Index1 t = Index1::from_shape({8});
        std::copy(targets.begin(), targets.end(), t.begin());
        return double(cross_entropy_forward(flat, t).loss);
    };
    // The loss is a float mean (~2.2): rounding ~2e-7 / 2h = 1e-5; gradients are ~1e-2.
    EXPECT_TRUE(check_model_gradient("lm cross-entropy", loss, model.parameters(), model.gradients(),
                                     {1e-2, 2e-4, 2e-2}, 30));
}

TEST(DecoderLM, ParameterNamesFollowPyTorch) {
    ModelConfig config = decoder_config();
    config.num_layers = 1;
    config.positional = PositionalKind::learned;
    Rng rng(3);
    DecoderLM untied(config, rng);
    config.tie_weights = true;
    DecoderLM tied(config, rng);
    std::vector<std::string> names;
    for (const auto& p : untied.parameters()) names.push_back(p.name);
    ASSERT_EQ(names.size(), 21u);
    EXPECT_EQ(names.front(), "tok_emb.weight");
    EXPECT_EQ(names[1], "pos_emb.weight");
    EXPECT_EQ(names[2], "blocks.0.ln1.weight");
    EXPECT_EQ(names[18], "ln_f.weight");
    EXPECT_EQ(names[19], "ln_f.bias");
    EXPECT_EQ(names.back(), "head.weight");
    EXPECT_EQ(tied.parameters().size(), 20u);  // no head.weight: the head is tok_emb.weight
    EXPECT_EQ(tied.parameters().back().name, "ln_f.bias");
    const auto p = untied.parameters(), g = untied.gradients();
    ASSERT_EQ(p.size(), g.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
        EXPECT_EQ(p[i].name, g[i].name);
        EXPECT_EQ(p[i].shape, g[i].shape);
    }
}

class DecoderGeneration : public ::testing::TestWithParam<DecoderCase> {};

TEST_P(DecoderGeneration, CachedEqualsUncached) {
    ModelConfig config = config_of(GetParam());
    config.max_len = 16;
    Rng rng(3);
    DecoderLM model(config, rng);
    perturb(model.parameters(), 5);
    for (float temperature : {0.0f, 1.0f}) {
        const GenerateOptions options{temperature, 7};
        const GenerateResult cached = model.generate({1, 4, 2}, 10, options);
        const GenerateResult uncached = model.generate_uncached({1, 4, 2}, 10, options);
        EXPECT_EQ(cached.tokens, uncached.tokens) << "temperature " << temperature;
        ASSERT_EQ(cached.tokens.size(), 13u);
        ASSERT_EQ(cached.logits.shape(0), 10u);
        double worst = 0;
        for (std::size_t i = 0; i < cached.logits.size(); ++i)
            worst = std::max(worst, double(std::fabs(cached.logits.data()[i] - uncached.logits.data()[i])));
        EXPECT_LT(worst, 1e-5) << "temperature " << temperature;
    }
}

INSTANTIATE_TEST_SUITE_P(Variants, DecoderGeneration, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DecoderLM, GreedyGenerationIsTheArgmaxOfTheLogits) {
    Rng rng(3);
    DecoderLM model(decoder_config(), rng);
    const GenerateResult r = model.generate({2}, 5);
    for (std::size_t i = 0; i < 5; ++i) {
        std::size_t best = 0;
        for (std::size_t j = 1; j < 9; ++j)
            if (r.logits(i, j) > r.logits(i, best)) best = j;
        EXPECT_EQ(r.tokens[i + 1], static_cast<std::int32_t>(best));
    }
}

TEST(DecoderLM, SamplingIsSeeded) {
    Rng rng(3);
    DecoderLM model(decoder_config(), rng);
    EXPECT_EQ(model.generate({2}, 8, {1.0f, 5}).tokens, model.generate({2}, 8, {1.0f, 5}).tokens);
}

TEST(DecoderLM, GenerationBeyondTheLearnedTableNamesBothLengths) {
    ModelConfig config = decoder_config();
    config.positional = PositionalKind::learned;
    Rng rng(3);
    DecoderLM model(config, rng);
    try {
        model.generate({1, 2, 3, 4, 5}, 8);
        FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("prompt length 5 + max_new_tokens 8"), std::string::npos) << msg;
        EXPECT_NE(msg.find("max_len 12"), std::string::npos) << msg;
    }
    EXPECT_NO_THROW(model.generate({1, 2, 3, 4, 5}, 7));
    config.positional = PositionalKind::sinusoidal;  // extrapolates
    DecoderLM sinusoidal(config, rng);
    EXPECT_NO_THROW(sinusoidal.generate({1, 2, 3, 4, 5}, 10));
    EXPECT_THROW(sinusoidal.generate({}, 1), ValueError);
    EXPECT_THROW(sinusoidal.generate({1}, 1, {-1.0f, 0}), ValueError);
    EXPECT_THROW(sinusoidal.generate({9}, 1), ValueError);
}

TEST(DecoderLM, AttentionMapsAreCausalDistributions) {
    Rng rng(3);
    DecoderLM model(decoder_config(), rng);
    const Tensor4 maps = model.attention_maps(Index2{{1, 2, 3, 4, 5}});
    ASSERT_EQ(maps.shape(0), 2u);
    ASSERT_EQ(maps.shape(1), 2u);
    ASSERT_EQ(maps.shape(2), 5u);
    ASSERT_EQ(maps.shape(3), 5u);
    for (std::size_t l = 0; l < 2; ++l)
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 5; ++i) {
                double sum = 0;
                for (std::size_t j = 0; j < 5; ++j) {
                    if (j > i) {
                        EXPECT_EQ(maps(l, h, i, j), 0.0f);
                    }
                    sum += maps(l, h, i, j);
                }
                EXPECT_NEAR(sum, 1.0, 1e-6);
            }
}

TEST(DecoderLM, AttentionStatsAreRecordedOnlyWhenAsked) {
    Rng rng(3);
    DecoderLM model(decoder_config(), rng);
    const Index2 tokens = {{1, 2, 3, 4, 5, 6}};
    model.forward(tokens);
    EXPECT_EQ(model.attention_stats().max_abs_score.size(), 0u);
    model.set_record_attention_stats(true);
    model.forward(tokens);
    const AttentionStats& s = model.attention_stats();
    ASSERT_EQ(s.max_abs_score.size(), 2u);
    ASSERT_EQ(s.entropy.shape(0), 2u);
    ASSERT_EQ(s.entropy.shape(1), 2u);
    EXPECT_GT(s.max_abs(), 0.0f);
    for (float e : s.entropy) {
        EXPECT_GT(e, 0.0f);
        EXPECT_LE(e, std::log(6.0f));  // row i spreads over at most i + 1 <= 6 keys
    }
}

TEST(DecoderLM, GradientCheckpointingChangesNothingButMemory) {
    ModelConfig config = decoder_config();
    config.dropout = 0.2f;
    Rng rng(3);
    DecoderLM plain(config, rng);
    DecoderLM checkpointed = plain;
    checkpointed.set_gradient_checkpointing(true);
    const Index2 tokens = {{1, 4, 2, 8, 0}, {3, 3, 5, 7, 6}};
    const Index2 targets = {{4, 2, 8, 0, -1}, {3, 5, 7, 6, -1}};
    for (DecoderLM* m : {&plain, &checkpointed}) {
        m->seed_dropout(9);
        m->zero_grad();
    }
    EXPECT_EQ(plain.loss_and_backward(tokens, targets).loss, checkpointed.loss_and_backward(tokens, targets).loss);
    const auto a = plain.gradients(), b = checkpointed.gradients();
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(std::memcmp(a[i].data, b[i].data, a[i].size() * sizeof(float)), 0) << a[i].name;
    }
}

TEST(DecoderLM, EvalModeNeitherDropsNorRecords) {
    ModelConfig config = decoder_config();
    config.dropout = 0.5f;
    Rng rng(3);
    DecoderLM model(config, rng);
    model.eval();
    const Index2 tokens = {{1, 2, 3}};
    EXPECT_EQ(model.forward(tokens), model.forward(tokens));
    EXPECT_THROW(model.backward(Tensor3::from_shape({1, 3, 9})), ValueError);
    model.train();
    model.loss_and_backward(tokens, tokens);  // a valid training cache, then a larger batch in eval mode:
    model.eval();                             // refused, not differentiated against the stale cache
    try {
        model.loss_and_backward(Index2{{1, 2, 3}, {3, 2, 1}}, Index2{{1, 2, 3}, {3, 2, 1}});
        ADD_FAILURE() << "no exception";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("evaluation mode"), std::string::npos) << e.what();
    }
    model.train();
    model.seed_dropout(1);
    const Tensor3 a = model.forward(tokens);
    model.seed_dropout(2);
    EXPECT_NE(a, model.forward(tokens));
}

// The first block's projections over the input's tables (post-LN, src/model/token/input_tables.hpp): 8
// sequences of 12 (96 rows >= 4 x (V 9 + T 12)), against the direct projections checkpointing
// makes the block take.
TEST(DecoderLM, FirstBlockTablesEqualTheDirectProjections) {
    for (PositionalKind positional : {PositionalKind::sinusoidal, PositionalKind::learned}) {
        SCOPED_TRACE(positional_name(positional));
        ModelConfig config = decoder_config();
        config.norm = NormPlacement::post;
        config.positional = positional;
        Index2 tokens = Index2::from_shape({8, 12}), targets = Index2::from_shape({8, 12});
        Rng data(6);
        for (auto& x : tokens) x = static_cast<std::int32_t>(data.below(9));
        for (auto& y : targets) y = static_cast<std::int32_t>(data.below(9));
        targets(3, 4) = kIgnoreTarget;
        Rng rng(3);
        DecoderLM tables(config, rng);
        perturb(tables.parameters(), 9);
        DecoderLM direct = tables;
        direct.set_gradient_checkpointing(true);
        tables.zero_grad();
        direct.zero_grad();
        EXPECT_NEAR(tables.loss_and_backward(tokens, targets).loss, direct.loss_and_backward(tokens, targets).loss, 1e-6);
        EXPECT_TRUE(testutil::values_near(tables.gradients(), testutil::copy_values(direct.gradients()), 1e-5f, 1e-3f));
    }
}

// ---- Split training steps (loss_and_backward on more rows than one micro-batch) ----

// 12 sequences of 48 positions (576 rows): split into micro-batches on any thread count; the
// last 4 targets of every third sequence are ignored.
struct SplitSequences {
    Index2 tokens = Index2::from_shape({12, 48});
    Index2 targets = Index2::from_shape({12, 48});
    explicit SplitSequences(std::size_t vocab) {
        Rng data(5);
        for (auto& x : tokens) x = static_cast<std::int32_t>(data.below(vocab));
        for (std::size_t b = 0; b < 12; ++b) {
            for (std::size_t i = 0; i < 48; ++i) {
                targets(b, i) = b % 3 == 0 && i >= 44 ? kIgnoreTarget : tokens(b, (i + 1) % 48);
            }
        }
    }
};

using testutil::ThreadCountScope;

ModelConfig split_config(PositionalKind positional, NormPlacement norm, bool tie) {
    ModelConfig config = decoder_config();
    config.max_len = 48;
    config.positional = positional;
    config.norm = norm;
    config.tie_weights = tie;
    return config;
}

TEST(DecoderLM, SplitStepEqualsTheWholeBatchStep) {
    for (std::size_t threads : {1, 2}) {
        for (const ModelConfig& config : {split_config(PositionalKind::learned, NormPlacement::pre, true),
                                          split_config(PositionalKind::rope, NormPlacement::post, false)}) {
            SCOPED_TRACE(testing::Message() << threads << " threads, tie " << config.tie_weights);
            const ThreadCountScope scope(threads);
            const SplitSequences batch(config.vocab_size);
            Rng rng(3);
            DecoderLM model(config, rng);
            perturb(model.parameters(), 9);

            // The reference: one forward and one backward over the whole batch.
            model.zero_grad();
            const Tensor3 logits = model.forward(batch.tokens);  // (B, T, V)
            const std::size_t rows = batch.tokens.size(), v = config.vocab_size;
            Tensor2 flat = Tensor2::from_shape({rows, v});
            std::copy(logits.begin(), logits.end(), flat.begin());
            Index1 flat_targets = Index1::from_shape({rows});
            std::copy(batch.targets.begin(), batch.targets.end(), flat_targets.begin());
            CrossEntropyCache ce;
            const CrossEntropyResult whole = cross_entropy_forward(flat, flat_targets, &ce);
            Tensor2 dflat;
            cross_entropy_backward(ce, 1.0f, dflat);
            Tensor3 dlogits = Tensor3::from_shape(logits.shape());
            std::copy(dflat.begin(), dflat.end(), dlogits.begin());
            model.backward(dlogits);
            const std::vector<std::vector<float>> expected = testutil::copy_values(model.gradients());

            model.zero_grad();
            const CrossEntropyResult split = model.loss_and_backward(batch.tokens, batch.targets);
            EXPECT_THROW(model.backward(dlogits), ValueError);  // it was split: no whole-batch forward kept
            EXPECT_EQ(split.count, 12u * 48u - 4u * 4u);
            EXPECT_EQ(split.count, whole.count);
            EXPECT_EQ(split.correct, whole.correct);
            EXPECT_NEAR(split.loss, whole.loss, 1e-6);
            EXPECT_TRUE(testutil::values_near(model.gradients(), expected, 1e-5f, 1e-3f));
        }
    }
}

TEST(DecoderLM, SplitStepWithCheckpointingAndDropoutChangesNothingButMemory) {
    ModelConfig config = split_config(PositionalKind::learned, NormPlacement::pre, true);
    config.dropout = 0.2f;
    const SplitSequences batch(config.vocab_size);
    Rng rng(3);
    DecoderLM plain(config, rng);
    DecoderLM checkpointed = plain;
    checkpointed.set_gradient_checkpointing(true);
    for (DecoderLM* m : {&plain, &checkpointed}) {
        m->seed_dropout(9);
        m->zero_grad();
    }
    const float loss = plain.loss_and_backward(batch.tokens, batch.targets).loss;
    EXPECT_TRUE(std::isfinite(loss));
    EXPECT_EQ(loss, checkpointed.loss_and_backward(batch.tokens, batch.targets).loss);
    const auto a = plain.gradients(), b = checkpointed.gradients();
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(std::memcmp(a[i].data, b[i].data, a[i].size() * sizeof(float)), 0) << a[i].name;
    }
}

TEST(DecoderLM, SplitStepErrorsNameTheBatchPosition) {
    const ModelConfig config = split_config(PositionalKind::learned, NormPlacement::pre, false);
    Rng rng(3);
    DecoderLM model(config, rng);
    const auto message = [&](const SplitSequences& b) {
        try {
            model.loss_and_backward(b.tokens, b.targets);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    SplitSequences bad_target(config.vocab_size);
    bad_target.targets(10, 7) = 9;  // V = 9
    EXPECT_NE(message(bad_target).find("target 9 at (10, 7)"), std::string::npos) << message(bad_target);
    SplitSequences bad_token(config.vocab_size);
    bad_token.tokens(9, 5) = -2;
    EXPECT_NE(message(bad_token).find("at (9, 5)"), std::string::npos) << message(bad_token);
    SplitSequences wrong_targets(config.vocab_size);
    wrong_targets.targets = Index2::from_shape({12, 47});
    EXPECT_THROW(model.loss_and_backward(wrong_targets.tokens, wrong_targets.targets), ShapeError);
}

}  // namespace
}  // namespace attnlab
