// Linear attention (attention/linear_attention.hpp): the formula against a plain reference
// written here, the recorded path against the fast one, central finite differences through the
// function and through MultiHeadAttention, the refusals, incremental decoding with its
// constant-size state, and the models training with variant = linear.
#include "attnlab/attention/linear_attention.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/train/trainer.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

// φ(x) = elu(x) + 1, written as the paper does: elu(x) = x for x > 0, e^x - 1 otherwise.
double phi(double x) { return (x > 0.0 ? x : std::expm1(x)) + 1.0; }

// The formula, pair by pair in double:
//   out_i = Σ_j φ(q_i)·φ(k_j) v_j / (Σ_j φ(q_i)·φ(k_j) + 1e-6) over the keys i may see.
// q: (B, H, T, D), k: (B, Hkv, S, D), v: (B, Hkv, S, Dv) -> (B, H, T, Dv)
Tensor4 reference(const Tensor4& q, const Tensor4& k, const Tensor4& v, bool causal, const Mask2& padding) {
    const std::size_t batch = q.shape(0), heads = q.shape(1), t = q.shape(2), d = q.shape(3);
    const std::size_t kv_heads = k.shape(1), s = k.shape(2), dv = v.shape(3);
    Tensor4 out = Tensor4::from_shape({batch, heads, t, dv});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t i = 0; i < t; ++i) {
                const std::size_t g = h / (heads / kv_heads);
                std::vector<double> num(dv, 0.0);
                double den = 0.0;
                for (std::size_t j = 0; j < s; ++j) {
                    const bool hidden = (causal && j + t > i + s) || (padding.size() > 0 && padding(b, j));
                    if (hidden) continue;
                    double a = 0.0;
                    for (std::size_t x = 0; x < d; ++x) a += phi(q(b, h, i, x)) * phi(k(b, g, j, x));
                    den += a;
                    for (std::size_t e = 0; e < dv; ++e) num[e] += a * v(b, g, j, e);
                }
                for (std::size_t e = 0; e < dv; ++e) out(b, h, i, e) = static_cast<float>(num[e] / (den + 1e-6));
            }
    return out;
}

double max_abs_diff(const Tensor4& a, const Tensor4& b) {
    EXPECT_EQ(a.shape(), b.shape());
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, double(std::fabs(a.data()[i] - b.data()[i])));
    }
    return worst;
}

struct LinearCase {
    const char* name;
    std::size_t heads, kv_heads, t, s;
    bool causal, padding;
};
std::ostream& operator<<(std::ostream& out, const LinearCase& c) { return out << c.name; }

const LinearCase kCases[] = {
    {"plain", 2, 2, 5, 5, false, false},       {"causal", 2, 2, 6, 6, true, false},
    {"padding", 2, 2, 5, 5, false, true},      {"causal_padding", 2, 2, 6, 6, true, true},
    {"gqa_causal", 4, 2, 5, 5, true, false},   {"mqa_padding", 4, 1, 5, 5, false, true},
    {"cross", 2, 2, 3, 7, false, true},        {"cross_gqa", 4, 2, 4, 6, false, false},
    {"causal_kv_cache", 2, 1, 3, 7, true, false},  // T < S: bottom-right aligned
};

struct Inputs {
    Tensor4 q, k, v;
    AttentionMask mask;
};
Inputs inputs_of(const LinearCase& c, std::size_t d = 4, std::size_t dv = 3) {
    Inputs in{test::random_normal<Tensor4>({2, c.heads, c.t, d}, 11),
              test::random_normal<Tensor4>({2, c.kv_heads, c.s, d}, 12),
              test::random_normal<Tensor4>({2, c.kv_heads, c.s, dv}, 13), {}};
    in.mask.causal = c.causal;
    if (c.padding) in.mask.key_padding = padding_mask_from_lengths({c.s, c.s - 2}, c.s);
    return in;
}

class LinearAttentionCases : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LinearAttentionCases, BothPathsFollowTheFormula) {
    const Inputs in = inputs_of(GetParam());
    const Tensor4 expected = reference(in.q, in.k, in.v, in.mask.causal, in.mask.key_padding);
    for (LinearBackend backend : {LinearBackend::recorded, LinearBackend::fast}) {
        const Tensor4 got = linear_attention(in.q, in.k, in.v, in.mask, nullptr, nullptr, backend);
        EXPECT_LT(max_abs_diff(got, expected), 1e-5) << "backend " << static_cast<int>(backend);
    }
}

TEST_P(LinearAttentionCases, BackwardMatchesFiniteDifferences) {
    Inputs in = inputs_of(GetParam());
    const Tensor4 w = test::random_normal<Tensor4>({2, GetParam().heads, GetParam().t, 3}, 14);
    for (LinearBackend backend : {LinearBackend::recorded, LinearBackend::fast}) {
        LinearAttentionCache cache;
        linear_attention(in.q, in.k, in.v, in.mask, nullptr, &cache, backend);
        EXPECT_EQ(cache.recorded, backend == LinearBackend::recorded);
        Tensor4 dq, dk, dv;
        linear_attention_backward(w, in.v, cache, dq, dk, dv);
        auto loss = [&] { return testutil::dot(linear_attention(in.q, in.k, in.v, in.mask, nullptr, nullptr, backend), w); };
        const std::string name = std::string(GetParam().name) + (backend == LinearBackend::fast ? " fast" : " recorded");
        const testutil::GradCheckOptions tol{1e-2, 1e-3, 1e-2};
        EXPECT_TRUE(testutil::check_gradient(name + " dq", loss, in.q.data(), dq.data(), dq.size(), tol));
        EXPECT_TRUE(testutil::check_gradient(name + " dk", loss, in.k.data(), dk.data(), dk.size(), tol));
        EXPECT_TRUE(testutil::check_gradient(name + " dv", loss, in.v.data(), dv.data(), dv.size(), tol));
    }
}

INSTANTIATE_TEST_SUITE_P(Masks, LinearAttentionCases, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The recorded path (the reference, (T, S) weights) and the fast one (running sums) agree on
// sizes where the sums run over many keys, in the forward and in every gradient.
TEST(LinearAttention, RecordedEqualsFastForwardAndBackward) {
    for (bool causal : {false, true}) {
        const LinearCase c{"big", 4, 2, 37, 37, causal, true};
        const Inputs in = inputs_of(c, 8, 8);
        const Tensor4 w = test::random_normal<Tensor4>({2, 4, 37, 8}, 15);
        LinearAttentionCache recorded, fast;
        TraceRecorder trace({Stage::weights});
        const Tensor4 a = linear_attention(in.q, in.k, in.v, in.mask, &trace, &recorded);  // automatic: weights wanted
        const Tensor4 b = linear_attention(in.q, in.k, in.v, in.mask, nullptr, &fast);
        EXPECT_TRUE(recorded.recorded);
        EXPECT_FALSE(fast.recorded);
        EXPECT_EQ(fast.weights.size(), 0u);
        EXPECT_LT(max_abs_diff(a, b), 1e-5) << "causal " << causal;
        Tensor4 dq1, dk1, dv1, dq2, dk2, dv2;
        linear_attention_backward(w, in.v, recorded, dq1, dk1, dv1);
        linear_attention_backward(w, in.v, fast, dq2, dk2, dv2);
        EXPECT_LT(max_abs_diff(dq1, dq2), 1e-5);
        EXPECT_LT(max_abs_diff(dk1, dk2), 1e-5);
        EXPECT_LT(max_abs_diff(dv1, dv2), 1e-5);
        // The implied weights: each visible row sums to 1 (up to the 1e-6), padded keys get 0.
        const Tensor2& w0 = trace.get(Stage::weights, 1, 3);
        for (std::size_t i = 0; i < 37; ++i) {
            double sum = 0.0;
            for (std::size_t j = 0; j < 37; ++j) sum += w0(i, j);
            EXPECT_NEAR(sum, 1.0, 1e-5);
            EXPECT_EQ(w0(i, 36), 0.0f);  // batch 1 pads its last two keys
            if (causal && i < 30) EXPECT_EQ(w0(i, i + 1), 0.0f);
        }
    }
}

TEST(LinearAttention, RecordsPhiStagesPerHead) {
    const Inputs in = inputs_of({"gqa", 4, 2, 5, 5, false, false});
    TraceRecorder trace;
    linear_attention(in.q, in.k, in.v, in.mask, &trace);
    EXPECT_EQ(trace.num_heads(Stage::phi_q), 4u);
    EXPECT_EQ(trace.num_heads(Stage::phi_k), 2u);  // per key/value head, like k
    EXPECT_TRUE(trace.has(Stage::weights, 0, 3));
    EXPECT_FALSE(trace.has(Stage::scores, 0, 0));  // linear attention has no softmax scores
    EXPECT_FLOAT_EQ(trace.get(Stage::phi_q, 1, 2)(3, 1), linear_attention_phi(in.q(1, 2, 3, 1)));
    EXPECT_FLOAT_EQ(trace.get(Stage::phi_k, 0, 1)(4, 0), static_cast<float>(phi(in.k(0, 1, 4, 0))));
}

// A row whose keys are all padded: numerator 0, denominator 1e-6, so 0 — and gradients finite.
TEST(LinearAttention, FullyMaskedRowsAreZeroNotNaN) {
    Inputs in = inputs_of({"padded", 2, 2, 4, 4, false, false});
    in.mask.key_padding = padding_mask_from_lengths({4, 0}, 4);
    const Tensor4 w = test::random_normal<Tensor4>({2, 2, 4, 3}, 16);
    for (LinearBackend backend : {LinearBackend::recorded, LinearBackend::fast}) {
        LinearAttentionCache cache;
        const Tensor4 out = linear_attention(in.q, in.k, in.v, in.mask, nullptr, &cache, backend);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 4; ++i)
                for (std::size_t e = 0; e < 3; ++e) EXPECT_EQ(out(1, h, i, e), 0.0f);
        Tensor4 dq, dk, dv;
        linear_attention_backward(w, in.v, cache, dq, dk, dv);
        for (const Tensor4* g : {&dq, &dk, &dv})
            for (float x : *g) ASSERT_TRUE(std::isfinite(x));
        EXPECT_EQ(dk(1, 0, 2, 1), 0.0f);
        EXPECT_EQ(dv(1, 1, 0, 0), 0.0f);
    }
}

void expect_config_error(const std::function<void()>& call, const std::vector<std::string>& parts) {
    try {
        call();
        ADD_FAILURE() << "expected ConfigError";
    } catch (const ConfigError& e) {
        for (const std::string& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
}

TEST(LinearAttention, RefusesAnExplicitMaskAndAWindowSayingWhy) {
    Inputs in = inputs_of({"plain", 2, 2, 5, 5, false, false});
    AttentionMask explicit_mask;
    explicit_mask.explicit_mask = Mask2::from_shape({5, 5});
    explicit_mask.explicit_mask.fill(0);
    expect_config_error([&] { linear_attention(in.q, in.k, in.v, explicit_mask); },
                        {"linear_attention", "explicit (T, S) mask", "(5, 5)", "cannot leave out", "variant full"});
    AttentionMask window;
    window.causal = true;
    window.window = 3;
    expect_config_error([&] { linear_attention(in.q, in.k, in.v, window); },
                        {"linear_attention", "sliding window (window = 3)", "cannot drop"});

    Rng rng(1);
    MultiHeadAttention mha({8, 2}, rng);
    const Tensor3 x = test::random_normal<Tensor3>({1, 5, 8}, 2);
    AttentionOptions options;
    options.variant = AttentionVariant::linear;
    options.mask = window;
    expect_config_error([&] { mha.forward(x, nullptr, options); }, {"MultiHeadAttention::forward", "sliding window"});
    KvCache kv;
    expect_config_error([&] { mha.forward_incremental(x, kv, options); },
                        {"MultiHeadAttention::forward_incremental", "sliding window"});
    options.mask = explicit_mask;
    expect_config_error([&] { mha.forward(x, nullptr, options); }, {"MultiHeadAttention::forward", "explicit"});

    ModelConfig config;
    config.vocab_size = 5;
    config.variant = AttentionVariant::linear;
    config.attention_window = 4;
    expect_config_error([&] { config.validate(); }, {"variant linear cannot use attention_window 4"});
}

// ---- Through MultiHeadAttention ----

// Central differences through MultiHeadAttention run in test_attention_backward.cpp (the linear
// cases, fast path); here the recorded path (an observer wants the weights) equals the fast one
// in the output and in every gradient.
TEST(LinearMha, RecordedPathEqualsFastPathWithGradients) {
    for (bool cross : {false, true}) {
        MultiHeadAttentionConfig config{8, 4, 2};
        config.kv_dim = cross ? 6 : 0;
        Rng rng(7);
        MultiHeadAttention mha(config, rng);
        const Tensor3 x = test::random_normal<Tensor3>({2, 5, 8}, 1);
        const Tensor3 memory = test::random_normal<Tensor3>({2, 7, 6}, 2);
        const Tensor3 w = test::random_normal<Tensor3>({2, 5, 8}, 3);
        AttentionOptions options;
        options.variant = AttentionVariant::linear;
        options.mask.causal = !cross;
        options.mask.key_padding = padding_mask_from_lengths({cross ? 7u : 5u, 3}, cross ? 7 : 5);
        options.rope = true;
        Tensor3 outputs[2], dx[2], dmemory[2];
        MultiHeadAttentionGrad grads[2] = {MultiHeadAttentionGrad(mha), MultiHeadAttentionGrad(mha)};
        for (int recorded = 0; recorded < 2; ++recorded) {
            TraceRecorder trace({Stage::weights});
            MultiHeadAttentionCache cache;
            outputs[recorded] = mha.forward(x, cross ? &memory : nullptr, options, recorded ? &trace : nullptr, &cache);
            EXPECT_EQ(cache.linear.recorded, recorded == 1);
            mha.backward(w, cache, options, grads[recorded], dx[recorded], cross ? &dmemory[recorded] : nullptr);
        }
        const auto expect_near = [&](const float* a, const float* b, std::size_t n, const std::string& what) {
            double worst = 0.0;
            for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
            EXPECT_LT(worst, 1e-5) << what << (cross ? " (cross)" : " (causal self)");
        };
        expect_near(outputs[0].data(), outputs[1].data(), outputs[0].size(), "output");
        expect_near(dx[0].data(), dx[1].data(), dx[0].size(), "dx");
        if (cross) expect_near(dmemory[0].data(), dmemory[1].data(), dmemory[0].size(), "dmemory");
        const auto fast = grads[0].views(), recorded = grads[1].views();
        for (std::size_t i = 0; i < fast.size(); ++i) {
            expect_near(fast[i].data, recorded[i].data, fast[i].size(), "d" + fast[i].name);
        }
    }
}

TEST(LinearMha, TraceHasPhiAndWeightsInPlaceOfScores) {
    Rng rng(2);
    MultiHeadAttention mha({8, 2}, rng);
    const Tensor3 x = test::random_normal<Tensor3>({1, 5, 8}, 3);
    AttentionOptions options;
    options.variant = AttentionVariant::linear;
    options.mask.causal = true;
    options.rope = true;
    TraceRecorder trace;
    mha.forward(x, nullptr, options, &trace);
    const std::vector<Stage> expected = {Stage::x,     Stage::q,     Stage::k,       Stage::v,      Stage::q_rot,
                                         Stage::k_rot, Stage::phi_q, Stage::phi_k,   Stage::weights, Stage::context,
                                         Stage::concat, Stage::output};
    EXPECT_EQ(trace.stages(), expected);
    // φ is applied after RoPE.
    EXPECT_FLOAT_EQ(trace.get(Stage::phi_q, 0, 1)(2, 3), linear_attention_phi(trace.get(Stage::q_rot, 0, 1)(2, 3)));
    EXPECT_EQ(trace.get(Stage::weights, 0, 0)(1, 2), 0.0f);  // causal
}

// Generation: the recurrent state in chunks equals the full causal forward, and its size is
// that of the first step however many tokens follow (no key/value rows are kept).
TEST(LinearMha, IncrementalStateEqualsTheFullForwardAndDoesNotGrow) {
    MultiHeadAttentionConfig config{8, 4, 2};
    Rng rng(5);
    MultiHeadAttention mha(config, rng);
    const Tensor3 x = test::random_normal<Tensor3>({2, 9, 8}, 6);
    AttentionOptions options;
    options.variant = AttentionVariant::linear;
    options.rope = true;
    AttentionOptions full = options;
    full.mask.causal = true;
    const Tensor3 expected = mha.forward(x, nullptr, full);
    KvCache kv;
    std::size_t state_size = 0;
    std::size_t done = 0;
    for (std::size_t chunk : {3, 1, 1, 2, 1, 1}) {
        Tensor3 part = Tensor3::from_shape({2, chunk, 8});
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t i = 0; i < chunk; ++i)
                for (std::size_t e = 0; e < 8; ++e) part(b, i, e) = x(b, done + i, e);
        const Tensor3 got = mha.forward_incremental(part, kv, options);
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t i = 0; i < chunk; ++i)
                for (std::size_t e = 0; e < 8; ++e) EXPECT_NEAR(got(b, i, e), expected(b, done + i, e), 1e-5);
        done += chunk;
        EXPECT_EQ(kv.length(), done);
        EXPECT_EQ(kv.k.size(), 0u);
        EXPECT_EQ(kv.v.size(), 0u);
        const std::size_t size = kv.linear.kv.size() + kv.linear.k_sum.size();
        if (state_size == 0) state_size = size;
        EXPECT_EQ(size, state_size);
    }
    EXPECT_EQ(state_size, 2u * 2u * 2u * 2u + 2u * 2u * 2u);  // (B, Hkv, D, D) + (B, Hkv, D), D = 8 / 4
}

// ---- Models ----

ModelConfig linear_decoder(std::size_t vocab, std::size_t max_len) {
    ModelConfig c;
    c.kind = ModelKind::decoder;
    c.vocab_size = vocab;
    c.max_len = max_len;
    c.d_model = 32;
    c.num_heads = 4;
    c.num_layers = 2;
    c.ff_dim = 64;
    c.positional = PositionalKind::rope;
    c.variant = AttentionVariant::linear;
    return c;
}

TEST(LinearModels, DecoderGenerationWithTheStateEqualsRecomputation) {
    Rng rng(3);
    DecoderLM model(linear_decoder(7, 16), rng);
    const GenerateOptions options{0.0f, 7};
    const GenerateResult cached = model.generate({1, 4, 2}, 10, options);
    const GenerateResult uncached = model.generate_uncached({1, 4, 2}, 10, options);
    EXPECT_EQ(cached.tokens, uncached.tokens);
    for (std::size_t i = 0; i < cached.logits.size(); ++i) {
        EXPECT_NEAR(cached.logits.data()[i], uncached.logits.data()[i], 1e-5);
    }
}

TEST(LinearModels, DecoderAndClassifierTrainWithFallingLoss) {
    for (const char* name : {"copy", "brackets"}) {
        const auto task = make_task(name, {});
        ModelConfig c = linear_decoder(task->vocab_size(), task->seq_len());
        if (task->kind() == TaskKind::classification) {
            c.kind = ModelKind::encoder;
            c.num_classes = task->num_classes();
            c.positional = PositionalKind::sinusoidal;
        }
        Model model(c, 2);
        TrainerOptions options;
        options.lr = 3e-3f;
        options.warmup_steps = 5;
        options.total_steps = 60;
        Trainer trainer(model, *task, options);
        const float before = trainer.evaluate(4).loss;
        for (int i = 0; i < 60; ++i) trainer.step();
        const float after = trainer.evaluate(4).loss;
        EXPECT_LT(after, before) << name;
        EXPECT_TRUE(std::isfinite(after)) << name;
    }
}

TEST(LinearModels, CheckpointRecordsTheVariant) {
    Model model(linear_decoder(7, 16), 4);
    const std::vector<std::uint8_t> bytes = model.save();
    const Model again = Model::load(bytes);
    EXPECT_EQ(again.config().variant, AttentionVariant::linear);
    EXPECT_EQ(again.save(), bytes);
}

}  // namespace
}  // namespace attnlab
