// The flash tile kernels (kernels/flash_tiles.hpp), for every ISA compiled in and supported
// here: packed products against plain double-precision loops for ragged shapes, and the forward's
// column-wise base-2 online softmax with p·V against softmax·V over several tiles, including
// masked keys; the lazy-reference kernels (exponentials in the score product) against their
// definitions.
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

TEST_P(EachIsa, ScoresOfGroupsAndStripsEqualScaledProductsForRaggedShapes) {
    const std::size_t strip = kernels::flash_strip();
    for (std::size_t rows : {1u, 5u, 6u, 7u, 13u}) {
        for (std::size_t d : {1u, 3u, 16u, 33u}) {
            for (std::size_t keys : {std::size_t{1}, strip - 1, strip + 3, 3 * strip}) {
                const auto q = random_vector(rows * d, unsigned(rows * 100 + d));
                const auto k = random_vector(keys * d, unsigned(keys * 7 + d));
                std::vector<float> ks(kernels::flash_strips_size(keys, d));
                kernels::flash_pack_strips(k.data(), keys, d, d, 2.0f, ks.data());
                // q read with its rows further apart than d (a head inside the rows of a
                // projection): the padding between rows must not be read into the groups.
                const std::size_t ldq = d + 3;
                std::vector<float> q_wide(rows * ldq, std::nanf(""));
                for (std::size_t i = 0; i < rows; ++i) std::copy_n(q.data() + i * d, d, q_wide.data() + i * ldq);
                std::vector<float> qg(kernels::flash_groups_size(rows, d));
                kernels::flash_pack_groups(q_wide.data(), rows, d, ldq, 0.25f, qg.data());
                const std::size_t strips = (keys + strip - 1) / strip, ld = strips * strip + 5;
                std::vector<float> s(rows * ld, 99.0f);
                kernels::flash_scores(qg.data(), rows, d, ks.data(), strips, s.data(), ld);
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

// Key tiles stored keys by queries, through flash_softmax_pv_columns one after another, give
// the exact softmax statistics (m₂ = max t, l = Σ 2^(t - m₂)) and o / l = softmax(x)·V, with
// masked keys, a query masked for a whole tile, a query that sees no key at all, values padded
// to the strip, and padding query columns that must not matter.
TEST_P(EachIsa, ColumnSoftmaxAndPvOverTilesEqualSoftmaxTimesValues) {
    const float log2e = 1.44269504088896341f;
    const std::size_t strip = kernels::flash_strip(), tile_cols[] = {37, 16, 9};
    const std::size_t keys = 37 + 16 + 9;
    for (std::size_t rows : {1u, 5u, 11u}) {
        for (std::size_t dv : {1u, 20u, 32u}) {
            const std::size_t ldq = (rows + strip - 1) / strip * strip, dp = kernels::flash_padded_value_dim(dv);
            std::vector<float> x = random_vector(rows * keys, unsigned(rows * 10 + dv));  // natural units
            for (auto& e : x) e *= 20.0f;                                                 // |x| up to 40
            x[5] = -kInf;                                                                 // a masked key
            if (rows > 1) {
                for (std::size_t j = 0; j < 37; ++j) x[1 * keys + j] = -kInf;  // query 1: first tile masked
            }
            if (rows > 3) {
                for (std::size_t j = 0; j < keys; ++j) x[3 * keys + j] = -kInf;  // query 3: every key masked
            }
            const auto v = random_vector(keys * dv, unsigned(dv + 3));
            std::vector<float> vp(keys * dp);
            kernels::flash_pack_values(v.data(), keys, dv, dv, vp.data());
            std::vector<float> m(ldq, -kInf), l(ldq, 0.0f), alpha(ldq), o(rows * dp, 0.0f);
            std::size_t j0 = 0;
            for (std::size_t cols : tile_cols) {
                std::vector<float> st(cols * ldq, 0.75f);  // padding columns hold a finite score
                for (std::size_t j = 0; j < cols; ++j) {
                    for (std::size_t q = 0; q < rows; ++q) st[j * ldq + q] = x[q * keys + j0 + j] * log2e;
                }
                kernels::flash_softmax_pv_columns(st.data(), rows, cols, ldq, vp.data() + j0 * dp, dp, dp, o.data(),
                                                  m.data(), l.data(), alpha.data());
                for (std::size_t j = 0; j < cols; ++j) {
                    for (std::size_t q = 0; q < rows; ++q) {
                        if (x[q * keys + j0 + j] == -kInf) ASSERT_EQ(st[j * ldq + q], 0.0f) << q << "," << j0 + j;
                    }
                }
                j0 += cols;
            }
            for (std::size_t q = 0; q < rows; ++q) {
                if (q == 3) {
                    EXPECT_EQ(m[q], -kInf);
                    EXPECT_EQ(l[q], 0.0f);
                    for (std::size_t c = 0; c < dp; ++c) EXPECT_EQ(o[q * dp + c], 0.0f);
                    continue;
                }
                double mx = -INFINITY, sum = 0.0;
                for (std::size_t j = 0; j < keys; ++j) mx = std::max<double>(mx, x[q * keys + j]);
                for (std::size_t j = 0; j < keys; ++j) sum += std::exp(double(x[q * keys + j]) - mx);
                EXPECT_NEAR(m[q] / log2e, mx, 1e-5 * std::abs(mx)) << "query " << q;
                EXPECT_NEAR(l[q], sum, 2e-6 * sum) << "query " << q;
                for (std::size_t c = 0; c < dp; ++c) {
                    double want = 0.0;
                    for (std::size_t j = 0; c < dv && j < keys; ++j) {
                        want += std::exp(double(x[q * keys + j]) - mx) / sum * v[j * dv + c];
                    }
                    ASSERT_NEAR(o[q * dp + c] / l[q], want, 1e-5) << rows << " rows, dv " << dv << ", query " << q
                                                                  << ", column " << c;
                }
            }
        }
    }
}

// The lazy-reference kernels (every ISA has them; the forward takes them where
// kernels::flash_lazy_exp()): flash_scores_exp gives pt = 2^(t - ref) for t = the groups'
// products with the strips, ref below and above the scores (t - ref up to ~+20 and down past
// -127, where p is 0), with the tile max and sum per query added to what they held; then
// flash_pv_columns adds pt·V to o, rescaled by alpha or not (null).
TEST_P(EachIsa, ScoresWithExponentialsAndPvColumnsEqualTheirDefinitions) {
    const std::size_t strip = kernels::flash_strip();
    for (std::size_t keys : {1u, 5u, 13u, 37u}) {
        for (std::size_t queries : {std::size_t{1}, strip + 3}) {
            const std::size_t d = 16, dv = 20, dp = kernels::flash_padded_value_dim(dv);
            const std::size_t strips = (queries + strip - 1) / strip, ld = strips * strip;
            const auto k = random_vector(keys * d, unsigned(keys * 3 + queries));
            const auto q = random_vector(queries * d, unsigned(queries * 5 + keys));
            std::vector<float> kg(kernels::flash_groups_size(keys, d)), qs(kernels::flash_strips_size(queries, d));
            kernels::flash_pack_groups(k.data(), keys, d, d, 1.0f, kg.data());
            kernels::flash_pack_strips(q.data(), queries, d, d, 1.5f, qs.data());
            std::vector<float> ref(ld), tile_max(ld), tile_sum(ld);
            for (std::size_t c = 0; c < ld; ++c) {
                ref[c] = c % 3 == 0 ? -12.0f : c % 3 == 1 ? 3.0f : 160.0f;  // below, inside, far above the scores
                tile_max[c] = c % 2 ? -kInf : 50.0f;  // what the caller's buffers held before
                tile_sum[c] = c % 2 ? 0.0f : 2.0f;
            }
            std::vector<float> pt(keys * ld, 99.0f);
            kernels::flash_scores_exp(kg.data(), keys, d, qs.data(), strips, pt.data(), ld, ref.data(),
                                      tile_max.data(), tile_sum.data());
            for (std::size_t c = 0; c < queries; ++c) {
                double mx = c % 2 ? -INFINITY : 50.0, sum = c % 2 ? 0.0 : 2.0;
                for (std::size_t j = 0; j < keys; ++j) {
                    double t = 0.0, magnitude = 0.0;
                    for (std::size_t p = 0; p < d; ++p) {
                        t += 1.5 * double(q[c * d + p]) * k[j * d + p];
                        magnitude += std::abs(1.5 * double(q[c * d + p]) * k[j * d + p]);
                    }
                    const double want = t - ref[c] < -127.0 ? 0.0 : std::exp2(t - ref[c]);
                    // exp2's 2.4e-7, and ln 2 times the float errors of t (a sum of d products)
                    // and of t - ref, doubled
                    const double rel =
                        3e-7 + 2.0 * 0.7 * (double(d) * 6e-8 * magnitude + 1.2e-7 * std::abs(t - ref[c]));
                    ASSERT_NEAR(pt[j * ld + c], want, rel * want + 1e-30) << keys << " keys, query " << c;
                    mx = std::max(mx, t);
                    sum += pt[j * ld + c];
                }
                EXPECT_NEAR(tile_max[c], mx, 1e-5 * std::abs(mx)) << keys << " keys, query " << c;
                EXPECT_NEAR(tile_sum[c], sum, 1e-6 * sum) << keys << " keys, query " << c;
            }
            // o (queries, dp) = alpha ⊙ o + ptᵀ·V
            const auto v = random_vector(keys * dv, unsigned(keys + 11));
            std::vector<float> vp(keys * dp);
            kernels::flash_pack_values(v.data(), keys, dv, dv, vp.data());
            for (bool rescale : {false, true}) {
                std::vector<float> o0 = random_vector(queries * dp, 7), o = o0, alpha(queries);
                for (std::size_t c = 0; c < queries; ++c) alpha[c] = 0.25f + 0.5f * float(c % 3);
                for (float& x : pt) x = std::min(x, 8.0f);  // keep the products O(1)
                kernels::flash_pv_columns(pt.data(), queries, keys, ld, vp.data(), dp, dp, o.data(),
                                          rescale ? alpha.data() : nullptr);
                for (std::size_t c = 0; c < queries; ++c) {
                    for (std::size_t col = 0; col < dv; ++col) {
                        double want = (rescale ? alpha[c] : 1.0) * o0[c * dp + col];
                        for (std::size_t j = 0; j < keys; ++j) want += double(pt[j * ld + c]) * v[j * dv + col];
                        ASSERT_NEAR(o[c * dp + col], want, 1e-5 * (1.0 + std::abs(want))) << keys << " keys";
                    }
                }
            }
        }
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
