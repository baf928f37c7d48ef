// Run-time ISA dispatch (kernels/isa.hpp): every instruction set compiled in and supported here
// computes the same kernels as the plain references, and the switch itself behaves.
#include "attnlab/kernels/isa.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/kernels/elementwise.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

// Restores the ISA active before the test.
class IsaScope {
public:
    IsaScope() : previous_(kernels::active_isa()) {}
    ~IsaScope() { kernels::set_isa(previous_); }

private:
    std::string previous_;
};

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    float m = 0.0f;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
    const Tensor1 t = test::random_normal<Tensor1>({n}, seed);
    return std::vector<float>(t.begin(), t.end());
}

TEST(Isa, ActiveIsOneOfTheAvailableAndTheBestByDefault) {
    const std::vector<std::string> isas = kernels::available_isas();
    ASSERT_FALSE(isas.empty());
    EXPECT_NE(std::find(isas.begin(), isas.end(), kernels::active_isa()), isas.end());
    EXPECT_GE(kernels::active_simd_width(), 1u);
}

TEST(Isa, UnknownNameThrowsConfigErrorListingTheValidOnes) {
    IsaScope scope;
    try {
        kernels::set_isa("avx1024");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("avx1024"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find(kernels::available_isas().front()), std::string::npos);
    }
}

// Odd sizes exercise the vector body, the scalar tails and partial micro-tiles of every ISA.
TEST(Isa, EveryIsaMatchesTheReferences) {
    IsaScope scope;
    const std::size_t m = 37, n = 29, k = 301, rows = 7, cols = 45;
    const std::vector<float> a = random_vector(m * k, 1), b = random_vector(k * n, 2);
    const std::vector<float> x = random_vector(rows * cols, 3);
    std::vector<float> c_ref(m * n), sm_ref = x;
    kernels::matmul_nn_reference(a.data(), k, b.data(), n, c_ref.data(), n, m, n, k);
    kernels::softmax_rows_reference(sm_ref.data(), rows, cols, cols);
    std::vector<float> gelu_ref(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        gelu_ref[i] = float(0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
    }

    for (const std::string& isa : kernels::available_isas()) {
        SCOPED_TRACE(isa);
        kernels::set_isa(isa);
        EXPECT_EQ(kernels::active_isa(), isa);
        std::vector<float> c(m * n);
        kernels::matmul_nn(a.data(), k, b.data(), n, c.data(), n, m, n, k);
        EXPECT_LT(max_abs_diff(c, c_ref), 1e-4f);
        std::vector<float> sm = x;
        kernels::softmax_rows(sm.data(), rows, cols, cols);
        EXPECT_LT(max_abs_diff(sm, sm_ref), 1e-6f);
        std::vector<float> g(x.size());
        kernels::gelu_forward(x.data(), g.data(), x.size());
        EXPECT_LT(max_abs_diff(g, gelu_ref), 1e-6f);
        std::vector<float> gamma(cols, 1.5f), beta(cols, 0.25f), y(x.size()), mean(rows), rstd(rows);
        kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows,
                                    cols, 1e-5f);
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t j = 0; j < cols; ++j) {
                const float expect = (x[r * cols + j] - mean[r]) * rstd[r] * 1.5f + 0.25f;
                EXPECT_NEAR(y[r * cols + j], expect, 1e-5f);
            }
        }
    }
}

}  // namespace
}  // namespace attnlab
