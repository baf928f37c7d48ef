// The flash forward tile kernels (kernels/flash_tiles.hpp), for every ISA compiled in and
// supported here: packed products against plain double-precision loops for ragged shapes, and
// the base-2 online softmax against exp over several tiles, including masked keys.
#include "attnlab/kernels/flash_tiles.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/kernels/isa.hpp"

namespace attnlab {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_vector(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

class EachIsa : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        previous_ = kernels::active_isa();
        kernels::set_isa(GetParam());
    }
    void TearDown() override { kernels::set_isa(previous_); }

private:
    std::string previous_;
};

TEST_P(EachIsa, ScoresEqualScaledQTimesKTransposedForRaggedShapes) {
    const std::size_t strip = kernels::flash_strip();
    for (std::size_t rows : {1u, 5u, 6u, 7u, 13u}) {
        for (std::size_t d : {1u, 3u, 16u, 33u}) {
            for (std::size_t keys : {std::size_t{1}, strip - 1, strip + 3, 3 * strip}) {
                const auto q = random_vector(rows * d, unsigned(rows * 100 + d));
                const auto k = random_vector(keys * d, unsigned(keys * 7 + d));
                std::vector<float> kp(kernels::flash_packed_keys_size(keys, d));
                kernels::flash_pack_keys(k.data(), keys, d, kp.data());
                std::vector<float> qp(kernels::flash_packed_queries_size(rows, d));
                kernels::flash_pack_queries(q.data(), rows, d, 0.5f, qp.data());
                const std::size_t strips = (keys + strip - 1) / strip, ld = strips * strip + 5;
                std::vector<float> s(rows * ld, 99.0f);
                kernels::flash_scores(qp.data(), rows, d, kp.data(), strips, s.data(), ld);
                for (std::size_t i = 0; i < rows; ++i) {
                    for (std::size_t j = 0; j < strips * strip; ++j) {
                        double want = 0.0;
                        for (std::size_t p = 0; j < keys && p < d; ++p) want += double(q[i * d + p]) * k[j * d + p];
                        ASSERT_NEAR(s[i * ld + j], 0.5 * want, 1e-5) << rows << "x" << d << " keys " << keys;
                    }
                    for (std::size_t j = strips * strip; j < ld; ++j) ASSERT_EQ(s[i * ld + j], 99.0f);  // untouched
                }
            }
        }
    }
}

TEST_P(EachIsa, AccumulatePvAddsPTimesPackedValues) {
    for (std::size_t rows : {1u, 6u, 11u}) {
        for (std::size_t dv : {1u, 8u, 20u, 32u}) {
            for (std::size_t cols : {1u, 9u, 64u, 200u}) {
                const std::size_t dp = kernels::flash_padded_value_dim(dv), ld = cols + 3;
                ASSERT_EQ(dp % kernels::flash_strip(), 0u);
                ASSERT_GE(dp, dv);
                const auto p = random_vector(rows * ld, unsigned(rows + cols));
                const auto v = random_vector(cols * dv, unsigned(dv + cols * 3));
                std::vector<float> vp(cols * dp, 7.0f);
                kernels::flash_pack_values(v.data(), cols, dv, vp.data());
                std::vector<float> o = random_vector(rows * dp, 5u), start = o;
                kernels::flash_accumulate_pv(p.data(), ld, rows, cols, vp.data(), dp, o.data());
                for (std::size_t i = 0; i < rows; ++i) {
                    for (std::size_t c = 0; c < dp; ++c) {
                        double want = start[i * dp + c], magnitude = std::abs(want);
                        for (std::size_t j = 0; c < dv && j < cols; ++j) {
                            want += double(p[i * ld + j]) * v[j * dv + c];
                            magnitude += std::abs(double(p[i * ld + j]) * v[j * dv + c]);
                        }
                        // float32 accumulation: a few ulp of the sum of magnitudes
                        ASSERT_NEAR(o[i * dp + c], want, 1e-6 * (1.0 + magnitude))
                            << rows << " rows, dv " << dv << ", cols " << cols;
                    }
                }
            }
        }
    }
}

// Three tiles of one row set through flash_softmax_tile give the exact softmax statistics:
// m₂ = max t, l = Σ 2^(t - m₂), and p·rescale products that reproduce exp(x - max x).
TEST_P(EachIsa, BaseTwoOnlineSoftmaxMatchesExpOverTiles) {
    const std::size_t rows = 4, cols = 37, tiles = 3;
    const float log2e = 1.44269504088896341f;
    std::vector<float> x = random_vector(rows * cols * tiles, 11u);  // natural-unit scores
    for (auto& v : x) v *= 20.0f;                                      // wide range: |x| up to 40
    x[0 * cols * tiles + 5] = -kInf;                                   // masked keys
    for (std::size_t j = 0; j < cols; ++j) x[1 * cols * tiles + j] = -kInf;  // row 1: first tile masked
    for (std::size_t j = 0; j < cols * tiles; ++j) x[3 * cols * tiles + j] = -kInf;  // row 3: all masked
    std::vector<float> m(rows, -kInf), l(rows, 0.0f), alpha(rows);
    std::vector<double> acc(rows, 0.0);  // Σ p over tiles, rescaled like an output row
    std::vector<float> s(rows * cols);
    for (std::size_t t = 0; t < tiles; ++t) {
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t j = 0; j < cols; ++j) s[r * cols + j] = x[r * cols * tiles + t * cols + j] * log2e;
        }
        kernels::flash_softmax_tile(s.data(), rows, cols, cols, m.data(), l.data(), alpha.data());
        for (std::size_t r = 0; r < rows; ++r) {
            acc[r] *= alpha[r];
            for (std::size_t j = 0; j < cols; ++j) {
                if (x[r * cols * tiles + t * cols + j] == -kInf) EXPECT_EQ(s[r * cols + j], 0.0f);
                acc[r] += s[r * cols + j];
            }
        }
    }
    for (std::size_t r = 0; r < rows; ++r) {
        if (r == 3) {
            EXPECT_EQ(m[r], -kInf);
            EXPECT_EQ(l[r], 0.0f);
            continue;
        }
        double mx = -INFINITY, sum = 0.0;
        for (std::size_t j = 0; j < cols * tiles; ++j) mx = std::max<double>(mx, x[r * cols * tiles + j]);
        for (std::size_t j = 0; j < cols * tiles; ++j) sum += std::exp(double(x[r * cols * tiles + j]) - mx);
        EXPECT_NEAR(m[r] / log2e, mx, 1e-5 * std::abs(mx));
        EXPECT_NEAR(l[r], sum, 2e-6 * sum) << "row " << r;
        EXPECT_NEAR(acc[r], sum, 2e-6 * sum) << "row " << r;
    }
}

// The fused step equals softmax tile, rescale and p·V called one after the other.
TEST_P(EachIsa, SoftmaxPvTileEqualsTheThreeStepsInSequence) {
    const std::size_t rows = 11, cols = 45, ld = 48, dv = 20;
    const std::size_t dp = kernels::flash_padded_value_dim(dv);
    const auto v = random_vector(cols * dv, 3u);
    std::vector<float> vp(cols * dp);
    kernels::flash_pack_values(v.data(), cols, dv, vp.data());
    std::vector<float> s = random_vector(rows * ld, 4u);
    for (std::size_t j = 0; j < cols; ++j) s[2 * ld + j] = -kInf;  // a row with every key masked
    s[5 * ld + 7] = -kInf;
    std::vector<float> o0 = random_vector(rows * dp, 6u), o1 = o0, s1 = s;
    std::vector<float> m0(rows), l0(rows), alpha(rows);
    for (std::size_t r = 0; r < rows; ++r) {
        m0[r] = r % 3 == 0 ? -kInf : 0.5f;  // some rows fresh, some with history
        l0[r] = r % 3 == 0 ? 0.0f : 2.0f;
    }
    if (m0[2] != -kInf) m0[2] = 0.25f;
    std::vector<float> m1 = m0, l1 = l0;
    kernels::flash_softmax_pv_tile(s.data(), rows, cols, ld, vp.data(), dp, o0.data(), m0.data(), l0.data());
    kernels::flash_softmax_tile(s1.data(), rows, cols, ld, m1.data(), l1.data(), alpha.data());
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < dp; ++c) o1[r * dp + c] *= alpha[r];
    }
    kernels::flash_accumulate_pv(s1.data(), ld, rows, cols, vp.data(), dp, o1.data());
    for (std::size_t r = 0; r < rows; ++r) {
        EXPECT_EQ(m0[r], m1[r]) << "row " << r;
        EXPECT_NEAR(l0[r], l1[r], 1e-6f * l1[r]) << "row " << r;
        for (std::size_t c = 0; c < dp; ++c) EXPECT_NEAR(o0[r * dp + c], o1[r * dp + c], 1e-5f) << r << "," << c;
    }
}

INSTANTIATE_TEST_SUITE_P(FlashTiles, EachIsa, ::testing::ValuesIn(kernels::available_isas()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name;
                             for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             return name;
                         });

}  // namespace
}  // namespace attnlab
