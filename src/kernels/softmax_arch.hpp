// src/kernels/softmax_arch.hpp (private): row softmax, its backward, and the two per-tile steps
// of FlashAttention, one template per architecture (see simd.hpp). softmax.cpp and
// src/attention/flash/ hold validation and threading.
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
#include <type_traits>

#include "attnlab/attention/normalizer.hpp"
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

// R rows of (rows, cols) with ld at once, each overwritten by softmax(x), x = scale·s when
// Scaled (masked -inf entries stay -inf) and s itself otherwise: the row max, p = exp(x - max)
// summed in vector order, then p·(1/sum). softmax_rows (the recorded path, on scores already
// scaled and masked) and softmax_tile (the one-tile flash forward) both run it, so the two
// paths are bit-identical by construction. The R rows are independent chains for an
// out-of-order core (one row of 64 keys is only 4 AVX-512 vectors: alone, its max and sum
// reductions and their latencies would be most of its time). A row whose entries are all -inf gets
// zeros. row_max, row_sum (R each, or null): max x and Σ exp(x - max) per row (-inf and 0 for
// such a row).
template <class Arch, std::size_t R, bool Scaled>
void softmax_tile_rows(float* s, std::size_t cols, std::size_t ld, float scale, float* row_max, float* row_sum) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    const Batch vscale(scale);
    const SoftmaxExp<Arch> exp;
    const std::size_t full = cols / W * W;
    Batch vmax[R];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) vmax[r] = Batch(kNegInf);
    for (std::size_t j = 0; j < full; j += W) {
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            float* x = s + r * ld + j;
            Batch v = Batch::load_unaligned(x);
            if constexpr (Scaled) {
                v = scaled_scores<Arch>(v, vscale);
                v.store_unaligned(x);
            }
            vmax[r] = simd::max(vmax[r], v);
        }
    }
    float m[R];
    Batch ref[R], vsum[R];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        float* x = s + r * ld;
        m[r] = simd::max_lane(vmax[r]);
        for (std::size_t j = full; j < cols; ++j) {
            if constexpr (Scaled) x[j] = x[j] > kNegInf ? x[j] * scale : kNegInf;
            m[r] = simd::max_float(m[r], x[j]);
        }
        // A row with every key masked (m = -inf) subtracts 0 instead: its p are exp(-inf) = 0.
        ref[r] = Batch(m[r] == kNegInf ? 0.0f : m[r]);
        vsum[r] = Batch(0.0f);
    }
    for (std::size_t j = 0; j < full; j += W) {
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            float* x = s + r * ld + j;
            const Batch e = exp(Batch::load_unaligned(x) - ref[r]);
            e.store_unaligned(x);
            vsum[r] += e;
        }
    }
    float inv[R];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        float* x = s + r * ld;
        float sum = simd::hadd(vsum[r]);
        const float mr = m[r] == kNegInf ? 0.0f : m[r];
        for (std::size_t j = full; j < cols; ++j) {
            x[j] = softmax_exp(x[j] - mr);
            sum += x[j];
        }
        if (row_max) row_max[r] = m[r];
        if (row_sum) row_sum[r] = m[r] == kNegInf ? 0.0f : sum;
        inv[r] = m[r] == kNegInf ? 0.0f : 1.0f / sum;  // sum >= 1 otherwise; masked rows stay 0
    }
    for (std::size_t j = 0; j < full; j += W) {
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            float* x = s + r * ld + j;
            (Batch::load_unaligned(x) * Batch(inv[r])).store_unaligned(x);
        }
    }
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t j = full; j < cols; ++j) s[r * ld + j] *= inv[r];
    }
}

// The softmax of FlashAttention's forward when all keys fit one tile: s (rows, cols) with ld
// holds raw scores q·kᵀ, masked entries -inf. Per row r: p = softmax(scale·s) written over s,
// row_max[r] = max scale·s and row_sum[r] = Σ exp(scale·s - row_max[r]) (for the logsumexp);
// a row with every key masked gets p = 0, row_max -inf and row_sum 0.
template <class Arch>
void softmax_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float scale, float* row_max,
                  float* row_sum) {
    constexpr std::size_t R = 4;
    std::size_t r = 0;
    for (; r + R <= rows; r += R) {
        softmax_tile_rows<Arch, R, true>(s + r * ld, cols, ld, scale, row_max + r, row_sum + r);
    }
    for (; r < rows; ++r) softmax_tile_rows<Arch, 1, true>(s + r * ld, cols, ld, scale, row_max + r, row_sum + r);
}

// x: (rows, cols) with ld, each row overwritten by its softmax (rows of -inf become zeros).
template <class Arch>
void softmax_rows(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
    constexpr std::size_t R = 4;
    std::size_t r = 0;
    for (; r + R <= rows; r += R) softmax_tile_rows<Arch, R, false>(x + r * ld, cols, ld, 1.0f, nullptr, nullptr);
    for (; r < rows; ++r) softmax_tile_rows<Arch, 1, false>(x + r * ld, cols, ld, 1.0f, nullptr, nullptr);
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

// The pointwise normalisers of attention (attention/normalizer.hpp) on a scaled score s (-inf
// where masked) of a row with n visible keys: sigmoid w = σ(s − ln n) = 1 / (1 + n·e^(−s)),
// relu w = max(s, 0)·(1/n); 0 for a row with n = 0. e^(−s) overflows to +inf for masked and
// very negative scores, giving w = 0 exactly. The scalar form is the tails'. A new pointwise
// normaliser is one case in each of the two forms.
template <Normalizer F>
inline float pointwise_weight(float s, float n) {
    if (!(n > 0.0f)) return 0.0f;
    if constexpr (F == Normalizer::sigmoid) {
        return 1.0f / (1.0f + n * std::exp(-s));
    } else if constexpr (F == Normalizer::relu) {
        return (s > 0.0f ? s : 0.0f) * (1.0f / n);
    } else {
        static_assert(F == Normalizer::sigmoid, "no pointwise weight for this normaliser (softmax: softmax_rows)");
        return 0.0f;
    }
}
template <class Arch, Normalizer F>
simd::Batch<Arch> pointwise_weight(const simd::Batch<Arch>& s, const simd::Batch<Arch>& n) {
    using Batch = simd::Batch<Arch>;
    const Batch zero(0.0f), one(1.0f);
    if constexpr (F == Normalizer::sigmoid) {
        return simd::select(n > zero, one / (one + n * simd::exp(zero - s)), zero);
    } else if constexpr (F == Normalizer::relu) {
        return simd::max(s, zero) * simd::select(n > zero, one / n, zero);
    } else {
        static_assert(F == Normalizer::sigmoid, "no pointwise weight for this normaliser (softmax: softmax_rows)");
        return zero;
    }
}

// Calls body(std::integral_constant<Normalizer, F>{}) for the pointwise normaliser f, so each
// loop below is compiled once per normaliser; softmax (not pointwise) does nothing.
template <class Body>
void with_pointwise(Normalizer f, Body&& body) {
    switch (f) {
        case Normalizer::sigmoid: body(std::integral_constant<Normalizer, Normalizer::sigmoid>{}); return;
        case Normalizer::relu: body(std::integral_constant<Normalizer, Normalizer::relu>{}); return;
        case Normalizer::softmax: return;
    }
}

// x: (rows, cols) with ld -> the weights, in place; visible: (rows) each row's n.
template <class Arch>
void pointwise_weight_rows(Normalizer f, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                           const float* visible) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    with_pointwise(f, [&](auto kind) {
        constexpr Normalizer F = decltype(kind)::value;
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = x + r * ld;
            const Batch n(visible[r]);
            std::size_t j = 0;
            for (; j + W <= cols; j += W) pointwise_weight<Arch, F>(Batch::load_unaligned(row + j), n).store_unaligned(row + j);
            for (; j < cols; ++j) row[j] = pointwise_weight<F>(row[j], visible[r]);
        }
    });
}

// The same on a tile stored keys by queries: x (cols, ld), x[c·ld + r] query r's score of key c.
template <class Arch>
void pointwise_weight_columns(Normalizer f, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                              const float* visible) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    with_pointwise(f, [&](auto kind) {
        constexpr Normalizer F = decltype(kind)::value;
        for (std::size_t c = 0; c < cols; ++c) {
            float* col = x + c * ld;
            std::size_t r = 0;
            for (; r + W <= rows; r += W) {
                pointwise_weight<Arch, F>(Batch::load_unaligned(col + r), Batch::load_unaligned(visible + r))
                    .store_unaligned(col + r);
            }
            for (; r < rows; ++r) col[r] = pointwise_weight<F>(col[r], visible[r]);
        }
    });
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
