// AttentionMask::score_bias: an additive (G, H, T, S) bias on the scaled scores, shared by the
// batch rows b with the same b % G, with its gradient summed over them — on the recorded path
// and on every flash path (one key tile, key tiles).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/error.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

// The plain definition: softmax(scale·q·kᵀ + bias[b % G][h]) · v, one (b, h) at a time, in double.
Tensor4 reference(const Tensor4& q, const Tensor4& k, const Tensor4& v, const Tensor4& bias, float scale) {
    const std::size_t batch = q.shape(0), heads = q.shape(1), t = q.shape(2), d = q.shape(3), s = k.shape(2);
    Tensor4 out = Tensor4::from_shape({batch, heads, t, v.shape(3)});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t i = 0; i < t; ++i) {
                std::vector<double> z(s);
                double mx = -std::numeric_limits<double>::infinity();
                for (std::size_t j = 0; j < s; ++j) {
                    double dotp = 0;
                    for (std::size_t e = 0; e < d; ++e) dotp += double(q(b, h, i, e)) * k(b, h, j, e);
                    z[j] = scale * dotp + bias(b % bias.shape(0), h, i, j);
                    mx = std::max(mx, z[j]);
                }
                double sum = 0;
                for (auto& x : z) sum += (x = std::exp(x - mx));
                for (std::size_t e = 0; e < v.shape(3); ++e) {
                    double acc = 0;
                    for (std::size_t j = 0; j < s; ++j) acc += z[j] / sum * v(b, h, j, e);
                    out(b, h, i, e) = static_cast<float>(acc);
                }
            }
    return out;
}

float max_abs_diff(const Tensor4& a, const Tensor4& b) {
    float m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a.data()[i] - b.data()[i]));
    return m;
}

// B = 6 rows share G = 3 biases; one pair per row hidden by -inf. S = 9 fits one key tile,
// S = 200 takes the key-tiles path.
class ScoreBias : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ScoreBias, MathAndFlashPathsEqualThePlainDefinition) {
    const std::size_t s = GetParam(), t = s, batch = 6, heads = 2, d = 8;
    const Tensor4 q = random_normal<Tensor4>({batch, heads, t, d}, 1);
    const Tensor4 k = random_normal<Tensor4>({batch, heads, s, d}, 2);
    const Tensor4 v = random_normal<Tensor4>({batch, heads, s, d}, 3);
    Tensor4 bias = random_normal<Tensor4>({3, heads, t, s}, 4);
    for (std::size_t g = 0; g < 3; ++g) bias(g, 1, 0, s - 1 - g) = -std::numeric_limits<float>::infinity();
    AttentionMask mask;
    mask.score_bias = &bias;
    const float scale = 1.0f / std::sqrt(float(d));
    const Tensor4 want = reference(q, k, v, bias, scale);
    const Tensor4 math = scaled_dot_product_attention(q, k, v, mask, {}, nullptr, nullptr, SdpBackend::math);
    const Tensor4 flash = flash_attention_forward(q, k, v, mask);
    EXPECT_LT(max_abs_diff(math, want), 2e-5f);
    EXPECT_LT(max_abs_diff(flash, want), 2e-5f);
}

TEST_P(ScoreBias, GradientOfTheBiasSumsOverTheRowsSharingIt) {
    const std::size_t s = GetParam() > 64 ? 130 : GetParam(), t = 5, batch = 4, heads = 2, d = 4;
    const Tensor4 q = random_normal<Tensor4>({batch, heads, t, d}, 5);
    const Tensor4 k = random_normal<Tensor4>({batch, heads, s, d}, 6);
    const Tensor4 v = random_normal<Tensor4>({batch, heads, s, d}, 7);
    const Tensor4 w = random_normal<Tensor4>({batch, heads, t, d}, 8);  // dL/dcontext
    Tensor4 bias = random_normal<Tensor4>({2, heads, t, s}, 9, 0.5f);
    for (SdpBackend backend : {SdpBackend::math, SdpBackend::flash}) {
        Tensor4 dbias = Tensor4::from_shape(bias.shape());
        dbias.fill(0.0f);
        AttentionMask mask;
        mask.score_bias = &bias;
        mask.score_bias_grad = &dbias;
        AttentionCache cache = backend == SdpBackend::math ? AttentionCache() : AttentionCache::without_weights();
        scaled_dot_product_attention(q, k, v, mask, {}, nullptr, &cache, backend);
        Tensor4 dq, dk, dv;
        scaled_dot_product_attention_backward(w, q, k, v, cache, {}, dq, dk, dv);
        AttentionMask plain;
        plain.score_bias = &bias;
        auto loss = [&] { return testutil::dot(scaled_dot_product_attention(q, k, v, plain), w); };
        EXPECT_TRUE(testutil::check_gradient(backend == SdpBackend::math ? "math dbias" : "flash dbias", loss,
                                             bias.data(), dbias.data(), bias.size()));
    }
}

INSTANTIATE_TEST_SUITE_P(KeyTiles, ScoreBias, ::testing::Values(std::size_t{9}, std::size_t{200}));

TEST(ScoreBiasShapes, ABiasThatDoesNotFitIsAShapeErrorNamingIt) {
    const Tensor4 q = random_normal<Tensor4>({4, 2, 3, 4}, 1);
    Tensor4 bias = Tensor4::from_shape({3, 2, 3, 3});  // 3 does not divide B = 4
    bias.fill(0.0f);
    AttentionMask mask;
    mask.score_bias = &bias;
    try {
        (void)flash_attention_forward(q, q, q, mask);
        FAIL() << "expected a ShapeError";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("score_bias"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace attnlab
