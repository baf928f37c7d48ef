// src/kernels/elementwise_arch.hpp (private): ReLU, GELU, the layer-norm rows and the AdamW
// update, one template per architecture (see simd.hpp). elementwise.cpp holds validation and
// threading.
//
// Legend: n elements (any shape, flattened); rows x cols for layer norm, normalised over cols.
#pragma once

#include <algorithm>
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

// The WebAssembly kernels take the tail of an elementwise loop (fewer than W elements) as one
// vector padded with zeros, f applied to it as to the body, instead of libm's scalar erf and exp:
// glibc's erff, which the native tables' tails call, and Emscripten's musl erff round some
// inputs differently (docs/testing.md), where the vector code is the same arithmetic in both
// builds. f(x, dy) gets the padded x and dy (dy zeros when there is none)
// and returns the tail's values; the pad's are dropped.
template <class Arch, class F>
inline void padded_tail(const float* x, const float* dy, std::size_t m, float* out, const F& f) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    alignas(64) float xs[W] = {}, ds[W] = {}, ys[W];
    for (std::size_t j = 0; j < m; ++j) xs[j] = x[j];
    if (dy) {
        for (std::size_t j = 0; j < m; ++j) ds[j] = dy[j];
    }
    f(Batch::load_aligned(xs), Batch::load_aligned(ds)).store_aligned(ys);
    for (std::size_t j = 0; j < m; ++j) out[j] = ys[j];
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
    if constexpr (simd::kWasmKernels<Arch>) {
        if (i < n) {
            padded_tail<Arch>(x + i, nullptr, n - i, y + i, [&](const Batch& v, const Batch&) {
                return v * (half * (one + simd::erf(v * inv_sqrt2)));  // the body's
            });
        }
        return;
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
    if constexpr (simd::kWasmKernels<Arch>) {
        if (i < n) {
            alignas(64) float g[W];
            padded_tail<Arch>(x + i, dy + i, n - i, g, [&](const Batch& v, const Batch& d) {
                const Batch cdf = half * (one + simd::erf(v * inv_sqrt2));  // the body's
                const Batch local = cdf + v * inv_sqrt2pi * simd::exp(minus_half * v * v);
                return d * local;
            });
            for (std::size_t j = 0; j < n - i; ++j) dx[i + j] = add ? dx[i + j] + g[j] : g[j];  // a lane's add
        }
        return;
    }
    for (; i < n; ++i) {
        const float v = x[i];
        const float local = 0.5f * (1.0f + std::erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * std::exp(-0.5f * v * v);
        const float g = dy[i] * local;
        dx[i] = add ? dx[i] + g : g;
    }
}

// GELU's tanh approximation, GPT-2's `gelu_new` (Hendrycks & Gimpel 2016, section 2;
// torch.nn.functional.gelu(x, approximate='tanh')):
//   y = 0.5·x·(1 + tanh(u)),  u = √(2/π)·(x + 0.044715·x³)
// computed as y = x·σ(2u) (1 + tanh(u) = 2σ(2u)) from t = exp(-2|u|) <= 1, which never
// overflows: σ(2u) = 1/(1 + t) for u >= 0, t/(1 + t) for u < 0, and σ(2u)·(1 - σ(2u)) =
// t/(1 + t)² either way (the backward's term, exact where 1 - σ(2u) would cancel).
// The last n mod W elements go through a zero-padded vector, so every element takes the same
// operations (a scalar tail would let the compiler fuse a multiply-add the vector body rounds
// twice, and Accumulate::yes would differ from adding afterwards).
constexpr float kSqrt2OverPi = 0.79788456080286535588f;  // √(2/π)
constexpr float kGeluTanhCubic = 0.044715f;

// σ(2u) and σ(2u)·(1 - σ(2u)) of x.
template <class Arch>
inline void gelu_tanh_terms(const simd::Batch<Arch>& v, simd::Batch<Arch>& s, simd::Batch<Arch>& slope) {
    using Batch = simd::Batch<Arch>;
    const Batch zero(0.0f), one(1.0f), c(kSqrt2OverPi), cubic(kGeluTanhCubic), minus_two(-2.0f);
    const Batch u = c * (v + cubic * v * v * v);
    const Batch t = simd::exp(minus_two * simd::select(u < zero, zero - u, u));
    const Batch inv = one / (one + t);
    s = simd::select(u < zero, t * inv, inv);
    slope = t * inv * inv;
}

template <class Arch>
void gelu_tanh_forward(const float* x, float* y, std::size_t n) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const auto step = [](const float* in, float* out) {
        const Batch v = Batch::load_unaligned(in);
        Batch s, slope;
        gelu_tanh_terms<Arch>(v, s, slope);
        (v * s).store_unaligned(out);
    };
    std::size_t i = 0;
    for (; i + W <= n; i += W) step(x + i, y + i);
    if (i < n) {
        float in[W] = {}, out[W];
        std::copy(x + i, x + n, in);
        step(in, out);
        std::copy(out, out + (n - i), y + i);
    }
}

// Differentiates y = x·s, s = σ(2u): dy/dx = s + x·s·(1 - s)·2u', u' = √(2/π)·(1 + 3·0.044715·x²).
template <class Arch>
void gelu_tanh_backward(const float* x, const float* dy, float* dx, std::size_t n, bool add) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const auto step = [add](const float* in, const float* din, float* dout) {
        const Batch v = Batch::load_unaligned(in);
        const Batch two_c(2.0f * kSqrt2OverPi), one(1.0f), three_cubic(3.0f * kGeluTanhCubic);
        Batch s, slope;
        gelu_tanh_terms<Arch>(v, s, slope);
        const Batch local = s + v * slope * two_c * (one + three_cubic * v * v);
        const Batch g = Batch::load_unaligned(din) * local;
        (add ? Batch::load_unaligned(dout) + g : g).store_unaligned(dout);
    };
    std::size_t i = 0;
    for (; i + W <= n; i += W) step(x + i, dy + i, dx + i);
    if (i < n) {
        float in[W] = {}, din[W] = {}, dout[W] = {};
        std::copy(x + i, x + n, in);
        std::copy(dy + i, dy + n, din);
        std::copy(dx + i, dx + n, dout);
        step(in, din, dout);
        std::copy(dout, dout + (n - i), dx + i);
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
// vector operations, wherever it sits. Written with explicit vectors because GCC does not
// vectorise std::sqrt under errno semantics, and a scalar update would take about 2% of the
// tiny encoder's training step.
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

// Per row: mean = Σx/N, var = Σ(x - mean)²/N (biased, as torch), rstd = 1/√(var + eps),
//          y = (x - mean)·rstd·gamma + beta.
// Float SIMD in two passes. The mean sums x - x₀ (x₀ the row's first element), so a row with a
// large offset (|mean| >> std: 1000 + u) sums small exact differences instead of rounding
// every partial sum of 1000s; the variance then sums the squared deviations from that mean.
// (Float SIMD, not scalar double: in double the two layer norms would take about 9% of the tiny
// encoder's training step.)
// R rows at a time, so each pass's horizontal sums (one per row) are independent chains.
// x, y: (R, cols); gamma, beta: (cols); mean, rstd: (R) or nullptr.
template <class Arch, std::size_t R>
void layer_norm_forward_block(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                              float* rstd, std::size_t cols, float eps) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const std::size_t full = cols / W * W;
    const float inv_cols = 1.0f / static_cast<float>(cols);
    float x0[R], mf[R], rs[R];
    Batch acc[R], v[R];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        x0[r] = x[r * cols];
        v[r] = Batch(x0[r]);
        acc[r] = Batch(0.0f);
    }
    for (std::size_t j = 0; j < full; j += W) {
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) acc[r] += Batch::load_unaligned(x + r * cols + j) - v[r];
    }
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        float shifted = simd::hadd(acc[r]);
        for (std::size_t j = full; j < cols; ++j) shifted += x[r * cols + j] - x0[r];
        mf[r] = x0[r] + shifted * inv_cols;
        v[r] = Batch(mf[r]);
        acc[r] = Batch(0.0f);
    }
    for (std::size_t j = 0; j < full; j += W) {
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            const Batch d = Batch::load_unaligned(x + r * cols + j) - v[r];
            acc[r] = simd::fma(d, d, acc[r]);
        }
    }
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        float squares = simd::hadd(acc[r]);
        for (std::size_t j = full; j < cols; ++j) {
            const float d = x[r * cols + j] - mf[r];
            squares += d * d;
        }
        const float var = squares * inv_cols;
        rs[r] = 1.0f / std::sqrt(var + eps);  // float, as torch.nn.LayerNorm on the CPU
        if (mean) mean[r] = mf[r];
        if (rstd) rstd[r] = rs[r];
    }
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const Batch vrs(rs[r]);
        std::size_t j = 0;
        for (; j < full; j += W) {
            const Batch xhat = (Batch::load_unaligned(xr + j) - v[r]) * vrs;
            simd::fma(xhat, Batch::load_unaligned(gamma + j), Batch::load_unaligned(beta + j)).store_unaligned(yr + j);
        }
        for (; j < cols; ++j) yr[j] = (xr[j] - mf[r]) * rs[r] * gamma[j] + beta[j];
    }
}

// x, y: (rows, cols); gamma, beta: (cols); mean, rstd: (rows) or nullptr.
template <class Arch>
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                        std::size_t rows, std::size_t cols, float eps) {
    constexpr std::size_t R = 4;
    std::size_t r = 0;
    if (cols == 0) {  // empty rows: mean 0, variance 0
        for (; r < rows; ++r) {
            if (mean) mean[r] = 0.0f;
            if (rstd) rstd[r] = static_cast<float>(1.0 / std::sqrt(double(eps)));
        }
        return;
    }
    for (; r + R <= rows; r += R) {
        layer_norm_forward_block<Arch, R>(x + r * cols, gamma, beta, y + r * cols, mean ? mean + r : nullptr,
                                          rstd ? rstd + r : nullptr, cols, eps);
    }
    for (; r < rows; ++r) {
        layer_norm_forward_block<Arch, 1>(x + r * cols, gamma, beta, y + r * cols, mean ? mean + r : nullptr,
                                          rstd ? rstd + r : nullptr, cols, eps);
    }
}

// The rows of the layer-norm backward (dgamma and dbeta are column sums, in elementwise.cpp):
//   g = dy·gamma,  xhat = (x - mean)·rstd,  dx = rstd·(g - mean(g) - xhat·mean(g·xhat)).
// Float SIMD, R rows at a time: one pass sums g and g·xhat of every row (2R independent vector
// chains), then each row's dx. (Row by row, each of the two sums would be its own pass ending
// in a dependent horizontal add: at 64 columns, 4 vectors, that latency would be most of the
// time.)
// x, dy, dx: (R, cols); gamma: (cols); mean, rstd: (R).
template <class Arch, std::size_t R>
void layer_norm_backward_block(const float* x, const float* gamma, const float* mean, const float* rstd,
                               const float* dy, float* dx, std::size_t cols) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const float inv_cols = 1.0f / static_cast<float>(cols);
    const std::size_t full = cols / W * W;
    Batch vm[R], vrs[R], sg[R], sgx[R];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        vm[r] = Batch(mean[r]);
        vrs[r] = Batch(rstd[r]);
        sg[r] = Batch(0.0f);
        sgx[r] = Batch(0.0f);
    }
    for (std::size_t j = 0; j < full; j += W) {
        const Batch gm = Batch::load_unaligned(gamma + j);
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            const Batch g = Batch::load_unaligned(dy + r * cols + j) * gm;
            sg[r] += g;
            sgx[r] = simd::fma(g, (Batch::load_unaligned(x + r * cols + j) - vm[r]) * vrs[r], sgx[r]);
        }
    }
    float mean_g[R], mean_gx[R];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        const float* xr = x + r * cols;
        const float* dyr = dy + r * cols;
        float sum_g = simd::hadd(sg[r]), sum_gx = simd::hadd(sgx[r]);
        for (std::size_t j = full; j < cols; ++j) {
            const float g = dyr[j] * gamma[j];
            sum_g += g;
            sum_gx += g * ((xr[j] - mean[r]) * rstd[r]);
        }
        mean_g[r] = sum_g * inv_cols;
        mean_gx[r] = sum_gx * inv_cols;
    }
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        const float* xr = x + r * cols;
        const float* dyr = dy + r * cols;
        float* dxr = dx + r * cols;
        const Batch vg(mean_g[r]), vgx(mean_gx[r]);
        std::size_t j = 0;
        for (; j < full; j += W) {
            const Batch g = Batch::load_unaligned(dyr + j) * Batch::load_unaligned(gamma + j);
            const Batch xhat = (Batch::load_unaligned(xr + j) - vm[r]) * vrs[r];
            (vrs[r] * (g - vg - xhat * vgx)).store_unaligned(dxr + j);
        }
        for (; j < cols; ++j) {
            const float xhat = (xr[j] - mean[r]) * rstd[r];
            dxr[j] = rstd[r] * (dyr[j] * gamma[j] - mean_g[r] - xhat * mean_gx[r]);
        }
    }
}

// x, dy, dx: (rows, cols); gamma: (cols); mean, rstd: (rows).
template <class Arch>
void layer_norm_backward_rows(const float* x, const float* gamma, const float* mean, const float* rstd,
                              const float* dy, float* dx, std::size_t rows, std::size_t cols) {
    constexpr std::size_t R = 4;
    if (cols == 0) return;
    std::size_t r = 0;
    for (; r + R <= rows; r += R) {
        layer_norm_backward_block<Arch, R>(x + r * cols, gamma, mean + r, rstd + r, dy + r * cols, dx + r * cols, cols);
    }
    for (; r < rows; ++r) {
        layer_norm_backward_block<Arch, 1>(x + r * cols, gamma, mean + r, rstd + r, dy + r * cols, dx + r * cols, cols);
    }
}

// ---- the LSTM cell (Hochreiter & Schmidhuber 1997; gates in torch.nn.LSTM's order i, f, g, o) ----
// Each function is written once on a batch type V: the vector body uses simd::Batch<Arch>, the
// scalar tail simd::ScalarBatch, so both compute the same formula.

// σ(a) = 1 / (1 + e^(-a)). e^(-a) overflows to +inf for a < -88.7: the quotient is then 0.
template <class V>
inline V lstm_sigmoid(const V& a) {
    const V one(1.0f);
    return one / (one + simd::exp(V(0.0f) - a));
}
// tanh(a) = 1 - 2 / (e^(2a) + 1): ±1 when e^(2a) overflows or underflows, and within a few
// float ulps of 1 of the true value everywhere (the absolute error, not the relative one near 0).
template <class V>
inline V lstm_tanh(const V& a) {
    const V one(1.0f), two(2.0f);
    return one - two / (simd::exp(two * a) + one);
}

// One lane group of the cell forward at column j of a row: the four pre-activations a_i, a_f,
// a_g, a_o (gate k at column k·H + j) become i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o)
// in place, then c = f·c_prev + i·g, tanh_c = tanh(c), h = o·tanh_c.
template <class V>
inline void lstm_cell_forward_at(float* gates, const float* c_prev, float* c, float* tanh_c, float* h,
                                 std::size_t j, std::size_t hidden) {
    const V i = lstm_sigmoid(V::load_unaligned(gates + j));
    const V f = lstm_sigmoid(V::load_unaligned(gates + hidden + j));
    const V g = lstm_tanh(V::load_unaligned(gates + 2 * hidden + j));
    const V o = lstm_sigmoid(V::load_unaligned(gates + 3 * hidden + j));
    const V cj = f * V::load_unaligned(c_prev + j) + i * g;
    const V tc = lstm_tanh(cj);
    i.store_unaligned(gates + j);
    f.store_unaligned(gates + hidden + j);
    g.store_unaligned(gates + 2 * hidden + j);
    o.store_unaligned(gates + 3 * hidden + j);
    cj.store_unaligned(c + j);
    tc.store_unaligned(tanh_c + j);
    (o * tc).store_unaligned(h + j);
}

// gates: (rows, 4H) pre-activations in, activations out; c_prev, c, tanh_c, h: (rows, H).
template <class Arch>
void lstm_cell_forward(float* gates, const float* c_prev, float* c, float* tanh_c, float* h, std::size_t rows,
                       std::size_t hidden) {
    constexpr std::size_t W = simd::Batch<Arch>::size;
    for (std::size_t r = 0; r < rows; ++r) {
        float* gr = gates + r * 4 * hidden;
        const std::size_t o = r * hidden;
        std::size_t j = 0;
        for (; j + W <= hidden; j += W) {
            lstm_cell_forward_at<simd::Batch<Arch>>(gr, c_prev + o, c + o, tanh_c + o, h + o, j, hidden);
        }
        for (; j < hidden; ++j) lstm_cell_forward_at<simd::ScalarBatch>(gr, c_prev + o, c + o, tanh_c + o, h + o, j, hidden);
    }
}

// Differentiates lstm_cell_forward_at at column j. With dh the gradient of h and dc that of c
// from the step after (in), dc_t = dc + dh·o·(1 - tanh_c²), and the pre-activation gradients
//   da_i = dc_t·g·i(1 - i),  da_f = dc_t·c_prev·f(1 - f),  da_g = dc_t·i·(1 - g²),
//   da_o = dh·tanh_c·o(1 - o);
// dc becomes the gradient of c_prev: dc_t·f (out).
template <class V>
inline void lstm_cell_backward_at(const float* gates, const float* c_prev, const float* tanh_c, const float* dh,
                                  float* dc, float* dgates, std::size_t j, std::size_t hidden) {
    const V one(1.0f);
    const V i = V::load_unaligned(gates + j);
    const V f = V::load_unaligned(gates + hidden + j);
    const V g = V::load_unaligned(gates + 2 * hidden + j);
    const V o = V::load_unaligned(gates + 3 * hidden + j);
    const V tc = V::load_unaligned(tanh_c + j);
    const V dhj = V::load_unaligned(dh + j);
    const V dct = V::load_unaligned(dc + j) + dhj * o * (one - tc * tc);
    (dct * g * i * (one - i)).store_unaligned(dgates + j);
    (dct * V::load_unaligned(c_prev + j) * f * (one - f)).store_unaligned(dgates + hidden + j);
    (dct * i * (one - g * g)).store_unaligned(dgates + 2 * hidden + j);
    (dhj * tc * o * (one - o)).store_unaligned(dgates + 3 * hidden + j);
    (dct * f).store_unaligned(dc + j);
}

// gates (activations), dgates: (rows, 4H); c_prev, tanh_c, dh, dc: (rows, H).
template <class Arch>
void lstm_cell_backward(const float* gates, const float* c_prev, const float* tanh_c, const float* dh, float* dc,
                        float* dgates, std::size_t rows, std::size_t hidden) {
    constexpr std::size_t W = simd::Batch<Arch>::size;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* gr = gates + r * 4 * hidden;
        float* dgr = dgates + r * 4 * hidden;
        const std::size_t o = r * hidden;
        std::size_t j = 0;
        for (; j + W <= hidden; j += W) {
            lstm_cell_backward_at<simd::Batch<Arch>>(gr, c_prev + o, tanh_c + o, dh + o, dc + o, dgr, j, hidden);
        }
        for (; j < hidden; ++j) {
            lstm_cell_backward_at<simd::ScalarBatch>(gr, c_prev + o, tanh_c + o, dh + o, dc + o, dgr, j, hidden);
        }
    }
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
