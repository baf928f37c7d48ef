// The sigmoid and ReLU normalisers (attention/normalizer.hpp) through scaled dot-product
// attention, the flash path and MultiHeadAttention, and tied W_Q = W_K (tie_qk): the formulas
// against a plain reference written here, masks, recorded = tiled, finite differences, the
// model config, checkpoints and training.
#include "attnlab/attention/normalizer.hpp"

#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/io/checkpoint.hpp"
#include "attnlab/train/trainer.hpp"
#include "support/fixtures.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

constexpr Normalizer kPointwise[] = {Normalizer::sigmoid, Normalizer::relu};

// A mask with every component the normalisers must count: causal, padding, window with a global
// token, and an explicit mask whose last row hides every key (a fully masked row).
enum class MaskKind { none, causal, padding, window, explicit_all };
constexpr MaskKind kMasks[] = {MaskKind::none, MaskKind::causal, MaskKind::padding, MaskKind::window,
                               MaskKind::explicit_all};

AttentionMask make_mask(MaskKind kind, std::size_t batch, std::size_t t, std::size_t s) {
    AttentionMask m;
    switch (kind) {
        case MaskKind::none: break;
        case MaskKind::causal: m.causal = true; break;
        case MaskKind::padding: m.key_padding = padding_mask_from_lengths(std::vector<std::size_t>(batch, s - 2), s);
            if (batch > 1) m.key_padding(1, 0) = 1;  // batch rows differ
            break;
        case MaskKind::window: m.window = 2; m.global_tokens = 1; m.causal = true; break;
        case MaskKind::explicit_all: {
            m.explicit_mask = Mask2::from_shape({t, s});
            for (std::size_t i = 0; i < t; ++i)
                for (std::size_t j = 0; j < s; ++j) m.explicit_mask(i, j) = (i + 2 * j) % 5 == 0 || i + 1 == t;
            break;
        }
    }
    return m;
}

std::string mask_name(MaskKind kind) {
    const char* names[] = {"none", "causal", "padding", "window", "explicit"};
    return names[static_cast<int>(kind)];
}

// The formulas in double, one (query, key) at a time: s the scaled score, n the visible
// keys of the row; masked keys 0.
double reference_weight(Normalizer normalizer, double s, bool masked, double n) {
    if (masked || n == 0) return 0.0;
    if (normalizer == Normalizer::sigmoid) return 1.0 / (1.0 + std::exp(-(s - std::log(n))));
    return std::max(s, 0.0) / n;
}

TEST(Normalizer, NamesRoundTripAndUnknownNamesAreRefusedWithTheValidOnes) {
    for (Normalizer n : {Normalizer::softmax, Normalizer::sigmoid, Normalizer::relu}) {
        EXPECT_EQ(normalizer_from_name(normalizer_name(n)), n);
    }
    try {
        normalizer_from_name("tanh");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'tanh'"), std::string::npos) << what;
        EXPECT_NE(what.find("softmax, sigmoid, relu"), std::string::npos) << what;
    }
}

TEST(Normalizer, VisibleKeyCountsMatchIsMaskedForEveryMask) {
    const std::size_t batch = 2, t = 5, s = 7;
    for (MaskKind kind : kMasks) {
        const AttentionMask m = make_mask(kind, batch, t, s);
        const Tensor2 counts = visible_key_counts(m, batch, t, s);
        for (std::size_t b = 0; b < batch; ++b) {
            for (std::size_t i = 0; i < t; ++i) {
                std::size_t n = 0;
                for (std::size_t j = 0; j < s; ++j) n += !m.is_masked(b, i, j, t, s);
                EXPECT_EQ(counts(b, i), static_cast<float>(n)) << mask_name(kind) << " b " << b << " i " << i;
            }
        }
    }
}

// The weights stage equals the formulas; masked keys are exactly 0, a fully masked row is all
// zeros (and its context zeros), never NaN.
TEST(Normalizer, WeightsFollowTheFormulasAndMaskedKeysWeighExactlyZero) {
    const std::size_t batch = 2, heads = 2, t = 5, s = 7, d = 4;
    const Tensor4 q = test::random_normal<Tensor4>({batch, heads, t, d}, 1, 1.5f);
    const Tensor4 k = test::random_normal<Tensor4>({batch, heads, s, d}, 2, 1.5f);
    const Tensor4 v = test::random_normal<Tensor4>({batch, heads, s, d}, 3);
    const double scale = 0.5;
    for (Normalizer normalizer : kPointwise) {
        for (MaskKind kind : kMasks) {
            const AttentionMask m = make_mask(kind, batch, t, s);
            AttentionCache cache;  // need_weights: the recorded path
            const Tensor4 ctx =
                scaled_dot_product_attention(q, k, v, m, {}, nullptr, &cache, SdpBackend::math, normalizer);
            for (std::size_t b = 0; b < batch; ++b) {
                for (std::size_t h = 0; h < heads; ++h) {
                    for (std::size_t i = 0; i < t; ++i) {
                        std::size_t n = 0;
                        for (std::size_t j = 0; j < s; ++j) n += !m.is_masked(b, i, j, t, s);
                        for (std::size_t j = 0; j < s; ++j) {
                            double dot = 0;
                            for (std::size_t x = 0; x < d; ++x) dot += double(q(b, h, i, x)) * k(b, h, j, x);
                            const bool masked = m.is_masked(b, i, j, t, s);
                            const double want = reference_weight(normalizer, dot * scale, masked, double(n));
                            const float got = cache.weights(b, h, i, j);
                            if (masked) {
                                EXPECT_EQ(got, 0.0f) << mask_name(kind);
                            } else {
                                EXPECT_NEAR(got, want, 1e-6 + 1e-5 * std::fabs(want))
                                    << normalizer_name(normalizer) << " " << mask_name(kind) << " (" << b << ", " << h
                                    << ", " << i << ", " << j << ")";
                            }
                        }
                        if (n == 0) {
                            for (std::size_t x = 0; x < d; ++x) EXPECT_EQ(ctx(b, h, i, x), 0.0f);
                        }
                    }
                }
            }
            for (float x : ctx) ASSERT_TRUE(std::isfinite(x));
        }
    }
}

// At initialisation-sized scores (s ≈ 0) sigmoid's row sums stay near 1: the ln n_i bias.
TEST(Normalizer, SigmoidRowSumsAreNearOneForSmallScores) {
    const std::size_t t = 64, s = 64, d = 8;
    const Tensor4 q = test::random_normal<Tensor4>({1, 1, t, d}, 4, 0.05f);
    const Tensor4 k = test::random_normal<Tensor4>({1, 1, s, d}, 5, 0.05f);
    const Tensor4 v = test::random_normal<Tensor4>({1, 1, s, d}, 6);
    AttentionMask m;
    m.causal = true;
    AttentionCache cache;
    scaled_dot_product_attention(q, k, v, m, {}, nullptr, &cache, SdpBackend::math, Normalizer::sigmoid);
    for (std::size_t i = 0; i < t; ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < s; ++j) sum += cache.weights(0, 0, i, j);
        EXPECT_NEAR(sum, double(i + 1) / (i + 2), 0.02) << "row " << i;  // n/(n+1) at s = 0
    }
}

// Values the WebAssembly build must reproduce (tests/wasm/normalizer.test.mjs): the first four
// outputs of MultiHeadAttention({d_model 8, 2 heads}, Rng(3)) on x[i] = ((7·i) mod 13 − 6) / 8,
// (T = 6, C = 8), causal.
TEST(Normalizer, NativeValuesForTheWasmTest) {
    MultiHeadAttentionConfig config;
    config.d_model = 8;
    config.num_heads = 2;
    Rng rng(3);
    const MultiHeadAttention mha(config, rng);
    Tensor2 x = Tensor2::from_shape({6, 8});
    for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(static_cast<int>((7 * i) % 13) - 6) / 8.0f;
    const float want[2][4] = {{0.18986231f, 0.21546906f, -0.030853612f, -0.0080161244f},
                              {0.086557277f, 0.11474688f, -0.023693033f, 0.0029844027f}};
    int row = 0;
    for (Normalizer normalizer : kPointwise) {
        AttentionOptions options;
        options.mask.causal = true;
        options.normalizer = normalizer;
        const Tensor2 y = mha.forward(x, nullptr, options);
        std::printf("%s: %.8g, %.8g, %.8g, %.8g\n", std::string(normalizer_name(normalizer)).c_str(), y.data()[0],
                    y.data()[1], y.data()[2], y.data()[3]);
        for (int i = 0; i < 4; ++i) EXPECT_NEAR(y.data()[i], want[row][i], 1e-6) << normalizer_name(normalizer) << " " << i;
        ++row;
    }
}

struct PathCase {
    std::size_t heads, kv_heads, t, s;
};

// The tiled path equals the recorded one (forward and backward) for one key tile and several,
// every mask, MHA and GQA.
TEST(Normalizer, FlashPathEqualsTheRecordedPath) {
    const PathCase cases[] = {{2, 2, 5, 7}, {4, 2, 9, 9}, {2, 1, 70, 300}, {2, 2, 130, 130}};
    const std::size_t batch = 2, d = 8;
    for (const PathCase& pc : cases) {
        const Tensor4 q = test::random_normal<Tensor4>({batch, pc.heads, pc.t, d}, 11);
        const Tensor4 k = test::random_normal<Tensor4>({batch, pc.kv_heads, pc.s, d}, 12);
        const Tensor4 v = test::random_normal<Tensor4>({batch, pc.kv_heads, pc.s, d}, 13);
        const Tensor4 dctx = test::random_normal<Tensor4>({batch, pc.heads, pc.t, d}, 14);
        for (Normalizer normalizer : kPointwise) {
            for (MaskKind kind : kMasks) {
                const AttentionMask m = make_mask(kind, batch, pc.t, pc.s);
                const std::string what = std::string(normalizer_name(normalizer)) + " " + mask_name(kind) + " T " +
                                         std::to_string(pc.t) + " S " + std::to_string(pc.s);
                AttentionCache math_cache, flash_cache = AttentionCache::without_weights();
                const Tensor4 a = scaled_dot_product_attention(q, k, v, m, {}, nullptr, &math_cache, SdpBackend::math,
                                                               normalizer);
                const Tensor4 b = scaled_dot_product_attention(q, k, v, m, {}, nullptr, &flash_cache,
                                                               SdpBackend::flash, normalizer);
                ASSERT_TRUE(flash_cache.flash);
                EXPECT_TRUE(test::all_close(b, a, 1e-5, 1e-5)) << what;
                Tensor4 dqa, dka, dva, dqb, dkb, dvb;
                scaled_dot_product_attention_backward(dctx, q, k, v, math_cache, {}, dqa, dka, dva);
                scaled_dot_product_attention_backward(dctx, q, k, v, flash_cache, {}, dqb, dkb, dvb);
                EXPECT_TRUE(test::all_close(dqb, dqa, 1e-5, 1e-5)) << what << " dq";
                EXPECT_TRUE(test::all_close(dkb, dka, 1e-5, 1e-5)) << what << " dk";
                EXPECT_TRUE(test::all_close(dvb, dva, 1e-5, 1e-5)) << what << " dv";
                for (float x : b) ASSERT_TRUE(std::isfinite(x)) << what;
                for (float x : dqb) ASSERT_TRUE(std::isfinite(x)) << what;
            }
        }
    }
}

// Central differences through scaled dot-product attention on both paths, every mask, GQA.
TEST(Normalizer, SdpaBackwardMatchesFiniteDifferences) {
    const std::size_t batch = 2, heads = 4, kv_heads = 2, t = 4, s = 6, d = 4;
    Tensor4 q = test::random_normal<Tensor4>({batch, heads, t, d}, 21);
    Tensor4 k = test::random_normal<Tensor4>({batch, kv_heads, s, d}, 22);
    Tensor4 v = test::random_normal<Tensor4>({batch, kv_heads, s, d}, 23);
    const Tensor4 w = test::random_normal<Tensor4>({batch, heads, t, d}, 24);
    for (Normalizer normalizer : kPointwise) {
        // relu has a kink at s = 0: a smaller step keeps the perturbed scores on one side of it.
        const testutil::GradCheckOptions tol =
            normalizer == Normalizer::relu ? testutil::GradCheckOptions{1e-3, 3e-3, 1e-2}
                                           : testutil::GradCheckOptions{1e-2, 2e-3, 1e-2};
        for (MaskKind kind : kMasks) {
            const AttentionMask m = make_mask(kind, batch, t, s);
            for (SdpBackend backend : {SdpBackend::math, SdpBackend::flash}) {
                const std::string what = std::string(normalizer_name(normalizer)) + " " + mask_name(kind) +
                                         (backend == SdpBackend::math ? " math" : " flash");
                AttentionCache cache = backend == SdpBackend::math ? AttentionCache() : AttentionCache::without_weights();
                scaled_dot_product_attention(q, k, v, m, {}, nullptr, &cache, backend, normalizer);
                Tensor4 dq, dk, dv;
                scaled_dot_product_attention_backward(w, q, k, v, cache, {}, dq, dk, dv);
                auto loss = [&] {
                    return testutil::dot(scaled_dot_product_attention(q, k, v, m, {}, nullptr, nullptr, backend,
                                                                      normalizer),
                                         w);
                };
                EXPECT_TRUE(testutil::check_gradient(what + " dq", loss, q.data(), dq.data(), q.size(), tol));
                EXPECT_TRUE(testutil::check_gradient(what + " dk", loss, k.data(), dk.data(), k.size(), tol));
                EXPECT_TRUE(testutil::check_gradient(what + " dv", loss, v.data(), dv.data(), v.size(), tol));
            }
        }
    }
}

// Perturbs every parameter of mha slightly so biases are non-zero.
void jitter(MultiHeadAttention& mha) {
    for (auto& p : mha.parameters()) {
        Rng r(p.size() + 1);
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.1f * r.normal();
    }
}

// Records the weights stage: forces MultiHeadAttention onto the recorded path.
struct WantsWeights : StageObserver {
    bool wants(Stage stage) const override { return stage == Stage::weights; }
    void on_stage(const StageView&) override {}
};

// Central differences of MultiHeadAttention (x and every parameter) with each normaliser or a
// tied W_Q = W_K, on the flash path (heads in rows) and the recorded path, with masks and GQA.
struct MhaCase {
    const char* name;
    Normalizer normalizer;
    std::size_t kv_heads;
    bool tie_qk, causal, padding, rope, recorded;
};
std::ostream& operator<<(std::ostream& out, const MhaCase& c) { return out << c.name; }
class NormalizerMhaBackward : public ::testing::TestWithParam<MhaCase> {};

TEST_P(NormalizerMhaBackward, MatchesFiniteDifferences) {
    const MhaCase& tc = GetParam();
    const std::size_t batch = 2, t = 5, c = 8;
    MultiHeadAttentionConfig config;
    config.d_model = c;
    config.num_heads = 4;
    config.num_kv_heads = tc.kv_heads;
    config.tie_qk = tc.tie_qk;
    Rng rng(7);
    MultiHeadAttention mha(config, rng);
    jitter(mha);
    Tensor3 x = test::random_normal<Tensor3>({batch, t, c}, 1);
    const Tensor3 w = test::random_normal<Tensor3>({batch, t, c}, 3);
    AttentionOptions options;
    options.normalizer = tc.normalizer;
    options.mask.causal = tc.causal;
    if (tc.padding) options.mask.key_padding = padding_mask_from_lengths({t, t - 2}, t);
    options.rope = tc.rope;
    WantsWeights observer;
    StageObserver* obs = tc.recorded ? &observer : nullptr;

    MultiHeadAttentionCache cache;
    mha.forward(x, nullptr, options, obs, &cache);
    EXPECT_EQ(cache.heads_in_rows, !tc.recorded && !tc.rope);
    MultiHeadAttentionGrad grads(mha);
    Tensor3 dx;
    mha.backward(w, cache, options, grads, dx);

    auto loss = [&] { return testutil::dot(mha.forward(x, nullptr, options), w); };
    // relu's kink at s = 0: a parameter moves every score of the layer, so the step must be small
    // enough that none of them crosses 0 (float cancellation then needs the wider atol).
    const testutil::GradCheckOptions tol = tc.normalizer == Normalizer::relu
                                               ? testutil::GradCheckOptions{1e-4, 5e-3, 2e-2}
                                               : testutil::GradCheckOptions{1e-2, 2e-3, 1e-2};
    EXPECT_TRUE(testutil::check_gradient("dx", loss, x.data(), dx.data(), x.size(), tol));
    auto params = mha.parameters();
    auto views = grads.views();
    ASSERT_EQ(params.size(), views.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        ASSERT_EQ(params[i].name, views[i].name);
        EXPECT_TRUE(testutil::check_gradient(params[i].name, loss, params[i].data, views[i].data, params[i].size(), tol));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, NormalizerMhaBackward,
    ::testing::Values(MhaCase{"sigmoid_causal_flash", Normalizer::sigmoid, 4, false, true, false, false, false},
                      MhaCase{"sigmoid_padding_gqa_recorded", Normalizer::sigmoid, 2, false, false, true, false, true},
                      MhaCase{"sigmoid_rope_mqa", Normalizer::sigmoid, 1, false, true, false, true, false},
                      MhaCase{"relu_causal_gqa_flash", Normalizer::relu, 2, false, true, false, false, false},
                      MhaCase{"relu_padding_recorded", Normalizer::relu, 4, false, false, true, false, true},
                      MhaCase{"tied_softmax_flash", Normalizer::softmax, 4, true, true, false, false, false},
                      MhaCase{"tied_softmax_rope", Normalizer::softmax, 4, true, false, true, true, false},
                      MhaCase{"tied_sigmoid_recorded", Normalizer::sigmoid, 4, true, true, true, false, true}),
    [](const ::testing::TestParamInfo<MhaCase>& info) { return std::string(info.param.name); });

TEST(TieQk, OneProjectionServesQueriesAndKeysAndIsListedOnce) {
    MultiHeadAttentionConfig config;
    config.d_model = 8;
    config.num_heads = 2;
    config.tie_qk = true;
    Rng rng(3);
    MultiHeadAttention mha(config, rng);
    std::vector<std::string> names;
    for (const auto& p : mha.parameters()) names.push_back(p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"q_proj.weight", "q_proj.bias", "v_proj.weight", "v_proj.bias",
                                               "out_proj.weight", "out_proj.bias"}));
    // The keys are the queries' projection: with W_Q = W_K every head's score matrix is symmetric.
    const Tensor3 x = test::random_normal<Tensor3>({1, 4, 8}, 5);
    // on_stage may run on several pool threads at once (StageObserver's contract).
    struct Scores : StageObserver {
        std::mutex mutex;
        std::vector<Tensor2> got;
        bool wants(Stage stage) const override { return stage == Stage::scores; }
        void on_stage(const StageView& view) override {
            Tensor2 m = Tensor2::from_shape({view.rows, view.cols});
            for (std::size_t i = 0; i < view.rows; ++i)
                for (std::size_t j = 0; j < view.cols; ++j) m(i, j) = view.data[i * view.ld + j];
            const std::lock_guard<std::mutex> lock(mutex);
            got.push_back(m);
        }
    } scores;
    mha.forward(x, nullptr, {}, &scores);
    ASSERT_EQ(scores.got.size(), 2u);
    for (const Tensor2& m : scores.got)
        for (std::size_t i = 0; i < 4; ++i)
            for (std::size_t j = 0; j < 4; ++j) EXPECT_FLOAT_EQ(m(i, j), m(j, i));
}

TEST(TieQk, GqaAndCrossAttentionOfAnotherWidthAreRefusedSayingWhy) {
    MultiHeadAttentionConfig gqa;
    gqa.d_model = 8;
    gqa.num_heads = 4;
    gqa.num_kv_heads = 2;
    gqa.tie_qk = true;
    Rng rng(1);
    try {
        MultiHeadAttention mha(gqa, rng);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("tie_qk needs as many key heads"), std::string::npos) << e.what();
    }
    MultiHeadAttentionConfig cross;
    cross.d_model = 8;
    cross.num_heads = 2;
    cross.kv_dim = 6;
    cross.tie_qk = true;
    try {
        MultiHeadAttention mha(cross, rng);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("kv_dim 6"), std::string::npos) << e.what();
    }
    ModelConfig config;
    config.vocab_size = 8;
    config.num_kv_heads = 2;
    config.tie_qk = true;
    try {
        config.validate();
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("tie_qk needs num_kv_heads = num_heads"), std::string::npos) << e.what();
    }
}

ModelConfig tiny(ModelKind kind) {
    ModelConfig c;
    c.kind = kind;
    c.vocab_size = 9;
    c.max_len = 12;
    c.d_model = 16;
    c.num_heads = 4;
    c.num_layers = 2;
    c.ff_dim = 32;
    if (kind == ModelKind::encoder) c.num_classes = 3;
    return c;
}

TEST(TieQk, ParameterCountCheckpointAndMetadata) {
    for (ModelKind kind : {ModelKind::decoder, ModelKind::encoder}) {
        ModelConfig c = tiny(kind);
        c.tie_qk = true;
        c.normalizer = Normalizer::sigmoid;
        Model model(c, 5);
        std::uint64_t n = 0;
        for (const auto& p : model.parameters()) {
            n += p.size();
            EXPECT_EQ(p.name.find("k_proj"), std::string::npos) << p.name;
        }
        EXPECT_EQ(n, c.parameter_count());
        ModelConfig untied = c;
        untied.tie_qk = false;
        EXPECT_EQ(untied.parameter_count() - c.parameter_count(), c.num_layers * (16u * 16u + 16u));

        const auto meta = c.to_metadata();
        EXPECT_EQ(meta.at("tie_qk"), "true");
        EXPECT_EQ(meta.at("normalizer"), "sigmoid");
        const std::vector<std::uint8_t> bytes = model.save();
        Model again = Model::load(bytes);
        EXPECT_EQ(again.config(), c);
        EXPECT_EQ(again.save(), bytes);
    }
    // Older checkpoints have neither key: softmax, untied.
    auto meta = tiny(ModelKind::decoder).to_metadata();
    meta.erase("normalizer");
    meta.erase("tie_qk");
    const ModelConfig old = ModelConfig::from_metadata(meta);
    EXPECT_EQ(old.normalizer, Normalizer::softmax);
    EXPECT_FALSE(old.tie_qk);
    meta["normalizer"] = "tanh";
    EXPECT_THROW(ModelConfig::from_metadata(meta), ConfigError);
}

// Each normaliser, and the tie, trains: the loss falls within a few dozen steps.
TEST(Normalizer, ModelsTrainWithEachNormaliserAndTheTie) {
    struct Run {
        const char* task;
        ModelKind kind;
        Normalizer normalizer;
        bool tie;
    };
    const Run runs[] = {{"copy", ModelKind::decoder, Normalizer::sigmoid, false},
                        {"copy", ModelKind::decoder, Normalizer::relu, false},
                        {"copy", ModelKind::decoder, Normalizer::softmax, true},
                        {"brackets", ModelKind::encoder, Normalizer::sigmoid, true},
                        {"brackets", ModelKind::encoder, Normalizer::relu, false}};
    for (const Run& run : runs) {
        const auto task = make_task(run.task, {});
        ModelConfig c = tiny(run.kind);
        c.vocab_size = task->vocab_size();
        c.max_len = task->seq_len() + 1;
        if (run.kind == ModelKind::encoder) c.num_classes = task->num_classes();
        c.normalizer = run.normalizer;
        c.tie_qk = run.tie;
        Model model(c, 2);
        TrainerOptions options;
        options.lr = 3e-3f;
        options.warmup_steps = 5;
        options.total_steps = 60;
        options.batch_size = 16;
        Trainer trainer(model, *task, options);
        const float before = trainer.evaluate(4).loss;
        for (int i = 0; i < 60; ++i) ASSERT_TRUE(std::isfinite(trainer.step().loss)) << run.task;
        const float after = trainer.evaluate(4).loss;
        EXPECT_LT(after, before) << run.task << " " << normalizer_name(run.normalizer) << " tie " << run.tie;
    }
}

}  // namespace
}  // namespace attnlab
