// src/kernels/softmax_arch.hpp (private): row softmax, its backward, and the two per-tile steps
// of FlashAttention, one template per architecture (see simd.hpp). softmax.cpp and
// attention/flash_attention.cpp hold validation and threading.
//
// Legend: rows = independent softmax problems, cols = entries per row, ld = floats between rows.
//
// Stability: y_j = exp(x_j - max) / Σ exp(x_i - max). Subtracting the row max makes every
// exponent <= 0, so exp never overflows and the sum is >= 1 (the max entry contributes
// exp(0) = 1): finite input can give neither Inf nor NaN. Masked entries are -inf and
// exp(-inf - max) = 0 exactly. A row with no finite entry has max = -inf; there x - max would be
// NaN, so such a row is defined as all zeros (attention to nothing).
#pragma once

#include <cmath>
#include <limits>

#include "simd.hpp"

namespace attnlab {
namespace kernels {
namespace arch {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kLog2eF = 1.44269504088896341f;

// exp(x) for the arguments of a softmax, x <= 0 up to rounding (x - max, scaled - lse):
// 2^(x·log2 e) by simd::Exp2NonPositive (no conversions, 2.4e-7 relative error on top of the
// rounding of x·log2 e), about half the operations of the general exp, whose range handling a
// softmax never needs. exp(-inf) = 0 exactly (masked weights stay 0). The recorded path's row
// softmax and the one-tile FlashAttention forward both use it, so they stay bit-identical.
template <class Arch>
struct SoftmaxExp {
    using Batch = simd::Batch<Arch>;
    simd::Exp2NonPositive<Arch> exp2;
    Batch log2e = Batch(kLog2eF);  // (a braced Batch{x} would be xsimd's per-lane constructor)
    Batch operator()(const Batch& x) const { return exp2(x * log2e); }
};
// The same for one float (the tails): 2^(x·log2 e), 0 below 2^-127 like the vector form.
// static, like simd.hpp's scalar helpers: each ISA's file keeps its own copy.
static inline float softmax_exp(float x) {
    const float t = x * kLog2eF;
    return t < -127.0f ? 0.0f : std::exp2(t);
}

// max_j x[j] over n floats; -inf when n == 0 or every entry is -inf.
template <class Arch>
float row_max(const float* x, std::size_t n) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    Batch vmax(kNegInf);
    std::size_t j = 0;
    for (; j + W <= n; j += W) vmax = simd::max(vmax, Batch::load_unaligned(x + j));
    float best = simd::max_lane(vmax);
    for (; j < n; ++j) best = simd::max_float(best, x[j]);
    return best;
}

// x: (n), overwritten by softmax(x).
template <class Arch>
void softmax_row(float* x, std::size_t n) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const float max = row_max<Arch>(x, n);
    if (max == kNegInf) {  // every entry masked: no weight anywhere (and n == 0 is a no-op)
        for (std::size_t j = 0; j < n; ++j) x[j] = 0.0f;
        return;
    }
    const Batch vmax(max);
    const SoftmaxExp<Arch> exp;
    Batch vsum(0.0f);
    std::size_t j = 0;
    for (; j + W <= n; j += W) {
        const Batch e = exp(Batch::load_unaligned(x + j) - vmax);
        e.store_unaligned(x + j);
        vsum += e;
    }
    float sum = simd::hadd(vsum);
    for (; j < n; ++j) {
        x[j] = softmax_exp(x[j] - max);
        sum += x[j];
    }
    const float inv = 1.0f / sum;  // sum >= 1
    const Batch vinv(inv);
    j = 0;
    for (; j + W <= n; j += W) (Batch::load_unaligned(x + j) * vinv).store_unaligned(x + j);
    for (; j < n; ++j) x[j] *= inv;
}

// y, dy, dx: (n); dx = y ⊙ (dy - Σ_j dy_j y_j), dx may alias dy.
template <class Arch>
void softmax_row_backward(const float* y, const float* dy, float* dx, std::size_t n) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    Batch vdot(0.0f);
    std::size_t j = 0;
    for (; j + W <= n; j += W) {
        vdot = simd::fma(Batch::load_unaligned(dy + j), Batch::load_unaligned(y + j), vdot);
    }
    float dot = simd::hadd(vdot);
    for (; j < n; ++j) dot += dy[j] * y[j];
    // All of dy has been read: writing dx (possibly dy itself) is safe from here on.
    const Batch vdot_all(dot);
    j = 0;
    for (; j + W <= n; j += W) {
        const Batch yv = Batch::load_unaligned(y + j);
        (yv * (Batch::load_unaligned(dy + j) - vdot_all)).store_unaligned(dx + j);
    }
    for (; j < n; ++j) dx[j] = y[j] * (dy[j] - dot);
}

// x: (rows, cols) with ld, each row overwritten by its softmax.
template <class Arch>
void softmax_rows(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
    for (std::size_t r = 0; r < rows; ++r) softmax_row<Arch>(x + r * ld, cols);
}

template <class Arch>
void softmax_rows_backward(const float* y, const float* dy, float* dx, std::size_t rows, std::size_t cols,
                           std::size_t ld) {
    for (std::size_t r = 0; r < rows; ++r) softmax_row_backward<Arch>(y + r * ld, dy + r * ld, dx + r * ld, cols);
}

// scale · s, keeping masked entries (-inf) at -inf whatever the sign of scale.
template <class Arch>
inline simd::Batch<Arch> scaled_scores(const simd::Batch<Arch>& s, const simd::Batch<Arch>& scale) {
    using Batch = simd::Batch<Arch>;
    return simd::select(s > Batch(kNegInf), s * scale, Batch(kNegInf));
}

// One key tile of FlashAttention's online softmax (Dao et al. 2022, Algorithm 1, lines 9-10;
// Milakov & Gimelshein 2018), per row r of the tile s (rows, cols) with ld:
//   x = scale · s (masked entries are -inf on entry and stay -inf),
//   m' = max(m_r, max_j x_j),  p_j = exp(x_j - m'),  alpha = exp(m_r - m')  (SoftmaxExp),
//   l_r = alpha · l_r + Σ_j p_j,  m_r = m'.
// Writes p over s and alpha to rescale[r] (the caller multiplies its output accumulator row by
// alpha before adding p·V). A row that has seen only masked keys so far keeps m = -inf, l = 0,
// gets p = 0 and alpha = 1 (its accumulator is still zero).
template <class Arch>
void online_softmax_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float scale, float* row_max,
                         float* row_sum, float* rescale) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const Batch vscale(scale);
    const SoftmaxExp<Arch> exp;
    for (std::size_t r = 0; r < rows; ++r) {
        float* x = s + r * ld;
        Batch vmax(kNegInf);
        std::size_t j = 0;
        for (; j + W <= cols; j += W) {
            const Batch v = scaled_scores<Arch>(Batch::load_unaligned(x + j), vscale);
            v.store_unaligned(x + j);
            vmax = simd::max(vmax, v);
        }
        float tile_max = simd::max_lane(vmax);
        for (; j < cols; ++j) {
            x[j] = x[j] > kNegInf ? x[j] * scale : kNegInf;
            tile_max = simd::max_float(tile_max, x[j]);
        }
        const float m_old = row_max[r];
        const float m_new = simd::max_float(m_old, tile_max);
        if (m_new == kNegInf) {
            for (j = 0; j < cols; ++j) x[j] = 0.0f;
            rescale[r] = 1.0f;
            continue;
        }
        const Batch vm(m_new);
        Batch vsum(0.0f);
        for (j = 0; j + W <= cols; j += W) {
            const Batch e = exp(Batch::load_unaligned(x + j) - vm);
            e.store_unaligned(x + j);
            vsum += e;
        }
        float sum = simd::hadd(vsum);
        for (; j < cols; ++j) {
            x[j] = softmax_exp(x[j] - m_new);
            sum += x[j];
        }
        const float alpha = softmax_exp(m_old - m_new);  // 0 when m_old = -inf
        row_sum[r] = alpha * row_sum[r] + sum;
        row_max[r] = m_new;
        rescale[r] = alpha;
    }
}

// One (query tile, key tile) of FlashAttention's backward (Dao et al. 2022, Algorithm 4, lines
// 13-20; Dao 2023, Algorithm 2), per row r, with s = raw scores q·kᵀ (masked entries -inf) and
// dp = dO·vᵀ, both (rows, cols) with ld:
//   p_j  = exp(scale · s_j - lse_r)              (0 for masked keys, and for rows with lse = -inf)
//   ds_j = scale · p_j · (dp_j - delta_r),  delta_r = Σ_d dO_rd · O_rd
// Writes p over s (for dV += pᵀ·dO) and ds over dp (for dQ += ds·k, dK += dsᵀ·q): ds is the
// gradient of the raw scores, the scale of `scaled = scores · scale` already applied.
template <class Arch>
void flash_backward_tile(float* s, float* dp, std::size_t rows, std::size_t cols, std::size_t ld, float scale,
                         const float* lse, const float* delta) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const Batch vscale(scale);
    const SoftmaxExp<Arch> exp;
    for (std::size_t r = 0; r < rows; ++r) {
        float* x = s + r * ld;
        float* g = dp + r * ld;
        if (lse[r] == kNegInf) {  // every key masked: zero weights, zero gradient
            for (std::size_t j = 0; j < cols; ++j) x[j] = g[j] = 0.0f;
            continue;
        }
        const Batch vlse(lse[r]), vdelta(delta[r]);
        std::size_t j = 0;
        for (; j + W <= cols; j += W) {
            const Batch p = exp(scaled_scores<Arch>(Batch::load_unaligned(x + j), vscale) - vlse);
            p.store_unaligned(x + j);
            ((Batch::load_unaligned(g + j) - vdelta) * p * vscale).store_unaligned(g + j);
        }
        for (; j < cols; ++j) {
            const float p = softmax_exp((x[j] > kNegInf ? x[j] * scale : kNegInf) - lse[r]);
            x[j] = p;
            g[j] = (g[j] - delta[r]) * p * scale;
        }
    }
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
