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

#include <type_traits>

namespace attnlab {
namespace kernels {
namespace arch {

template <class Arch>
struct FlashShape {
    using Batch = simd::Batch<Arch>;
    static constexpr std::size_t W = Batch::size;
#if defined(__wasm_simd128__)
    // WebAssembly has no FMA: a multiply-add needs a product temporary, and V8 keeps one of
    // x64's 16 vector registers as scratch, so 6 x 2 accumulators spill. Measured in Node 20,
    // attention n = 2048: MR = 4 runs in 82 ms, MR = 5 in 115 ms, MR = 6 in 125 ms.
    static constexpr std::size_t MR = 4;
#else
    static constexpr std::size_t MR = 6;  // 6 rows x 2 vectors: 12 accumulators,
#endif
    static constexpr std::size_t NV = 2;  // 2 loaded vectors, 1 broadcast (16 registers)
    static constexpr std::size_t NR = NV * W;
#if defined(__wasm_simd128__)
    // p·V broadcasts p[r][j] for R rows per key. x86 addresses row-major p in one instruction
    // ([row + j·4]); WebAssembly computes every address with integer ops, and V8's loop was
    // front-end bound on them. There p is first copied into key-major groups (pp[j·MR + r]), so
    // the R broadcasts of a key sit at constant offsets from one pointer.
    static constexpr bool kPackProbabilities = true;
    // One key strip per score micro-kernel call: with the strip loop inside the kernel V8's
    // code ran 3% slower (measured, n = 2048); native compilers keep the accumulators in
    // registers only with the loop inside (a call per strip spilled them to the stack).
    static constexpr bool kOneStripPerCall = true;
#else
    static constexpr bool kOneStripPerCall = false;
    static constexpr bool kPackProbabilities = false;
#endif
    static constexpr std::size_t kProbabilityChunk = 128;  // keys per packed chunk (on the stack)
};

// Runs kernel(std::integral_constant<size_t, R>) for R = rows (1..MR), so each row count gets
// its own fully unrolled micro-kernel.
template <std::size_t MR, class Kernel>
inline void dispatch_rows(std::size_t rows, const Kernel& kernel) {
    static_assert(MR >= 1 && MR <= 6, "dispatch_rows handles up to 6 rows");
    switch (rows) {
        case 6: if constexpr (MR >= 6) kernel(std::integral_constant<std::size_t, 6>{}); break;
        case 5: if constexpr (MR >= 5) kernel(std::integral_constant<std::size_t, 5>{}); break;
        case 4: if constexpr (MR >= 4) kernel(std::integral_constant<std::size_t, 4>{}); break;
        case 3: if constexpr (MR >= 3) kernel(std::integral_constant<std::size_t, 3>{}); break;
        case 2: if constexpr (MR >= 2) kernel(std::integral_constant<std::size_t, 2>{}); break;
        default: kernel(std::integral_constant<std::size_t, 1>{}); break;
    }
}

// x: (rows, D) row-major -> xp: (ceil(rows / G), D, G), xp[(g·D + p)·G + r] = scale · x[g·G + r][p],
// zero for rows past the end: the G rows of one p are adjacent. Keys use G = NR (scale 1, exact),
// queries G = MR. A template on Arch too, so each ISA's file gets its own symbol (simd.hpp).
template <class Arch, std::size_t G>
void pack_row_groups(const float* x, std::size_t rows, std::size_t d, float scale, float* xp) {
    for (std::size_t g = 0; g * G < rows; ++g) {
        float* dst = xp + g * d * G;
        const std::size_t n = simd::min_size(G, rows - g * G);
        for (std::size_t r = 0; r < n; ++r) {
            const float* src = x + (g * G + r) * d;
            for (std::size_t p = 0; p < d; ++p) dst[p * G + r] = scale * src[p];
        }
        for (std::size_t r = n; r < G; ++r) {
            for (std::size_t p = 0; p < d; ++p) dst[p * G + r] = 0.0f;
        }
    }
}

// k: (keys, D) row-major -> kp: (ceil(keys / NR), D, NR), kp[(s·D + p)·NR + j] = k[s·NR + j][p],
// zero for keys past the end (their scores are computed and ignored).
template <class Arch>
void flash_pack_keys(const float* k, std::size_t keys, std::size_t d, float* kp) {
    pack_row_groups<Arch, FlashShape<Arch>::NR>(k, keys, d, 1.0f, kp);
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

// q: (rows, D) row-major -> qp: (ceil(rows / MR), D, MR), qp[(g·D + p)·MR + r] =
// scale · q[g·MR + r][p], zero for rows past the end: the R broadcasts of one p are adjacent.
template <class Arch>
void flash_pack_queries(const float* q, std::size_t rows, std::size_t d, float scale, float* qp) {
    pack_row_groups<Arch, FlashShape<Arch>::MR>(q, rows, d, scale, qp);
}

// s (R, strips·NR) with ld = one packed query group (D, MR), its first R rows · `strips`
// packed key strips (D, NR) each.
template <class Arch, std::size_t R>
void scores_micro_kernel(const float* qg, std::size_t d, const float* kp, std::size_t strips, float* s,
                         std::size_t ld) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NR = S::NR, NV = S::NV, W = S::W;
    // All strips in one call, the accumulators declared per strip: the compiler then keeps them
    // in registers from zeroing to store (a call per strip spilled them to the stack twice).
    for (std::size_t st = 0; st < strips; ++st, kp += d * NR, s += NR) {
        Batch acc[R][NV];
        for (std::size_t r = 0; r < R; ++r) {
            for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch(0.0f);
        }
        // Pointer bumps and constant offsets (not p·NR + v·W): WebAssembly folds constant
        // offsets into its loads, and V8 then needs no integer op per access.
        const float* kcur = kp;
        const float* qcur = qg;
        for (std::size_t p = 0; p < d; ++p, kcur += NR, qcur += S::MR) {
            Batch kv[NV];
            for (std::size_t v = 0; v < NV; ++v) kv[v] = Batch::load_unaligned(kcur + v * W);
            for (std::size_t r = 0; r < R; ++r) {
                const Batch qv(qcur[r]);
                for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(qv, kv[v], acc[r][v]);
            }
        }
        for (std::size_t r = 0; r < R; ++r) {
            for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_unaligned(s + r * ld + v * W);
        }
    }
}

// o (R, NR) with ldo += p (R, cols) · one column strip of packed values (cols, NR) with row
// stride dp; p row-major with ld, or (Packed) key-major groups from pack_probabilities,
// p[r][j] = p[j·MR + r] (ld unused).
template <class Arch, std::size_t R, bool Packed>
void pv_micro_kernel(const float* p, std::size_t ld, std::size_t cols, const float* vstrip, std::size_t dp, float* o,
                     std::size_t ldo) {
    const std::size_t row_step = Packed ? 1 : ld, key_step = Packed ? FlashShape<Arch>::MR : 1;
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NV = S::NV, W = S::W;
    Batch acc[R][NV];
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch::load_unaligned(o + r * ldo + v * W);
    }
    const float* vcur = vstrip;
    const float* pcur = p;
    for (std::size_t j = 0; j < cols; ++j, vcur += dp, pcur += key_step) {
        Batch vv[NV];
        for (std::size_t v = 0; v < NV; ++v) vv[v] = Batch::load_unaligned(vcur + v * W);
        for (std::size_t r = 0; r < R; ++r) {
            const Batch pv(pcur[r * row_step]);
            for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(pv, vv[v], acc[r][v]);
        }
    }
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_unaligned(o + r * ldo + v * W);
    }
}

// p (n <= MR rows, m keys) with ld -> pp (m, MR): pp[j·MR + r] = p[r][j] (rows past n: not
// written, and not read by the R = n micro-kernel).
template <class Arch>
void pack_probabilities(const float* p, std::size_t ld, std::size_t n, std::size_t m, float* pp) {
    constexpr std::size_t MR = FlashShape<Arch>::MR;
    std::size_t j = 0;
#if defined(__wasm_simd128__) && !defined(ATTNLAB_NO_SIMD)
    if constexpr (MR == 4) {
        // 4 x 4 blocks transposed in registers: two rounds of shuffles.
        const v128_t zero = wasm_f32x4_splat(0.0f);
        for (; j + 4 <= m; j += 4) {
            const v128_t a = wasm_v128_load(p + j);
            const v128_t b = n > 1 ? wasm_v128_load(p + ld + j) : zero;
            const v128_t c = n > 2 ? wasm_v128_load(p + 2 * ld + j) : zero;
            const v128_t d = n > 3 ? wasm_v128_load(p + 3 * ld + j) : zero;
            const v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
            const v128_t cd_lo = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
            float* out = pp + j * MR;
            wasm_v128_store(out, wasm_i32x4_shuffle(ab_lo, cd_lo, 0, 1, 4, 5));
            wasm_v128_store(out + 4, wasm_i32x4_shuffle(ab_lo, cd_lo, 2, 3, 6, 7));
            wasm_v128_store(out + 8, wasm_i32x4_shuffle(ab_hi, cd_hi, 0, 1, 4, 5));
            wasm_v128_store(out + 12, wasm_i32x4_shuffle(ab_hi, cd_hi, 2, 3, 6, 7));
        }
    }
#endif
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t jj = j; jj < m; ++jj) pp[jj * MR + r] = p[r * ld + jj];
    }
}

// s (rows, strips·NR) with ld = qp (packed queries of flash_pack_queries, rows) · kp (strips
// of (D, NR))ᵀ: the scores of `rows` queries against strips·NR packed keys, micro-tile by
// micro-tile.
template <class Arch>
void flash_scores(const float* qp, std::size_t rows, std::size_t d, const float* kp, std::size_t strips, float* s,
                  std::size_t ld) {
    using S = FlashShape<Arch>;
    constexpr std::size_t MR = S::MR, NR = S::NR;
    for (std::size_t i = 0; i < rows; i += MR) {
        const float* qi = qp + i * d;  // group i / MR
        float* si = s + i * ld;
        dispatch_rows<MR>(simd::min_size(MR, rows - i), [&](auto r) {
            if constexpr (S::kOneStripPerCall) {
                for (std::size_t st = 0; st < strips; ++st) {
                    scores_micro_kernel<Arch, decltype(r)::value>(qi, d, kp + st * d * NR, 1, si + st * NR, ld);
                }
            } else {
                scores_micro_kernel<Arch, decltype(r)::value>(qi, d, kp, strips, si, ld);
            }
        });
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
// Tried and measured (n = 2048, 1 thread, A/B against this), none kept:
// - the row maxima taken in the score micro-kernel from its accumulators, so this step skips
//   its max pass: 3% slower natively (the max pass is cheap; the per-strip updates and the
//   reductions in the kernel cost more);
// - two rows at a time, interleaved, to overlap one row's reductions with the other's vectors:
//   2% slower natively;
// - one vector per iteration instead of two on WebAssembly (fewer live registers): no change.
template <class Arch>
void flash_softmax_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float* row_max,
                        float* row_sum, float* rescale) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    constexpr float kNegInf = -__builtin_inff();
    const simd::Exp2NonPositive<Arch> exp2;
    for (std::size_t r = 0; r < rows; ++r) {
        float* x = s + r * ld;
        Batch vmax0(kNegInf), vmax1(kNegInf);
        std::size_t j = 0;
        for (; j + 2 * W <= cols; j += 2 * W) {
            vmax0 = simd::max(vmax0, Batch::load_unaligned(x + j));
            vmax1 = simd::max(vmax1, Batch::load_unaligned(x + j + W));
        }
        for (; j + W <= cols; j += W) vmax0 = simd::max(vmax0, Batch::load_unaligned(x + j));
        float tile_max = simd::max_lane(simd::max(vmax0, vmax1));
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
            const Batch e0 = exp2(Batch::load_unaligned(x + j) - vm);
            const Batch e1 = exp2(Batch::load_unaligned(x + j + W) - vm);
            e0.store_unaligned(x + j);
            e1.store_unaligned(x + j + W);
            vsum0 += e0;
            vsum1 += e1;
        }
        for (; j + W <= cols; j += W) {
            const Batch e = exp2(Batch::load_unaligned(x + j) - vm);
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
    using S = FlashShape<Arch>;
    constexpr std::size_t MR = S::MR, NR = S::NR, CHUNK = S::kProbabilityChunk;
    for (std::size_t i = 0; i < rows; i += MR) {
        const float* pi = p + i * ld;
        float* oi = o + i * dp;
        const std::size_t n = simd::min_size(MR, rows - i);
        if constexpr (S::kPackProbabilities) {
            alignas(64) float pp[CHUNK * MR];  // (chunk keys, MR), pp[j·MR + r] = p[i + r][j0 + j]
            for (std::size_t j0 = 0; j0 < cols; j0 += CHUNK) {
                const std::size_t m = simd::min_size(CHUNK, cols - j0);
                pack_probabilities<Arch>(pi + j0, ld, n, m, pp);
                for (std::size_t c = 0; c < dp; c += NR) {
                    dispatch_rows<MR>(n, [&](auto r) {
                        pv_micro_kernel<Arch, decltype(r)::value, true>(pp, 0, m, vp + j0 * dp + c, dp, oi + c, dp);
                    });
                }
            }
        } else {
            for (std::size_t c = 0; c < dp; c += NR) {
                dispatch_rows<MR>(n, [&](auto r) {
                    pv_micro_kernel<Arch, decltype(r)::value, false>(pi, ld, cols, vp + c, dp, oi + c, dp);
                });
            }
        }
    }
}

// One key tile after its scores: the base-2 online softmax step of flash_softmax_tile, the
// output rows rescaled by alpha, and o += p·V, group by group of MR rows so the group's
// probabilities are still in L1 when p·V reads them (and, on WebAssembly, transposes them).
// s: (rows, cols) with ld, t = log2(e)·scale·q·kᵀ (masked -inf), overwritten; vp: (cols, Dp)
// packed values of the tile; o: (rows, Dp); row_max (log2 units), row_sum: (rows).
// (Tried on WebAssembly: computing four rows' exponentials at once and transposing them in
// registers straight into the key-major layout: 7% slower in V8 than this, from spills. Tried
// on both: scores, softmax and p·V group by group for the whole tile, so a group's scores are
// still in L1: within the noise, natively and in V8.)
template <class Arch>
void flash_softmax_pv_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, const float* vp,
                           std::size_t dp, float* o, float* row_max, float* row_sum) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t MR = S::MR, W = S::W;
    for (std::size_t i = 0; i < rows; i += MR) {
        const std::size_t n = simd::min_size(MR, rows - i);
        float* si = s + i * ld;
        float* oi = o + i * dp;
        float alpha[MR];
        flash_softmax_tile<Arch>(si, n, cols, ld, row_max + i, row_sum + i, alpha);
        for (std::size_t r = 0; r < n; ++r) {
            if (alpha[r] == 1.0f) continue;
            const Batch a(alpha[r]);
            float* orow = oi + r * dp;
            for (std::size_t c = 0; c < dp; c += W) (Batch::load_unaligned(orow + c) * a).store_unaligned(orow + c);
        }
        flash_accumulate_pv<Arch>(si, ld, n, cols, vp, dp, oi);
    }
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
