// Precision emulation in attention (core/numeric_format.hpp, AttentionOptions::precision): the
// recorded path's stages hold values of the format, float32 stays bit for bit what it was, the
// naive softmax overflows fp16 where the article says, and the low formats' gradients stay
// within the format's epsilon of float32's.
#include <gtest/gtest.h>

#include <cmath>
#include <iomanip>
#include <limits>
#include <string>

#include <xtensor/xview.hpp>

#include "attnlab/attention/multi_head_attention.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

PrecisionOptions precision_of(Precision format, SoftmaxPrecision softmax = SoftmaxPrecision::fp32,
                              bool stable = true) {
    PrecisionOptions p;
    p.format = format;
    p.softmax = softmax;
    p.stable_softmax = stable;
    return p;
}

MultiHeadAttention make_mha(std::size_t c, std::size_t h, std::size_t hkv = 0, std::size_t kv_dim = 0) {
    MultiHeadAttentionConfig config;
    config.d_model = c;
    config.num_heads = h;
    config.num_kv_heads = hkv;
    config.kv_dim = kv_dim;
    Rng rng(11);
    MultiHeadAttention mha(config, rng);
    for (auto& p : mha.parameters()) {  // non-zero biases
        Rng r(p.size() + 3);
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.1f * r.normal();
    }
    return mha;
}

bool same_bits(const Tensor3& a, const Tensor3& b) {
    return a.shape() == b.shape() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
               return detail::float_bits(x) == detail::float_bits(y);
           });
}

// max |a - b| / max |b|
double relative_error(const float* a, const float* b, std::size_t n) {
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < n; ++i) {
        diff = std::max(diff, double(std::fabs(a[i] - b[i])));
        scale = std::max(scale, double(std::fabs(b[i])));
    }
    return scale > 0 ? diff / scale : diff;
}

struct PrecisionCase {
    const char* name;
    std::size_t heads, kv_heads;
    bool causal, padding, rope, cross;
    std::size_t window = 0;       // sliding window W (0 = none)
    bool explicit_mask = false;   // a (T, S) mask hiding key 1 from every query and all of query 0's keys
};
std::ostream& operator<<(std::ostream& out, const PrecisionCase& c) { return out << c.name; }

class PrecisionStages : public ::testing::TestWithParam<PrecisionCase> {};

// Every stage the layer stores is a value of the format (x is the caller's, not rounded).
TEST_P(PrecisionStages, RecordedStagesAreExactlyRepresentable) {
    const PrecisionCase& tc = GetParam();
    const std::size_t batch = 2, t = 5, c = 8, s = tc.cross ? 6 : t, kv_dim = tc.cross ? 4 : c;
    const MultiHeadAttention mha = make_mha(c, tc.heads, tc.kv_heads, tc.cross ? kv_dim : 0);
    const Tensor3 x = random_normal<Tensor3>({batch, t, c}, 1);
    const Tensor3 memory = random_normal<Tensor3>({batch, s, kv_dim}, 2);
    for (Precision format : {Precision::fp16, Precision::bf16}) {
        for (SoftmaxPrecision softmax : {SoftmaxPrecision::fp32, SoftmaxPrecision::same}) {
            for (bool stable : {true, false}) {
                SCOPED_TRACE(testing::Message() << precision_name(format) << " softmax "
                                                << softmax_precision_name(softmax) << (stable ? " stable" : " naive"));
                AttentionOptions options;
                options.mask.causal = tc.causal;
                if (tc.padding) options.mask.key_padding = padding_mask_from_lengths({s, s - 2}, s);
                options.rope = tc.rope;
                options.mask.window = tc.window;
                if (tc.explicit_mask) {
                    options.mask.explicit_mask = Mask2::from_shape({t, s});
                    for (std::size_t i = 0; i < t; ++i)
                        for (std::size_t j = 0; j < s; ++j) options.mask.explicit_mask(i, j) = (j == 1 || i == 0) ? 1 : 0;
                }
                options.precision = precision_of(format, softmax, stable);
                TraceRecorder trace;
                mha.forward(x, tc.cross ? &memory : nullptr, options, &trace);
                std::size_t checked = 0;
                for (Stage stage : trace.stages()) {
                    if (stage == Stage::x) continue;
                    for (std::size_t b = 0; b < batch; ++b) {
                        const std::ptrdiff_t heads = stage_is_per_head(stage) ? std::ptrdiff_t(trace.num_heads(stage)) : 0;
                        for (std::ptrdiff_t h = stage_is_per_head(stage) ? 0 : -1; h < std::max<std::ptrdiff_t>(heads, 0);
                             ++h) {
                            for (float v : trace.get(stage, b, h)) {
                                ASSERT_EQ(detail::float_bits(round_to(format, v)), detail::float_bits(v))
                                    << "stage " << stage_name(stage) << " batch " << b << " head " << h << " value "
                                    << v;
                                ++checked;
                            }
                            if (h == -1) break;
                        }
                    }
                }
                EXPECT_GT(checked, 0u);
                // No stage holds a NaN (a fully masked row too: its weights are zeros).
                for (const StageNumerics& n : trace.numerics()) {
                    EXPECT_EQ(n.nan, 0u) << stage_name(n.stage);
                    EXPECT_EQ(n.pos_inf, 0u) << stage_name(n.stage);
                }
                if (tc.explicit_mask) {
                    for (float w : xt::view(trace.get(Stage::weights, 0, 0), 0, xt::all())) EXPECT_EQ(w, 0.0f);
                    for (float w : xt::view(trace.get(Stage::weights, 1, 1), xt::all(), 1)) EXPECT_EQ(w, 0.0f);
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, PrecisionStages,
    ::testing::Values(PrecisionCase{"mha", 2, 0, false, false, false, false},
                      PrecisionCase{"causal_padding", 2, 0, true, true, false, false},
                      PrecisionCase{"gqa_rope", 4, 2, true, false, true, false},
                      PrecisionCase{"mqa", 4, 1, false, true, false, false},
                      PrecisionCase{"cross", 2, 0, false, true, false, true},
                      PrecisionCase{"window_causal", 2, 0, true, false, false, false, 1},
                      PrecisionCase{"explicit_fully_masked_row", 2, 0, false, false, false, false, 0, true}),
    [](const ::testing::TestParamInfo<PrecisionCase>& info) { return std::string(info.param.name); });

// fp32 with the stable softmax is the unemulated layer: the same output, bit for bit, whatever
// softmax_precision says, on the fast path and on the recorded one.
TEST(Precision, Fp32IsTheUnemulatedOutputBitForBit) {
    const MultiHeadAttention mha = make_mha(8, 2);
    const Tensor3 x = random_normal<Tensor3>({2, 6, 8}, 5);
    AttentionOptions plain;
    plain.mask.causal = true;
    AttentionOptions fp32 = plain;
    fp32.precision = precision_of(Precision::fp32, SoftmaxPrecision::same, true);
    EXPECT_TRUE(same_bits(mha.forward(x, nullptr, fp32), mha.forward(x, nullptr, plain)));
    TraceRecorder a, b;
    EXPECT_TRUE(same_bits(mha.forward(x, nullptr, fp32, &a), mha.forward(x, nullptr, plain, &b)));
    for (Stage stage : a.stages()) {
        for (std::ptrdiff_t h = stage_is_per_head(stage) ? 0 : -1; h < (stage_is_per_head(stage) ? 2 : 0); ++h) {
            const Tensor2& ta = a.get(stage, 0, h);
            const Tensor2& tb = b.get(stage, 0, h);
            ASSERT_TRUE(std::equal(ta.begin(), ta.end(), tb.begin())) << stage_name(stage);
        }
    }
    // fp32's naive softmax is the stable one up to float rounding while scores stay small.
    AttentionOptions naive = plain;
    naive.precision.stable_softmax = false;
    const Tensor3 y = mha.forward(x, nullptr, naive), y0 = mha.forward(x, nullptr, plain);
    EXPECT_LT(relative_error(y.data(), y0.data(), y.size()), 1e-6);
}

// Low precision runs on the recorded path; with an observer or without one (a training cache
// or none) the numbers are the same, bit for bit, forward and backward.
TEST(Precision, LowPrecisionGivesTheSameOutputWithOrWithoutAnObserver) {
    const MultiHeadAttention mha = make_mha(8, 2, 1);
    const Tensor3 x = random_normal<Tensor3>({2, 7, 8}, 6);
    const Tensor3 w = random_normal<Tensor3>({2, 7, 8}, 7);
    for (Precision format : {Precision::fp16, Precision::bf16}) {
        AttentionOptions options;
        options.mask.causal = true;
        options.precision.format = format;
        TraceRecorder trace;
        const Tensor3 seen = mha.forward(x, nullptr, options, &trace);
        MultiHeadAttentionCache cache;
        Tensor3 trained;
        mha.forward(x, nullptr, options, nullptr, &cache, trained);
        EXPECT_TRUE(same_bits(seen, trained)) << precision_name(format);
        EXPECT_TRUE(same_bits(seen, mha.forward(x, nullptr, options))) << precision_name(format);
        EXPECT_FALSE(cache.attention.flash) << "low precision must take the recorded path";
    }
}

TEST(Precision, TheFlashBackendRefusesLowPrecisionSayingWhy) {
    const Tensor4 q = random_normal<Tensor4>({1, 1, 4, 4}, 1), k = random_normal<Tensor4>({1, 1, 4, 4}, 2);
    try {
        scaled_dot_product_attention(q, k, k, {}, {}, nullptr, nullptr, SdpBackend::flash, Normalizer::softmax,
                                     precision_of(Precision::fp16));
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("precision 'fp16' is emulated on the recorded path only"),
                  std::string::npos)
            << e.what();
    }
    std::vector<std::string> reasons;
    EXPECT_FALSE(can_use_flash(nullptr, nullptr, &reasons, precision_of(Precision::fp32, SoftmaxPrecision::fp32, false)));
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_NE(reasons[0].find("naive softmax"), std::string::npos) << reasons[0];
}

// One query, two keys, no scaling: the scores are exactly (s, 0) for q = (s, 0, 0, 0).
struct TwoKeys {
    Tensor4 q = Tensor4::from_shape({1, 1, 1, 4}), k = Tensor4::from_shape({1, 1, 2, 4}),
            v = Tensor4::from_shape({1, 1, 2, 4});
    explicit TwoKeys(float score, float value = 1.0f) {
        q.fill(0.0f);
        k.fill(0.0f);
        v.fill(value);
        q(0, 0, 0, 0) = score;
        k(0, 0, 0, 0) = 1.0f;
    }
    StageNumerics weights(const PrecisionOptions& precision, Stage stage = Stage::weights) const {
        ScaleOptions off;
        off.enabled = false;
        TraceRecorder trace;
        scaled_dot_product_attention(q, k, v, {}, off, &trace, nullptr, SdpBackend::automatic, Normalizer::softmax, precision);
        for (const StageNumerics& n : trace.numerics()) {
            if (n.stage == stage) return n;
        }
        ADD_FAILURE() << "stage not recorded";
        return {};
    }
};

// exp(s) exceeds fp16's 65504 (rounds to inf) for s > ln 65520 = 11.09: the naive softmax
// computed in fp16 gives inf / inf = NaN there, and nowhere below; in fp32, or stable, it holds.
TEST(Precision, TheNaiveFp16SoftmaxOverflowsAboveLn65520) {
    const PrecisionOptions naive_same = precision_of(Precision::fp16, SoftmaxPrecision::same, false);
    const StageNumerics below = TwoKeys(11.0f).weights(naive_same);
    EXPECT_EQ(below.nan, 0u);
    EXPECT_EQ(below.pos_inf, 0u);
    const StageNumerics above = TwoKeys(11.25f).weights(naive_same);
    EXPECT_EQ(above.nan, 1u) << "inf / inf for the key with score 11.25";
    const StageNumerics fp32_softmax = TwoKeys(11.25f).weights(precision_of(Precision::fp16, SoftmaxPrecision::fp32, false));
    EXPECT_EQ(fp32_softmax.nan, 0u);
    EXPECT_EQ(fp32_softmax.max_abs, 1.0f);
    const StageNumerics stable_same = TwoKeys(11.25f).weights(precision_of(Precision::fp16, SoftmaxPrecision::same, true));
    EXPECT_EQ(stable_same.nan, 0u);
    // fp32's own naive softmax overflows later, past ln(FLT_MAX) = 88.72
    EXPECT_EQ(TwoKeys(80.0f).weights(precision_of(Precision::fp32, SoftmaxPrecision::fp32, false)).nan, 0u);
    EXPECT_EQ(TwoKeys(90.0f).weights(precision_of(Precision::fp32, SoftmaxPrecision::fp32, false)).nan, 1u);
    // bf16 has float32's range: the naive softmax in bf16 survives 11.25 too
    EXPECT_EQ(TwoKeys(11.25f).weights(precision_of(Precision::bf16, SoftmaxPrecision::same, false)).nan, 0u);
}

TEST(Precision, NumericsCountInfinitiesAndFlushesPerStage) {
    // a score of 70000 overflows fp16 when stored
    const StageNumerics scores = TwoKeys(70000.0f).weights(precision_of(Precision::fp16), Stage::scores);
    EXPECT_EQ(scores.pos_inf, 1u);
    EXPECT_EQ(scores.count, 2u);
    EXPECT_EQ(scores.max_abs, 0.0f);  // the other score, 0
    // the scaled stage then holds +inf too, and the stable softmax turns inf - inf into NaN
    const StageNumerics weights = TwoKeys(70000.0f).weights(precision_of(Precision::fp16));
    EXPECT_EQ(weights.nan, 2u);
    // values of 1e-8 flush below fp16's smallest subnormal (2^-24 ≈ 6e-8; half of it 3e-8)
    const StageNumerics context = TwoKeys(0.0f, 1e-8f).weights(precision_of(Precision::fp16), Stage::context);
    EXPECT_EQ(context.flushed, 4u);
    EXPECT_EQ(context.max_abs, 0.0f);
    // bf16 reaches 2^-133: nothing flushes
    EXPECT_EQ(TwoKeys(0.0f, 1e-8f).weights(precision_of(Precision::bf16), Stage::context).flushed, 0u);
    // the masked stage reports the mask's -inf
    Tensor4 q = random_normal<Tensor4>({1, 1, 3, 4}, 1), k = random_normal<Tensor4>({1, 1, 3, 4}, 2);
    AttentionMask causal;
    causal.causal = true;
    TraceRecorder trace;
    scaled_dot_product_attention(q, k, k, causal, {}, &trace);
    for (const StageNumerics& n : trace.numerics()) {
        EXPECT_EQ(n.neg_inf, n.stage == Stage::masked ? 3u : 0u) << stage_name(n.stage);
    }
}

// Scores are the products a_i·b_j of q = (a_i, 0, 0, 0) and k = (b_j, 0, 0, 0): 1e-8 and 1e-9 lie
// below half fp16's smallest subnormal (2^-25 ≈ 3e-8) and flush; 1e-6 is a subnormal and stays.
TEST(Precision, TheTraceNamesEachFlushedCell) {
    const float a[3] = {1e-4f, 1.0f, 1e-5f}, b[2] = {1e-4f, 1.0f};
    Tensor4 q = Tensor4::from_shape({1, 1, 3, 4}), k = Tensor4::from_shape({1, 1, 2, 4}), v = Tensor4::from_shape({1, 1, 2, 4});
    q.fill(0.0f);
    k.fill(0.0f);
    v.fill(1.0f);
    for (std::size_t i = 0; i < 3; ++i) q(0, 0, i, 0) = a[i];
    for (std::size_t j = 0; j < 2; ++j) k(0, 0, j, 0) = b[j];
    ScaleOptions off;
    off.enabled = false;
    TraceRecorder trace;
    scaled_dot_product_attention(q, k, v, {}, off, &trace, nullptr, SdpBackend::automatic, Normalizer::softmax,
                                 precision_of(Precision::fp16));
    // products (1e-8, 1e-4; 1e-4, 1; 1e-9, 1e-5): flat cells 0 and 4
    EXPECT_EQ(trace.flushed_cells(Stage::scores, 0, 0), (FlushedCells{0, 4}));
    EXPECT_EQ(trace.get(Stage::scores, 0, 0)(0, 0), 0.0f);
    EXPECT_TRUE(trace.flushed_cells(Stage::scaled, 0, 0).empty()) << "already zero: nothing new flushes";
    for (const StageNumerics& n : trace.numerics()) {
        std::size_t cells = 0;
        for (std::size_t h = 0; h < trace.num_heads(n.stage); ++h) cells += trace.flushed_cells(n.stage, 0, h).size();
        EXPECT_EQ(n.flushed, cells) << stage_name(n.stage);
    }
    TraceRecorder bf16;
    scaled_dot_product_attention(q, k, v, {}, off, &bf16, nullptr, SdpBackend::automatic, Normalizer::softmax,
                                 precision_of(Precision::bf16));
    EXPECT_TRUE(bf16.flushed_cells(Stage::scores, 0, 0).empty()) << "bf16 reaches 2^-133";
    EXPECT_THROW(trace.flushed_cells(Stage::output, 0, -1), ValueError);
}

// Scores (20, 0): the second weight is e^-20 ≈ 2e-9, flushed whether the softmax runs in fp32 and
// rounds the weight (a quotient lost) or in fp16 step by step (its exp lost).
TEST(Precision, TheSoftmaxNamesTheWeightItFlushed) {
    for (SoftmaxPrecision softmax : {SoftmaxPrecision::fp32, SoftmaxPrecision::same}) {
        for (bool stable : {true, false}) {
            float row[4] = {20.0f, 0.0f, 0.0f, 20.0f};  // (2, 2): the small weight at cells 1 and 2
            FlushedCells cells;
            const std::size_t n = softmax_rows_emulated(row, 2, 2, 2, precision_of(Precision::fp16, softmax, stable), &cells);
            if (!stable && softmax == SoftmaxPrecision::same) {
                EXPECT_TRUE(std::isnan(row[0])) << "exp(20) overflows fp16: the naive row is inf / inf";
                continue;
            }
            EXPECT_EQ(cells, (FlushedCells{1, 2})) << softmax_precision_name(softmax) << " stable " << stable;
            EXPECT_EQ(n, 2u);
            EXPECT_EQ(row[1], 0.0f);
        }
    }
}

// A layer without biases on inputs of 1e-5: fp16 flushes the scores (of order 1e-10); every noted
// cell holds ±0, in every stage the layer rounds, and the counts are the cells'.
TEST(Precision, MultiHeadAttentionNotesFlushedCellsInEveryRoundedStage) {
    MultiHeadAttentionConfig config;
    config.d_model = 8;
    config.num_heads = 2;
    config.bias = false;  // q, k, v, output all of order 1e-5 (and the scores 1e-10)
    Rng rng(11);
    MultiHeadAttention mha(config, rng);
    Tensor3 x = random_normal<Tensor3>({2, 3, 8}, 5);
    x *= 1e-5f;
    AttentionOptions options;
    options.precision = precision_of(Precision::fp16);
    TraceRecorder trace;
    mha.forward(x, nullptr, options, &trace);
    std::size_t total = 0;
    for (const StageNumerics& n : trace.numerics()) {
        std::size_t cells = 0;
        const bool per_head = stage_is_per_head(n.stage);
        for (std::size_t b = 0; b < trace.num_batches(n.stage); ++b)
            for (std::size_t h = 0; h < trace.num_heads(n.stage); ++h) {
                const std::ptrdiff_t head = per_head ? static_cast<std::ptrdiff_t>(h) : -1;
                const Tensor2& m = trace.get(n.stage, b, head);
                for (const std::uint32_t c : trace.flushed_cells(n.stage, b, head)) {
                    ASSERT_LT(c, m.size());
                    EXPECT_EQ(m.data()[c], 0.0f) << stage_name(n.stage) << " cell " << c;
                }
                cells += trace.flushed_cells(n.stage, b, head).size();
            }
        EXPECT_EQ(n.flushed, cells) << stage_name(n.stage);
        total += cells;
    }
    EXPECT_GT(total, 0u) << "products of 1e-5 inputs flush in fp16";
}

TEST(Precision, AFullyMaskedRowGetsZeroWeightsInEveryMode) {
    const float inf = std::numeric_limits<float>::infinity();
    for (Precision format : {Precision::fp32, Precision::fp16, Precision::bf16}) {
        for (SoftmaxPrecision softmax : {SoftmaxPrecision::fp32, SoftmaxPrecision::same}) {
            for (bool stable : {true, false}) {
                float row[6] = {-inf, -inf, -inf, 1.0f, -inf, 2.0f};  // (2, 3): row 0 fully masked
                softmax_rows_emulated(row, 2, 3, 3, precision_of(format, softmax, stable));
                EXPECT_EQ(row[0], 0.0f);
                EXPECT_EQ(row[1], 0.0f);
                EXPECT_EQ(row[2], 0.0f);
                EXPECT_EQ(row[4], 0.0f);
                EXPECT_NEAR(row[3] + row[5], 1.0f, 1e-2f);  // each weight rounded: bf16's epsilon is 2^-8
            }
        }
    }
}

// fp32 with the naive softmax is the emulated path in float32: central differences hold.
TEST(Precision, NaiveFp32SoftmaxBackwardMatchesFiniteDifferences) {
    const std::size_t batch = 2, t = 4, c = 8;
    MultiHeadAttention mha = make_mha(c, 2);
    Tensor3 x = random_normal<Tensor3>({batch, t, c}, 1);
    const Tensor3 w = random_normal<Tensor3>({batch, t, c}, 3);
    AttentionOptions options;
    options.mask.causal = true;
    options.mask.key_padding = padding_mask_from_lengths({t, t - 1}, t);
    options.precision = precision_of(Precision::fp32, SoftmaxPrecision::fp32, false);
    MultiHeadAttentionCache cache;
    mha.forward(x, nullptr, options, nullptr, &cache);
    MultiHeadAttentionGrad grads(mha);
    Tensor3 dx;
    mha.backward(w, cache, options, grads, dx);
    auto loss = [&] { return testutil::dot(mha.forward(x, nullptr, options), w); };
    const testutil::GradCheckOptions tol{1e-2, 2e-3, 1e-2};
    EXPECT_TRUE(testutil::check_gradient("naive softmax dx", loss, x.data(), dx.data(), x.size(), tol));
    auto params = mha.parameters();
    auto gviews = grads.views();
    for (std::size_t i = 0; i < params.size(); ++i) {
        EXPECT_TRUE(testutil::check_gradient(params[i].name, loss, params[i].data, gviews[i].data, params[i].size(), tol));
    }
}

// Rounding is not differentiable, so the low formats' backward is checked against float32's:
// within a few dozen of the format's epsilon (fp16 2^-11, bf16 2^-8) relative to the largest
// gradient, the error of rounding each stored activation and gradient once or twice.
TEST(Precision, LowPrecisionGradientsStayWithinTheFormatsEpsilonOfFp32) {
    const std::size_t batch = 2, t = 6, c = 16;
    const MultiHeadAttention mha = make_mha(c, 4, 2);
    const Tensor3 x = random_normal<Tensor3>({batch, t, c}, 8);
    const Tensor3 w = random_normal<Tensor3>({batch, t, c}, 9);
    const Tensor3 residual = random_normal<Tensor3>({batch, t, c}, 10);
    const auto run = [&](Precision format, MultiHeadAttentionGrad& grads, Tensor3& dx) {
        AttentionOptions options;
        options.mask.causal = true;
        options.rope = true;
        options.precision.format = format;
        MultiHeadAttentionCache cache;
        Tensor3 out;
        mha.forward(x, nullptr, options, nullptr, &cache, out);
        grads = MultiHeadAttentionGrad(mha);
        mha.backward(w, cache, options, grads, dx, nullptr, &residual);
    };
    MultiHeadAttentionGrad g32, glow;
    Tensor3 dx32, dxlow;
    run(Precision::fp32, g32, dx32);
    for (auto [format, eps] : {std::pair{Precision::fp16, std::ldexp(1.0, -11)}, std::pair{Precision::bf16, std::ldexp(1.0, -8)}}) {
        run(format, glow, dxlow);
        const double bound = 32 * eps;
        EXPECT_LT(relative_error(dxlow.data(), dx32.data(), dx32.size()), bound) << precision_name(format) << " dx";
        EXPECT_GT(relative_error(dxlow.data(), dx32.data(), dx32.size()), 0.0) << "rounding must change something";
        auto a = glow.views(), b = g32.views();
        for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_LT(relative_error(a[i].data, b[i].data, a[i].size()), bound) << precision_name(format) << " " << a[i].name;
        }
    }
}

// tests/wasm/harness.mjs randomTensor: xorshift32 values in [-1, 1), so that a JavaScript test
// can build the same input.
Tensor2 js_random_tensor(std::size_t rows, std::size_t cols, std::uint32_t seed) {
    Tensor2 t = Tensor2::from_shape({rows, cols});
    std::uint32_t s = seed ? seed : 1;
    for (float& v : t) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        v = static_cast<float>((static_cast<double>(s) / 4294967296.0) * 2 - 1);
    }
    return t;
}

// The values tests/wasm/precision.test.mjs expects from the WebAssembly build for the same
// layer (seed 3), input and options: native and WASM compute the same fp16 numbers.
TEST(Precision, ASeededFp16CaseGivesThePinnedValues) {
    MultiHeadAttentionConfig config;
    config.d_model = 8;
    config.num_heads = 2;
    Rng rng(3);
    const MultiHeadAttention mha(config, rng);
    AttentionOptions options;
    options.mask.causal = true;
    options.precision.format = Precision::fp16;
    const Tensor2 y = mha.forward(js_random_tensor(4, 8, 7), nullptr, options);
    const float pinned[4] = {0.298095703125f, 0.2626953125f, 0.04278564453125f, 0.00775146484375f};
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(y.data()[i], pinned[i]) << "index " << i << ": " << std::setprecision(17) << y.data()[i];
    }
}

}  // namespace
}  // namespace attnlab
