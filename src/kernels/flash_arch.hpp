// src/kernels/flash_arch.hpp (private): the two products of FlashAttention's forward tile loop
// as register-blocked micro-kernels on pre-packed keys and values, one template per
// architecture (see simd.hpp for the tags and the rule on what may be used here).
// attention/flash_attention.cpp holds the loop over tiles, the masks, the online softmax step
// (softmax_arch.hpp) and the threading; kernels/flash_tiles.hpp is the public face.
//
// Why not the general matmul: a score tile is (br, D)·(D, bc) with D = 32..128 and its product
// with V is (br, bc)·(bc, Dv). matmul() would pack the same key and value tiles again for every
// query tile and run its whole loop nest per call. Here K and V are packed once per head, in the
// layout the micro-kernels stream, and q rows and probabilities are read in place (their
// broadcasts come straight from memory), so the tile loop is just micro-kernel calls.
//
// Legend: R rows of a micro-tile (<= MR), NR = NV vectors of W floats = keys of a packed key
// strip and columns of a packed value strip; D head dim of q and k; Dv of v, Dp = Dv rounded up
// to NR.
#pragma once

#include "kernel_table.hpp"
#include "simd.hpp"

namespace attnlab {
namespace kernels {
namespace arch {

template <class Arch>
struct FlashShape {
    using Batch = simd::Batch<Arch>;
    static constexpr std::size_t W = Batch::size;
    static constexpr std::size_t MR = kMatmulMR;  // 6 rows x 2 vectors: 12 accumulators,
    static constexpr std::size_t NV = 2;          // 2 loaded vectors, 1 broadcast (16 registers)
    static constexpr std::size_t NR = NV * W;
};

// k: (keys, D) row-major -> kp: (ceil(keys / NR), D, NR), kp[(s·D + p)·NR + j] = k[s·NR + j][p],
// zero for keys past the end (their scores are computed and ignored).
template <class Arch>
void flash_pack_keys(const float* k, std::size_t keys, std::size_t d, float* kp) {
    constexpr std::size_t NR = FlashShape<Arch>::NR;
    for (std::size_t s = 0; s * NR < keys; ++s) {
        float* dst = kp + s * d * NR;
        const std::size_t n = simd::min_size(NR, keys - s * NR);
        for (std::size_t j = 0; j < n; ++j) {
            const float* src = k + (s * NR + j) * d;
            for (std::size_t p = 0; p < d; ++p) dst[p * NR + j] = src[p];
        }
        for (std::size_t j = n; j < NR; ++j) {
            for (std::size_t p = 0; p < d; ++p) dst[p * NR + j] = 0.0f;
        }
    }
}

// v: (keys, Dv) row-major -> vp: (keys, Dp), Dp a multiple of NR, zero in columns [Dv, Dp).
template <class Arch>
void flash_pack_values(const float* v, std::size_t keys, std::size_t dv, std::size_t dp, float* vp) {
    for (std::size_t j = 0; j < keys; ++j) {
        const float* src = v + j * dv;
        float* dst = vp + j * dp;
        std::size_t c = 0;
        for (; c < dv; ++c) dst[c] = src[c];
        for (; c < dp; ++c) dst[c] = 0.0f;
    }
}

// s (R, NR) with ld = scale · q (R, D) with ld D · one packed key strip (D, NR).
template <class Arch, std::size_t R>
void scores_micro_kernel(const float* q, std::size_t d, const float* strip, float scale, float* s, std::size_t ld) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NR = S::NR, NV = S::NV, W = S::W;
    Batch acc[R][NV];
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch(0.0f);
    }
    for (std::size_t p = 0; p < d; ++p) {
        Batch kv[NV];
        for (std::size_t v = 0; v < NV; ++v) kv[v] = Batch::load_unaligned(strip + p * NR + v * W);
        for (std::size_t r = 0; r < R; ++r) {
            const Batch qv(q[r * d + p]);
            for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(qv, kv[v], acc[r][v]);
        }
    }
    const Batch vscale(scale);
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) (acc[r][v] * vscale).store_unaligned(s + r * ld + v * W);
    }
}

// o (R, NR) with ldo += p (R, cols) with ld · one column strip of packed values (cols, NR)
// with row stride dp.
template <class Arch, std::size_t R>
void pv_micro_kernel(const float* p, std::size_t ld, std::size_t cols, const float* vstrip, std::size_t dp, float* o,
                     std::size_t ldo) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NV = S::NV, W = S::W;
    Batch acc[R][NV];
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch::load_unaligned(o + r * ldo + v * W);
    }
    for (std::size_t j = 0; j < cols; ++j) {
        Batch vv[NV];
        for (std::size_t v = 0; v < NV; ++v) vv[v] = Batch::load_unaligned(vstrip + j * dp + v * W);
        for (std::size_t r = 0; r < R; ++r) {
            const Batch pv(p[r * ld + j]);
            for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(pv, vv[v], acc[r][v]);
        }
    }
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_unaligned(o + r * ldo + v * W);
    }
}

// s (rows, strips·NR) with ld = scale · q (rows, D) with ld D · kp (strips of (D, NR))ᵀ: the
// scores of `rows` queries against strips·NR packed keys, micro-tile by micro-tile.
template <class Arch>
void flash_scores(const float* q, std::size_t rows, std::size_t d, const float* kp, std::size_t strips, float scale,
                  float* s, std::size_t ld) {
    constexpr std::size_t MR = FlashShape<Arch>::MR, NR = FlashShape<Arch>::NR;
    static_assert(MR == 6, "update the row dispatch when MR changes");
    for (std::size_t i = 0; i < rows; i += MR) {
        const float* qi = q + i * d;
        float* si = s + i * ld;
        const std::size_t r = simd::min_size(MR, rows - i);
        for (std::size_t st = 0; st < strips; ++st) {
            const float* strip = kp + st * d * NR;
            float* out = si + st * NR;
            switch (r) {
                case 6: scores_micro_kernel<Arch, 6>(qi, d, strip, scale, out, ld); break;
                case 5: scores_micro_kernel<Arch, 5>(qi, d, strip, scale, out, ld); break;
                case 4: scores_micro_kernel<Arch, 4>(qi, d, strip, scale, out, ld); break;
                case 3: scores_micro_kernel<Arch, 3>(qi, d, strip, scale, out, ld); break;
                case 2: scores_micro_kernel<Arch, 2>(qi, d, strip, scale, out, ld); break;
                default: scores_micro_kernel<Arch, 1>(qi, d, strip, scale, out, ld); break;
            }
        }
    }
}

// One key tile of the online softmax in base 2 (FlashAttention's lines 9-10 with exp2; the
// scores arrive multiplied by log2(e)·scale, so exp(x - m) = 2^(t - m₂) and no multiply is left
// in the loop). Per row r of s (rows, cols) with ld, t = s (masked entries -inf):
//   m₂' = max(m₂, max_j t_j),  p_j = 2^(t_j - m₂'),  alpha = 2^(m₂ - m₂'),
//   l = alpha · l + Σ_j p_j,   m₂ = m₂'.
// Writes p over s and alpha to rescale[r]. A row with only masked keys so far keeps m₂ = -inf,
// l = 0, p = 0 and alpha = 1. row_max holds m₂ (log2 units: the caller's logsumexp is
// ln 2 · m₂ + ln l).
template <class Arch>
void flash_softmax_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float* row_max,
                        float* row_sum, float* rescale) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    constexpr float kNegInf = -__builtin_inff();
    for (std::size_t r = 0; r < rows; ++r) {
        float* x = s + r * ld;
        Batch vmax0(kNegInf), vmax1(kNegInf);
        std::size_t j = 0;
        for (; j + 2 * W <= cols; j += 2 * W) {
            vmax0 = simd::max(vmax0, Batch::load_unaligned(x + j));
            vmax1 = simd::max(vmax1, Batch::load_unaligned(x + j + W));
        }
        for (; j + W <= cols; j += W) vmax0 = simd::max(vmax0, Batch::load_unaligned(x + j));
        alignas(64) float lanes[W];
        simd::max(vmax0, vmax1).store_aligned(lanes);
        float tile_max = kNegInf;
        for (std::size_t l = 0; l < W; ++l) tile_max = simd::max_float(tile_max, lanes[l]);
        for (; j < cols; ++j) tile_max = simd::max_float(tile_max, x[j]);
        const float m_old = row_max[r];
        const float m_new = simd::max_float(m_old, tile_max);
        if (m_new == kNegInf) {
            for (j = 0; j < cols; ++j) x[j] = 0.0f;
            rescale[r] = 1.0f;
            continue;
        }
        const Batch vm(m_new);
        Batch vsum0(0.0f), vsum1(0.0f);
        for (j = 0; j + 2 * W <= cols; j += 2 * W) {
            const Batch e0 = simd::exp2_nonpositive(Batch::load_unaligned(x + j) - vm);
            const Batch e1 = simd::exp2_nonpositive(Batch::load_unaligned(x + j + W) - vm);
            e0.store_unaligned(x + j);
            e1.store_unaligned(x + j + W);
            vsum0 += e0;
            vsum1 += e1;
        }
        for (; j + W <= cols; j += W) {
            const Batch e = simd::exp2_nonpositive(Batch::load_unaligned(x + j) - vm);
            e.store_unaligned(x + j);
            vsum0 += e;
        }
        float sum = simd::hadd(vsum0 + vsum1);
        for (; j < cols; ++j) {
            x[j] = x[j] == kNegInf ? 0.0f : std::exp2(x[j] - m_new);
            sum += x[j];
        }
        const float alpha = m_old == kNegInf ? 0.0f : std::exp2(m_old - m_new);
        row_sum[r] = alpha * row_sum[r] + sum;
        row_max[r] = m_new;
        rescale[r] = alpha;
    }
}

// o (rows, Dp) with ld dp += p (rows, cols) with ld · vp (cols, Dp): the probabilities of one
// key tile times its packed values, accumulated into the output rows.
template <class Arch>
void flash_accumulate_pv(const float* p, std::size_t ld, std::size_t rows, std::size_t cols, const float* vp,
                         std::size_t dp, float* o) {
    constexpr std::size_t MR = FlashShape<Arch>::MR, NR = FlashShape<Arch>::NR;
    for (std::size_t i = 0; i < rows; i += MR) {
        const float* pi = p + i * ld;
        float* oi = o + i * dp;
        const std::size_t r = simd::min_size(MR, rows - i);
        for (std::size_t c = 0; c < dp; c += NR) {
            switch (r) {
                case 6: pv_micro_kernel<Arch, 6>(pi, ld, cols, vp + c, dp, oi + c, dp); break;
                case 5: pv_micro_kernel<Arch, 5>(pi, ld, cols, vp + c, dp, oi + c, dp); break;
                case 4: pv_micro_kernel<Arch, 4>(pi, ld, cols, vp + c, dp, oi + c, dp); break;
                case 3: pv_micro_kernel<Arch, 3>(pi, ld, cols, vp + c, dp, oi + c, dp); break;
                case 2: pv_micro_kernel<Arch, 2>(pi, ld, cols, vp + c, dp, oi + c, dp); break;
                default: pv_micro_kernel<Arch, 1>(pi, ld, cols, vp + c, dp, oi + c, dp); break;
            }
        }
    }
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
