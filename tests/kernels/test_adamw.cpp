#include "attnlab/kernels/adamw.hpp"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/kernels/isa.hpp"

namespace {

using attnlab::kernels::AdamWStep;

#if defined(__FMA__)
constexpr bool kReferenceMayFuse = true;
#else
constexpr bool kReferenceMayFuse = false;
#endif

// The update written out per element in the order adamw.hpp states, in float.
void adamw_reference(std::vector<float>& p, const std::vector<float>& g, std::vector<float>& m, std::vector<float>& v,
                     const AdamWStep& k) {
    for (std::size_t j = 0; j < p.size(); ++j) {
        if (k.decay) p[j] = p[j] * k.keep;
        m[j] = m[j] + k.one_minus_beta1 * (g[j] - m[j]);
        v[j] = k.beta2 * v[j] + k.one_minus_beta2 * g[j] * g[j];
        const float denom = std::sqrt(v[j]) / k.bias_correction2_sqrt + k.eps;
        p[j] = p[j] - k.step_size * m[j] / denom;
    }
}

std::vector<float> uniform(std::size_t n, std::mt19937& rng, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> x(n);
    for (float& e : x) e = dist(rng);
    return x;
}

// |got - want| within a few roundings of the terms that make up each element: `scale` bounds
// their size (p: |p| <= 1; m: |g| <= 0.5; v: g² <= 0.25), since a fused multiply-add changes the
// rounding of a term, not of the (possibly much smaller, after cancellation) result.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double scale,
                  const std::string& where) {
    for (std::size_t j = 0; j < got.size(); ++j) {
        EXPECT_NEAR(got[j], want[j], 4.0 * FLT_EPSILON * scale) << where << " at " << j;
    }
}

TEST(AdamWUpdate, EqualsTheScalarFormulaOnEveryIsa) {
    // Lengths around every vector width (tails of 1 .. 15 lanes), decay on and off, three steps
    // in a row so m and v carry state. SSE2 has no fused multiply-add, so p, m and v must equal
    // the per-element float formula bit for bit; the AVX2 and AVX-512 tables may fuse a·b + c
    // (compiler contraction) and must agree within a few roundings.
    const std::string previous = attnlab::kernels::active_isa();
    for (const std::string& isa : attnlab::kernels::available_isas()) {
        attnlab::kernels::set_isa(isa);
        for (std::size_t n : {1, 3, 4, 15, 16, 17, 33, 100}) {
            for (bool decay : {false, true}) {
                std::mt19937 rng(static_cast<unsigned>(n * 2 + decay));
                std::vector<float> p = uniform(n, rng, -1.0f, 1.0f), m(n, 0.0f), v(n, 0.0f);
                std::vector<float> pr = p, mr = m, vr = v;
                for (int t = 1; t <= 3; ++t) {
                    const std::vector<float> g = uniform(n, rng, -0.5f, 0.5f);
                    AdamWStep k;
                    k.decay = decay;
                    k.keep = 1.0f - 1e-3f * 0.01f;
                    k.bias_correction2_sqrt = std::sqrt(1.0f - std::pow(0.999f, float(t)));
                    k.step_size = 1e-3f / (1.0f - std::pow(0.9f, float(t)));
                    attnlab::kernels::adamw_update(p.data(), g.data(), m.data(), v.data(), n, k);
                    adamw_reference(pr, g, mr, vr, k);
                }
                const std::string where = isa + " n=" + std::to_string(n) + (decay ? " decay" : "");
                // (The reference itself is contracted when this file is built for a CPU with FMA.)
                if (isa == "sse2" && !kReferenceMayFuse) {
                    EXPECT_EQ(std::memcmp(p.data(), pr.data(), n * sizeof(float)), 0) << where << " p";
                    EXPECT_EQ(std::memcmp(m.data(), mr.data(), n * sizeof(float)), 0) << where << " m";
                    EXPECT_EQ(std::memcmp(v.data(), vr.data(), n * sizeof(float)), 0) << where << " v";
                }
                expect_close(p, pr, 1.0, where + " p");
                expect_close(m, mr, 0.5, where + " m");
                expect_close(v, vr, 0.25, where + " v");
            }
        }
    }
    attnlab::kernels::set_isa(previous);
}

TEST(AdamWUpdate, FirstStepMovesEachParameterByAboutTheLearningRate) {
    // At t = 1 with zero state, m = (1 - beta1)·g and v = (1 - beta2)·g², so after the bias
    // corrections the step is lr · g / (|g| + eps') ≈ lr · sign(g).
    std::vector<float> p = {0.5f, -0.25f, 2.0f}, g = {0.3f, -0.02f, 4.0f}, m(3, 0.0f), v(3, 0.0f);
    AdamWStep k;
    k.bias_correction2_sqrt = std::sqrt(1.0f - 0.999f);
    k.step_size = 1e-3f / (1.0f - 0.9f);
    const std::vector<float> before = p;
    attnlab::kernels::adamw_update(p.data(), g.data(), m.data(), v.data(), p.size(), k);
    for (std::size_t j = 0; j < p.size(); ++j) {
        EXPECT_NEAR(before[j] - p[j], 1e-3f * (g[j] > 0 ? 1.0f : -1.0f), 1e-7f) << j;
    }
}

}  // namespace
