// src/kernels/elementwise_arch.hpp (private): ReLU, GELU and the layer-norm forward rows, one
// template per architecture (see simd.hpp). elementwise.cpp holds validation and threading.
//
// Legend: n elements (any shape, flattened); rows x cols for layer norm, normalised over cols.
#pragma once

#include <cmath>

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

// Per row: mean = Σx/N, var = Σ(x - mean)²/N (biased, as torch), rstd = 1/√(var + eps),
//          y = (x - mean)·rstd·gamma + beta.
// Mean and variance accumulate in double and in two passes, so rows with a large offset
// (|mean| >> std) keep their variance; each sum runs as four interleaved chains (j mod 4) so
// the additions do not wait on each other; the output loop is float SIMD.
// x, y: (rows, cols); gamma, beta: (cols); mean, rstd: (rows) or nullptr.
template <class Arch>
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                        std::size_t rows, std::size_t cols, float eps) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;  // (cols)
        float* yr = y + r * cols;        // (cols)
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        std::size_t j = 0;
        for (; j + 4 <= cols; j += 4) {
            s0 += xr[j];
            s1 += xr[j + 1];
            s2 += xr[j + 2];
            s3 += xr[j + 3];
        }
        for (; j < cols; ++j) s0 += xr[j];
        const double m = cols ? ((s0 + s1) + (s2 + s3)) / double(cols) : 0.0;
        double q0 = 0.0, q1 = 0.0, q2 = 0.0, q3 = 0.0;
        for (j = 0; j + 4 <= cols; j += 4) {
            const double d0 = double(xr[j]) - m, d1 = double(xr[j + 1]) - m;
            const double d2 = double(xr[j + 2]) - m, d3 = double(xr[j + 3]) - m;
            q0 += d0 * d0;
            q1 += d1 * d1;
            q2 += d2 * d2;
            q3 += d3 * d3;
        }
        for (; j < cols; ++j) {
            const double d = double(xr[j]) - m;
            q0 += d * d;
        }
        const double var = cols ? ((q0 + q1) + (q2 + q3)) / double(cols) : 0.0;
        const auto rs = static_cast<float>(1.0 / std::sqrt(var + double(eps)));
        const auto mf = static_cast<float>(m);
        if (mean) mean[r] = mf;
        if (rstd) rstd[r] = rs;

        const Batch vm(mf), vrs(rs);
        for (j = 0; j + W <= cols; j += W) {
            const Batch xhat = (Batch::load_unaligned(xr + j) - vm) * vrs;
            simd::fma(xhat, Batch::load_unaligned(gamma + j), Batch::load_unaligned(beta + j)).store_unaligned(yr + j);
        }
        for (; j < cols; ++j) yr[j] = (xr[j] - mf) * rs * gamma[j] + beta[j];
    }
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
