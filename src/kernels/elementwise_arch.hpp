// src/kernels/elementwise_arch.hpp (private): ReLU, GELU, the layer-norm rows and the AdamW
// update, one template per architecture (see simd.hpp). elementwise.cpp holds validation and
// threading.
//
// Legend: n elements (any shape, flattened); rows x cols for layer norm, normalised over cols.
#pragma once

#include <cmath>

#include "attnlab/kernels/adamw.hpp"
#include "simd.hpp"

namespace attnlab {
namespace kernels {
namespace arch {

constexpr float kInvSqrt2 = 0.70710678118654752440f;    // 1/√2
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;  // 1/√(2π)

// y = max(x, 0). NaN propagates (x < 0 is false for NaN), as in torch.relu.
template <class Arch>
void relu_forward(const float* x, float* y, std::size_t n) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const Batch zero(0.0f);
    std::size_t i = 0;
    for (; i + W <= n; i += W) {
        const Batch v = Batch::load_unaligned(x + i);
        simd::select(v < zero, zero, v).store_unaligned(y + i);
    }
    for (; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

// Differentiates y = max(x, 0): dy/dx = 1 for x > 0, else 0 (0 at the kink, as PyTorch).
template <class Arch>
void relu_backward(const float* x, const float* dy, float* dx, std::size_t n, bool add) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const Batch zero(0.0f);
    std::size_t i = 0;
    for (; i + W <= n; i += W) {
        const Batch g = simd::select(Batch::load_unaligned(x + i) > zero, Batch::load_unaligned(dy + i), zero);
        (add ? Batch::load_unaligned(dx + i) + g : g).store_unaligned(dx + i);
    }
    for (; i < n; ++i) {
        const float g = x[i] > 0.0f ? dy[i] : 0.0f;
        dx[i] = add ? dx[i] + g : g;
    }
}

// y = x·Φ(x) = 0.5·x·(1 + erf(x/√2))   (Hendrycks & Gimpel 2016; torch.nn.GELU() default)
template <class Arch>
void gelu_forward(const float* x, float* y, std::size_t n) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const Batch half(0.5f), one(1.0f), inv_sqrt2(kInvSqrt2);
    std::size_t i = 0;
    for (; i + W <= n; i += W) {
        const Batch v = Batch::load_unaligned(x + i);
        (v * (half * (one + simd::erf(v * inv_sqrt2)))).store_unaligned(y + i);
    }
    for (; i < n; ++i) y[i] = x[i] * (0.5f * (1.0f + std::erf(x[i] * kInvSqrt2)));
}

// Differentiates y = x·Φ(x): dy/dx = Φ(x) + x·φ(x), φ(x) = exp(-x²/2)/√(2π).
template <class Arch>
void gelu_backward(const float* x, const float* dy, float* dx, std::size_t n, bool add) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const Batch half(0.5f), one(1.0f), inv_sqrt2(kInvSqrt2), inv_sqrt2pi(kInvSqrt2Pi), minus_half(-0.5f);
    std::size_t i = 0;
    for (; i + W <= n; i += W) {
        const Batch v = Batch::load_unaligned(x + i);
        const Batch cdf = half * (one + simd::erf(v * inv_sqrt2));
        const Batch local = cdf + v * inv_sqrt2pi * simd::exp(minus_half * v * v);
        const Batch g = Batch::load_unaligned(dy + i) * local;
        (add ? Batch::load_unaligned(dx + i) + g : g).store_unaligned(dx + i);
    }
    for (; i < n; ++i) {
        const float v = x[i];
        const float local = 0.5f * (1.0f + std::erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * std::exp(-0.5f * v * v);
        const float g = dy[i] * local;
        dx[i] = add ? dx[i] + g : g;
    }
}

// The AdamW update of W elements at p, g, m, v. (GCC contracts a·b + c into a fused multiply-add
// where the ISA has one, in vector code as in scalar: the AVX2 and AVX-512 tables round a few
// of these steps once instead of twice.)
template <class Arch>
inline void adamw_vector(float* p, const float* g, float* m, float* v, const AdamWStep& k) {
    using Batch = simd::Batch<Arch>;
    const Batch gj = Batch::load_unaligned(g);
    Batch pj = Batch::load_unaligned(p);
    if (k.decay) pj = pj * Batch(k.keep);
    Batch mj = Batch::load_unaligned(m);
    mj = mj + Batch(k.one_minus_beta1) * (gj - mj);
    const Batch vj = Batch(k.beta2) * Batch::load_unaligned(v) + Batch(k.one_minus_beta2) * gj * gj;
    const Batch denom = simd::sqrt(vj) / Batch(k.bias_correction2_sqrt) + Batch(k.eps);
    pj = pj - Batch(k.step_size) * mj / denom;
    mj.store_unaligned(m);
    vj.store_unaligned(v);
    pj.store_unaligned(p);
}

// The AdamW update of n elements (attnlab/kernels/adamw.hpp). The last n mod W go through
// buffers padded with zeros (which stay finite: denom = eps), so every element takes the same
// vector operations, wherever it sits. Before, the loop was scalar (GCC does not vectorise
// std::sqrt under errno semantics): 2% of the tiny encoder's training step.
template <class Arch>
void adamw_update(float* p, const float* g, float* m, float* v, std::size_t n, const AdamWStep& k) {
    constexpr std::size_t W = simd::Batch<Arch>::size;
    std::size_t j = 0;
    for (; j + W <= n; j += W) adamw_vector<Arch>(p + j, g + j, m + j, v + j, k);
    if (j == n) return;
    float tp[W] = {}, tg[W] = {}, tm[W] = {}, tv[W] = {};
    const std::size_t rest = n - j;
    for (std::size_t i = 0; i < rest; ++i) {
        tp[i] = p[j + i];
        tg[i] = g[j + i];
        tm[i] = m[j + i];
        tv[i] = v[j + i];
    }
    adamw_vector<Arch>(tp, tg, tm, tv, k);
    for (std::size_t i = 0; i < rest; ++i) {
        p[j + i] = tp[i];
        m[j + i] = tm[i];
        v[j + i] = tv[i];
    }
}

// Σ_j f(j) over one row of `cols`: f(j0) returns the Batch of columns [j0, j0 + W), tail(j)
// the float of a column past the last whole vector. Two interleaved vector chains, so the
// additions overlap; the order is fixed by cols alone.
template <class Arch, class VectorTerm, class ScalarTerm>
float row_sum(std::size_t cols, const VectorTerm& f, const ScalarTerm& tail) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    Batch a0(0.0f), a1(0.0f);
    std::size_t j = 0;
    for (; j + 2 * W <= cols; j += 2 * W) {
        a0 += f(j);
        a1 += f(j + W);
    }
    if (j + W <= cols) {
        a0 += f(j);
        j += W;
    }
    float sum = simd::hadd(a0 + a1);
    for (; j < cols; ++j) sum += tail(j);
    return sum;
}

// Per row: mean = Σx/N, var = Σ(x - mean)²/N (biased, as torch), rstd = 1/√(var + eps),
//          y = (x - mean)·rstd·gamma + beta.
// Float SIMD in two passes. The mean sums x - x₀ (x₀ the row's first element), so a row with a
// large offset (|mean| >> std: 1000 + u) sums small exact differences instead of rounding
// every partial sum of 1000s; the variance then sums the squared deviations from that mean.
// (Before, both sums ran in scalar double: 9% of the tiny encoder's training step, with the
// backward's.)
// x, y: (rows, cols); gamma, beta: (cols); mean, rstd: (rows) or nullptr.
template <class Arch>
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                        std::size_t rows, std::size_t cols, float eps) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;  // (cols)
        float* yr = y + r * cols;        // (cols)
        float mf = 0.0f, var = 0.0f;
        if (cols > 0) {
            const float x0 = xr[0];
            const Batch v0(x0);
            const float shifted = row_sum<Arch>(
                cols, [&](std::size_t j) { return Batch::load_unaligned(xr + j) - v0; },
                [&](std::size_t j) { return xr[j] - x0; });
            mf = static_cast<float>(double(x0) + double(shifted) / double(cols));
            const Batch vm(mf);
            const float squares = row_sum<Arch>(
                cols,
                [&](std::size_t j) {
                    const Batch d = Batch::load_unaligned(xr + j) - vm;
                    return d * d;
                },
                [&](std::size_t j) { return (xr[j] - mf) * (xr[j] - mf); });
            var = squares / static_cast<float>(cols);
        }
        const auto rs = static_cast<float>(1.0 / std::sqrt(double(var) + double(eps)));
        if (mean) mean[r] = mf;
        if (rstd) rstd[r] = rs;

        const Batch vm(mf), vrs(rs);
        std::size_t j = 0;
        for (; j + W <= cols; j += W) {
            const Batch xhat = (Batch::load_unaligned(xr + j) - vm) * vrs;
            simd::fma(xhat, Batch::load_unaligned(gamma + j), Batch::load_unaligned(beta + j)).store_unaligned(yr + j);
        }
        for (; j < cols; ++j) yr[j] = (xr[j] - mf) * rs * gamma[j] + beta[j];
    }
}

// The rows of the layer-norm backward (dgamma and dbeta are column sums, in elementwise.cpp):
//   g = dy·gamma,  xhat = (x - mean)·rstd,  dx = rstd·(g - mean(g) - xhat·mean(g·xhat)).
// Float SIMD, the two means as row_sum's two-chain vector sums (before: scalar double).
// x, dy, dx: (rows, cols); gamma: (cols); mean, rstd: (rows).
template <class Arch>
void layer_norm_backward_rows(const float* x, const float* gamma, const float* mean, const float* rstd,
                              const float* dy, float* dx, std::size_t rows, std::size_t cols) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    if (cols == 0) return;
    const float inv_cols = 1.0f / static_cast<float>(cols);
    for (std::size_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;    // (cols)
        const float* dyr = dy + r * cols;  // (cols)
        float* dxr = dx + r * cols;        // (cols)
        const float m = mean[r], rs = rstd[r];
        const Batch vm(m), vrs(rs);
        const float sum_g = row_sum<Arch>(
            cols, [&](std::size_t j) { return Batch::load_unaligned(dyr + j) * Batch::load_unaligned(gamma + j); },
            [&](std::size_t j) { return dyr[j] * gamma[j]; });
        const float sum_gx = row_sum<Arch>(
            cols,
            [&](std::size_t j) {
                const Batch g = Batch::load_unaligned(dyr + j) * Batch::load_unaligned(gamma + j);
                return g * ((Batch::load_unaligned(xr + j) - vm) * vrs);
            },
            [&](std::size_t j) { return dyr[j] * gamma[j] * ((xr[j] - m) * rs); });
        const float mean_g = sum_g * inv_cols, mean_gx = sum_gx * inv_cols;
        const Batch vg(mean_g), vgx(mean_gx);
        std::size_t j = 0;
        for (; j + W <= cols; j += W) {
            const Batch g = Batch::load_unaligned(dyr + j) * Batch::load_unaligned(gamma + j);
            const Batch xhat = (Batch::load_unaligned(xr + j) - vm) * vrs;
            (vrs * (g - vg - xhat * vgx)).store_unaligned(dxr + j);
        }
        for (; j < cols; ++j) {
            const float xhat = (xr[j] - m) * rs;
            dxr[j] = rs * (dyr[j] * gamma[j] - mean_g - xhat * mean_gx);
        }
    }
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
