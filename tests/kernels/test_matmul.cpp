#include "attnlab/kernels/matmul.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/isa.hpp"

namespace {

using attnlab::Accumulate;
using attnlab::kernels::Epilogue;

using Kernel = void (*)(const float*, std::size_t, const float*, std::size_t, float*, std::size_t, std::size_t,
                        std::size_t, std::size_t, Accumulate, const float*, float*, const Epilogue&);
using Reference = void (*)(const float*, std::size_t, const float*, std::size_t, float*, std::size_t, std::size_t,
                           std::size_t, std::size_t);

// One of the three products, with the storage shape of its operands:
//   nn: A (M, K), B (K, N);   nt: A (M, K), B (N, K);   tn: A (K, M), B (K, N).
struct Variant {
    const char* name;
    Kernel fast;
    Reference reference;
    bool trans_a;
    bool trans_b;
};

// Calls the variant's fast kernel with packing scratch of the calling thread (scratch = null)
// and no epilogue.
template <class V, class... Args>
void run(const V& v, Args... args) {
    v.fast(args..., nullptr, Epilogue{});
}

// Names the variant in test names and failure messages instead of dumping its bytes.
void PrintTo(const Variant& v, std::ostream* out) { *out << v.name; }

const Variant kVariants[] = {
    {"nn", attnlab::kernels::matmul_nn, attnlab::kernels::matmul_nn_reference, false, false},
    {"nt", attnlab::kernels::matmul_nt, attnlab::kernels::matmul_nt_reference, false, true},
    {"tn", attnlab::kernels::matmul_tn, attnlab::kernels::matmul_tn_reference, true, false},
};

// A row-major matrix stored with a leading dimension; padding past `cols` holds `pad`.
struct Matrix {
    std::size_t rows = 0, cols = 0, ld = 0;
    std::vector<float> data;

    Matrix(std::size_t r, std::size_t c, std::size_t extra_ld, float pad)
        : rows(r), cols(c), ld(c + extra_ld), data(std::max<std::size_t>(r * (c + extra_ld), 1), pad) {}
    float& at(std::size_t i, std::size_t j) { return data[i * ld + j]; }
};

void fill_uniform(Matrix& m, std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (std::size_t i = 0; i < m.rows; ++i) {
        for (std::size_t j = 0; j < m.cols; ++j) m.at(i, j) = dist(rng);
    }
}

Matrix abs_of(const Matrix& m) {
    Matrix out = m;
    for (float& x : out.data) x = std::fabs(x);
    return out;
}

// The operands of an (m, n, k) product of the given variant, random in [-1, 1], with `extra_ld`
// padding columns filled with NaN (a kernel that reads padding produces NaN).
struct Problem {
    Matrix a, b;
    Problem(const Variant& v, std::size_t m, std::size_t n, std::size_t k, std::size_t extra_ld, std::mt19937& rng)
        : a(v.trans_a ? k : m, v.trans_a ? m : k, extra_ld, std::numeric_limits<float>::quiet_NaN()),
          b(v.trans_b ? n : k, v.trans_b ? k : n, extra_ld, std::numeric_limits<float>::quiet_NaN()) {
        fill_uniform(a, rng);
        fill_uniform(b, rng);
    }
};

// Checks c (m, n) against the double-accumulated reference with the rigorous float bound:
// |c - ref| <= (k + 2) · FLT_EPSILON · Σ_p |a_ip| |b_pj|, plus |c0| terms when accumulating.
void expect_matches_reference(const Variant& v, const Problem& pr, const Matrix& c, const Matrix* c0, std::size_t m,
                              std::size_t n, std::size_t k, const std::string& where) {
    Matrix ref(m, n, 0, 0.0f), bound(m, n, 0, 0.0f);
    v.reference(pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, ref.data.data(), ref.ld, m, n, k);
    const Matrix abs_a = abs_of(pr.a), abs_b = abs_of(pr.b);
    v.reference(abs_a.data.data(), abs_a.ld, abs_b.data.data(), abs_b.ld, bound.data.data(), bound.ld, m, n, k);
    const double eps = FLT_EPSILON;
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            double expected = ref.data[i * ref.ld + j];
            double scale = bound.data[i * bound.ld + j];
            if (c0) {
                const double init = c0->data[i * c0->ld + j];
                expected += init;
                scale += std::fabs(init);
            }
            const double got = c.data[i * c.ld + j];
            const double tol = (double(k) + 2.0) * eps * scale + 1e-30;
            ASSERT_LE(std::fabs(got - expected), tol)
                << where << " at (" << i << ", " << j << "): got " << got << ", expected " << expected;
        }
    }
}

std::string describe(const Variant& v, std::size_t m, std::size_t n, std::size_t k) {
    return std::string(v.name) + " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
}

class MatmulVariant : public ::testing::TestWithParam<Variant> {};

TEST_P(MatmulVariant, MatchesReferenceForEverySizeCombination) {
    // Every size in every role: 1 (degenerate), 3 (below one SIMD vector), 17 (odd), 63/64/65
    // (around a power of two and the micro-tile widths), 255 (several row groups and strips).
    const std::size_t sizes[] = {1, 3, 17, 63, 64, 65, 255};
    const Variant& v = GetParam();
    std::mt19937 rng(1234);
    for (std::size_t m : sizes) {
        for (std::size_t n : sizes) {
            for (std::size_t k : sizes) {
                const Problem pr(v, m, n, k, 0, rng);
                Matrix c(m, n, 0, std::numeric_limits<float>::quiet_NaN());  // overwritten, never read
                run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, c.data.data(), c.ld, m, n, k,
                       Accumulate::no, nullptr);
                expect_matches_reference(v, pr, c, nullptr, m, n, k, describe(v, m, n, k));
                if (HasFatalFailure()) return;
            }
        }
    }
}

TEST_P(MatmulVariant, MatchesReferenceAcrossCacheBlockBoundaries) {
    // k > KC (256) and n > NC (512) exercise the K-block accumulation and several B panels.
    const Variant& v = GetParam();
    std::mt19937 rng(7);
    const std::size_t m = 37, n = 530, k = 600;
    const Problem pr(v, m, n, k, 0, rng);
    Matrix c(m, n, 0, 0.0f);
    run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, c.data.data(), c.ld, m, n, k, Accumulate::no, nullptr);
    expect_matches_reference(v, pr, c, nullptr, m, n, k, describe(v, m, n, k));
}

TEST_P(MatmulVariant, HonoursLeadingDimensionsWiderThanRows) {
    const Variant& v = GetParam();
    std::mt19937 rng(99);
    const float sentinel = 12345.0f;
    for (std::size_t extra : {1, 5, 16}) {
        const std::size_t m = 19, n = 23, k = 29;
        const Problem pr(v, m, n, k, extra, rng);  // NaN in A's and B's padding
        Matrix c(m, n, extra + 2, sentinel);
        run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, c.data.data(), c.ld, m, n, k, Accumulate::no, nullptr);
        expect_matches_reference(v, pr, c, nullptr, m, n, k,
                                 describe(v, m, n, k) + " extra_ld=" + std::to_string(extra));
        for (std::size_t i = 0; i < m; ++i) {
            for (std::size_t j = n; j < c.ld; ++j) ASSERT_EQ(c.at(i, j), sentinel) << "padding of C written at " << i;
        }
    }
}

TEST_P(MatmulVariant, AccumulateYesAddsToExistingC) {
    const Variant& v = GetParam();
    std::mt19937 rng(5);
    for (std::size_t k : {1, 64, 300}) {
        const std::size_t m = 13, n = 70;
        const Problem pr(v, m, n, k, 3, rng);
        Matrix c(m, n, 3, 0.0f);
        fill_uniform(c, rng);
        const Matrix c0 = c;
        run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, c.data.data(), c.ld, m, n, k, Accumulate::yes, nullptr);
        expect_matches_reference(v, pr, c, &c0, m, n, k, describe(v, m, n, k) + " accumulate");
    }
}

TEST_P(MatmulVariant, EmptyInnerDimensionGivesZerosOrLeavesCUnchanged) {
    const Variant& v = GetParam();
    const std::size_t m = 4, n = 9;
    std::vector<float> c(m * n, 3.5f);
    const float dummy = 0.0f;
    run(v, &dummy, 1, &dummy, 1, c.data(), n, m, n, 0, Accumulate::yes, nullptr);
    for (float x : c) EXPECT_EQ(x, 3.5f);
    run(v, &dummy, 1, &dummy, 1, c.data(), n, m, n, 0, Accumulate::no, nullptr);
    for (float x : c) EXPECT_EQ(x, 0.0f);
}

TEST_P(MatmulVariant, EmptyOutputTouchesNothing) {
    const Variant& v = GetParam();
    float c = 7.0f;
    const float dummy = 1.0f;
    run(v, &dummy, 1, &dummy, 1, &c, 1, 0, 1, 1, Accumulate::no, nullptr);
    run(v, &dummy, 1, &dummy, 1, &c, 1, 1, 0, 1, Accumulate::no, nullptr);
    EXPECT_EQ(c, 7.0f);
}

TEST_P(MatmulVariant, ResultsAreBitIdenticalForOneAndTwoThreads) {
    const Variant& v = GetParam();
    const std::size_t saved = attnlab::num_threads();
    std::mt19937 rng(42);
    for (const auto& dims : {std::array<std::size_t, 3>{255, 65, 63}, std::array<std::size_t, 3>{200, 530, 300}}) {
        const std::size_t m = dims[0], n = dims[1], k = dims[2];
        const Problem pr(v, m, n, k, 0, rng);
        std::vector<float> one(m * n), two(m * n);
        attnlab::set_num_threads(1);
        run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, one.data(), n, m, n, k, Accumulate::no, nullptr);
        attnlab::set_num_threads(2);
        run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, two.data(), n, m, n, k, Accumulate::no, nullptr);
        EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0) << describe(v, m, n, k);
    }
    attnlab::set_num_threads(saved);
}

TEST_P(MatmulVariant, FewRowsAndALongInnerDimensionMatchOneThreadBitForBit) {
    // A weight gradient's shape (64 x 64 summed over K = 2048, and a ragged one): on several
    // threads it is split over K blocks into partial products added in block order, which must
    // give exactly the one-thread sums, also when accumulating into C.
    const Variant& v = GetParam();
    const std::size_t saved = attnlab::num_threads();
    std::mt19937 rng(11);
    for (const auto& dims : {std::array<std::size_t, 3>{64, 64, 2048}, std::array<std::size_t, 3>{13, 70, 3000}}) {
        const std::size_t m = dims[0], n = dims[1], k = dims[2];
        const Problem pr(v, m, n, k, 0, rng);
        Matrix c0(m, n, 0, 0.0f);
        fill_uniform(c0, rng);
        for (const Accumulate acc : {Accumulate::no, Accumulate::yes}) {
            Matrix one = c0, two = c0;
            attnlab::set_num_threads(1);
            run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, one.data.data(), n, m, n, k, acc, nullptr);
            attnlab::set_num_threads(2);
            run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, two.data.data(), n, m, n, k, acc, nullptr);
            const std::string where = describe(v, m, n, k) + (acc == Accumulate::yes ? " accumulate" : "");
            EXPECT_EQ(std::memcmp(one.data.data(), two.data.data(), one.data.size() * sizeof(float)), 0) << where;
            expect_matches_reference(v, pr, two, acc == Accumulate::yes ? &c0 : nullptr, m, n, k, where);
        }
    }
    attnlab::set_num_threads(saved);
}

TEST_P(MatmulVariant, MatchesReferenceWhenARowsAreTooFarApartToReadInPlace) {
    // Past a leading dimension of 1024 floats the kernel packs A instead of reading it in place.
    const Variant& v = GetParam();
    std::mt19937 rng(13);
    const std::size_t m = 20, n = 33, k = 300;
    const Problem pr(v, m, n, k, 1100, rng);
    Matrix c(m, n, 0, 0.0f);
    run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, c.data.data(), c.ld, m, n, k, Accumulate::no, nullptr);
    expect_matches_reference(v, pr, c, nullptr, m, n, k, describe(v, m, n, k) + " lda=" + std::to_string(pr.a.ld));
}

TEST_P(MatmulVariant, BiasIsAddedInTheStoreExactlyAsBiasThenAccumulate) {
    // C = A·B + bias (Linear's forward) against the two-pass C = bias; C += A·B, bit for bit:
    // ragged strips, several K blocks (k > 256), and the K split of few rows on two threads.
    const Variant& v = GetParam();
    const std::size_t saved = attnlab::num_threads();
    std::mt19937 rng(21);
    for (const auto& dims : {std::array<std::size_t, 3>{37, 65, 64}, std::array<std::size_t, 3>{200, 530, 300},
                             std::array<std::size_t, 3>{13, 70, 3000}, std::array<std::size_t, 3>{5, 3, 0}}) {
        const std::size_t m = dims[0], n = dims[1], k = dims[2];
        const Problem pr(v, m, n, k, 0, rng);
        std::vector<float> bias(n);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        for (float& b : bias) b = dist(rng);
        for (const std::size_t threads : {1, 2}) {
            attnlab::set_num_threads(threads);
            std::vector<float> fused(m * n, std::numeric_limits<float>::quiet_NaN()), two_pass(m * n);
            for (std::size_t i = 0; i < m; ++i) std::copy(bias.begin(), bias.end(), two_pass.begin() + i * n);
            run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, fused.data(), n, m, n, k, Accumulate::no,
                   bias.data());
            run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, two_pass.data(), n, m, n, k,
                   Accumulate::yes, nullptr);
            EXPECT_EQ(std::memcmp(fused.data(), two_pass.data(), fused.size() * sizeof(float)), 0)
                << describe(v, m, n, k) << " threads=" << threads;
        }
    }
    attnlab::set_num_threads(saved);
}

TEST_P(MatmulVariant, EveryColumnCountOfPartialStripsOnEveryIsa) {
    // A partial strip computes only the vectors that hold its columns (micro_dispatch), so every
    // column count from 1 to past two of the widest strips (AVX-512: 64 columns), on every
    // kernel table, overwriting, with a bias (bit for bit as bias then accumulate) and
    // accumulating; 19 rows = 12 (one-vector strips on AVX-512 run 12 rows at a time), 6 and 1.
    const Variant& v = GetParam();
    const std::string previous = attnlab::kernels::active_isa();
    std::mt19937 rng(33);
    for (const std::string& isa : attnlab::kernels::available_isas()) {
        attnlab::kernels::set_isa(isa);
        for (std::size_t n = 1; n <= 130; ++n) {
            const std::size_t m = 19, k = 9;
            const Problem pr(v, m, n, k, 0, rng);
            const std::string where = isa + " " + describe(v, m, n, k);
            Matrix c(m, n, 0, std::numeric_limits<float>::quiet_NaN());
            run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, c.data.data(), c.ld, m, n, k, Accumulate::no,
                nullptr);
            expect_matches_reference(v, pr, c, nullptr, m, n, k, where);
            Matrix c0(m, n, 0, 0.0f);
            fill_uniform(c0, rng);
            Matrix acc = c0;
            run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, acc.data.data(), acc.ld, m, n, k,
                Accumulate::yes, nullptr);
            expect_matches_reference(v, pr, acc, &c0, m, n, k, where + " accumulate");
            std::vector<float> bias(n), fused(m * n), two_pass(m * n);
            std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
            for (float& b : bias) b = dist(rng);
            for (std::size_t i = 0; i < m; ++i) std::copy(bias.begin(), bias.end(), two_pass.begin() + i * n);
            run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, fused.data(), n, m, n, k, Accumulate::no,
                bias.data());
            run(v, pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, two_pass.data(), n, m, n, k,
                Accumulate::yes, nullptr);
            EXPECT_EQ(std::memcmp(fused.data(), two_pass.data(), fused.size() * sizeof(float)), 0) << where << " bias";
            if (HasFailure()) break;
        }
    }
    attnlab::kernels::set_isa(previous);
}

TEST_P(MatmulVariant, EpiloguesEqualTheProductThenReluGateOrSumBitForBit) {
    // C = relu(A·B + bias), C = [gate > 0]·(A·B + bias) and C = (A·B + bias) + R in the store,
    // and accumulating C = (C0 + A·B) + R, against the plain product followed by the same step,
    // bit for bit (the selections are exact, the sum one rounding either way): ragged and whole
    // strips, every table, several K blocks (the epilogue only after the last), the K split of
    // few rows on two threads, an empty K; gates with zeros, negatives and NaN.
    const Variant& v = GetParam();
    const std::size_t saved = attnlab::num_threads();
    const std::string previous = attnlab::kernels::active_isa();
    std::mt19937 rng(55);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (const std::string& isa : attnlab::kernels::available_isas()) {
        attnlab::kernels::set_isa(isa);
        for (const auto& dims : {std::array<std::size_t, 3>{19, 64, 64}, std::array<std::size_t, 3>{37, 65, 9},
                                 std::array<std::size_t, 3>{200, 256, 300}, std::array<std::size_t, 3>{13, 70, 3000},
                                 std::array<std::size_t, 3>{5, 3, 0}}) {
            const std::size_t m = dims[0], n = dims[1], k = dims[2];
            const Problem pr(v, m, n, k, 0, rng);
            std::vector<float> bias(n), gate(m * n), r(m * n), c0(m * n);
            for (float& b : bias) b = dist(rng);
            for (std::size_t i = 0; i < gate.size(); ++i) {
                gate[i] = i % 7 == 0 ? 0.0f : i % 11 == 0 ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
                r[i] = dist(rng);
                c0[i] = dist(rng);
            }
            for (const std::size_t threads : {1, 2}) {
                attnlab::set_num_threads(threads);
                const std::string where = isa + " " + describe(v, m, n, k) + " threads=" + std::to_string(threads);
                std::vector<float> plain(m * n), relu(m * n, -1.0f), gated(m * n, -1.0f), added(m * n, -1.0f);
                std::vector<float> acc_plain = c0, acc_added = c0;
                v.fast(pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, plain.data(), n, m, n, k, Accumulate::no,
                       bias.data(), nullptr, Epilogue{});
                v.fast(pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, relu.data(), n, m, n, k, Accumulate::no,
                       bias.data(), nullptr, Epilogue::relu());
                v.fast(pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, gated.data(), n, m, n, k, Accumulate::no,
                       bias.data(), nullptr, Epilogue::gated_by(gate.data()));
                v.fast(pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, added.data(), n, m, n, k, Accumulate::no,
                       bias.data(), nullptr, Epilogue::adding(r.data()));
                v.fast(pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, acc_plain.data(), n, m, n, k,
                       Accumulate::yes, nullptr, nullptr, Epilogue{});
                v.fast(pr.a.data.data(), pr.a.ld, pr.b.data.data(), pr.b.ld, acc_added.data(), n, m, n, k,
                       Accumulate::yes, nullptr, nullptr, Epilogue::adding(r.data()));
                std::vector<float> relu_expected(m * n), gated_expected(m * n), added_expected(m * n);
                for (std::size_t i = 0; i < plain.size(); ++i) {
                    relu_expected[i] = plain[i] < 0.0f ? 0.0f : plain[i];
                    gated_expected[i] = gate[i] > 0.0f ? plain[i] : 0.0f;
                    added_expected[i] = plain[i] + r[i];
                    acc_plain[i] += r[i];
                }
                EXPECT_EQ(std::memcmp(relu.data(), relu_expected.data(), relu.size() * sizeof(float)), 0)
                    << where << " relu";
                EXPECT_EQ(std::memcmp(gated.data(), gated_expected.data(), gated.size() * sizeof(float)), 0)
                    << where << " gate";
                EXPECT_EQ(std::memcmp(added.data(), added_expected.data(), added.size() * sizeof(float)), 0)
                    << where << " add";
                EXPECT_EQ(std::memcmp(acc_added.data(), acc_plain.data(), acc_added.size() * sizeof(float)), 0)
                    << where << " add, accumulating";
            }
        }
    }
    attnlab::kernels::set_isa(previous);
    attnlab::set_num_threads(saved);
}

TEST_P(MatmulVariant, ReluEpilogueKeepsNaN) {
    const Variant& v = GetParam();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    float a[4] = {nan, 1, -1, 1}, b[4] = {1, 0, 0, 1}, c[4] = {};
    v.fast(a, 2, b, 2, c, 2, 2, 2, 2, Accumulate::no, nullptr, nullptr, Epilogue::relu());
    // Row 0 holds a NaN, so both its entries are NaN whatever the variant's layout; row 1 of
    // nn and nt is (-1, 1) · I.
    EXPECT_TRUE(std::isnan(c[0]) || std::isnan(c[2]));
    for (float x : c) EXPECT_TRUE(std::isnan(x) || x >= 0.0f) << x;
}

TEST_P(MatmulVariant, SelectingEpilogueWhileAccumulatingOrAnEpilogueWithoutItsMatrixIsAConfigError) {
    const Variant& v = GetParam();
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {};
    try {
        v.fast(a, 2, b, 2, c, 2, 2, 2, 2, Accumulate::yes, nullptr, nullptr, Epilogue::relu());
        FAIL() << "no exception";
    } catch (const attnlab::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("epilogue (here relu) is only applied when overwriting C"),
                  std::string::npos)
            << e.what();
    }
    try {
        v.fast(a, 2, b, 2, c, 2, 2, 2, 2, Accumulate::no, nullptr, nullptr, Epilogue::gated_by(nullptr));
        FAIL() << "no exception";
    } catch (const attnlab::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("needs its gate matrix"), std::string::npos) << e.what();
    }
    try {
        v.fast(a, 2, b, 2, c, 2, 2, 2, 2, Accumulate::yes, nullptr, nullptr, Epilogue::adding(nullptr));
        FAIL() << "no exception";
    } catch (const attnlab::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("add epilogue needs the matrix it adds"), std::string::npos) << e.what();
    }
}

TEST_P(MatmulVariant, BiasWhileAccumulatingIsAConfigError) {
    const Variant& v = GetParam();
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {}, bias[2] = {1, 1};
    try {
        run(v, a, 2, b, 2, c, 2, 2, 2, 2, Accumulate::yes, bias);
        FAIL() << "no exception";
    } catch (const attnlab::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("Accumulate::no"), std::string::npos) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, MatmulVariant, ::testing::ValuesIn(kVariants),
                         [](const ::testing::TestParamInfo<Variant>& param_info) { return std::string(param_info.param.name); });

TEST(Matmul, TensorWrappersMatchTheKernels) {
    attnlab::Tensor2 a = {{1, 2, 3}, {4, 5, 6}};     // (2, 3)
    attnlab::Tensor2 b = {{1, 0}, {0, 1}, {2, -1}};  // (3, 2)
    const attnlab::Tensor2 expected = {{7, -1}, {16, -1}};
    EXPECT_EQ(attnlab::matmul(a, b), expected);
    const attnlab::Tensor2 bt = {{1, 0, 2}, {0, 1, -1}};  // (2, 3) = bᵀ
    EXPECT_EQ(attnlab::matmul_nt(a, bt), expected);
    const attnlab::Tensor2 at = {{1, 4}, {2, 5}, {3, 6}};  // (3, 2) = aᵀ
    EXPECT_EQ(attnlab::matmul_tn(at, b), expected);
}

TEST(Matmul, EmptyInnerDimensionTensorGivesZeros) {
    const attnlab::Tensor2 a = attnlab::Tensor2::from_shape({3, 0});
    const attnlab::Tensor2 b = attnlab::Tensor2::from_shape({0, 2});
    const attnlab::Tensor2 c = attnlab::matmul(a, b);
    ASSERT_EQ(c.shape(0), 3u);
    ASSERT_EQ(c.shape(1), 2u);
    for (float x : c) EXPECT_EQ(x, 0.0f);
}

// Expects fn() to throw ShapeError whose message equals `message`.
template <class Fn>
void expect_shape_error(Fn fn, const std::string& message) {
    try {
        fn();
        ADD_FAILURE() << "expected ShapeError: " << message;
    } catch (const attnlab::ShapeError& e) {
        EXPECT_EQ(std::string(e.what()), message);
    }
}

TEST(Matmul, MismatchedInnerDimensionsThrowShapeErrorNamingBothShapes) {
    const attnlab::Tensor2 a = attnlab::Tensor2::from_shape({3, 4});
    const attnlab::Tensor2 b = attnlab::Tensor2::from_shape({5, 2});
    expect_shape_error([&] { (void)attnlab::matmul(a, b); },
                       "matmul: inner dimensions differ: a is (3, 4), b is (5, 2)");
    expect_shape_error([&] { (void)attnlab::matmul_nt(a, b); },
                       "matmul_nt: inner dimensions differ (expected a (M, K), b (N, K)): a is (3, 4), b is (5, 2)");
    expect_shape_error([&] { (void)attnlab::matmul_tn(a, b); },
                       "matmul_tn: inner dimensions differ (expected a (K, M), b (K, N)): a is (3, 4), b is (5, 2)");
}

}  // namespace
