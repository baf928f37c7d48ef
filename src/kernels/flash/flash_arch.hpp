// src/kernels/flash/flash_arch.hpp (private): FlashAttention's forward tile step as register-blocked
// micro-kernels on pre-packed operands, one template per architecture (see simd.hpp for the
// tags and the rule on what may be used here). src/attention/flash/ holds the loop over
// tiles, the masks and the threading; kernels/flash_tiles.hpp is the public face.
//
// Why not the general matmul: a score tile is (bc, D)·(D, br) with D = 32..128 and its product
// with V is (br, bc)·(bc, Dv). matmul() would pack the same key and value tiles again for every
// query tile and run its whole loop nest per call. Here K and V are packed once per head, in the
// layout the micro-kernels stream, so the tile loop is just micro-kernel calls.
//
// The forward stores a score tile keys by queries (flash_softmax_pv_columns): the keys are the
// broadcast operand, packed in groups of MR (pack_row_groups<Arch, MR>), the queries the vector
// operand, packed in strips of NR. The backward's tiles are queries by keys (keys in strips).
//
// Legend: R rows of a micro-tile (<= MR); NR = SV vectors of W floats = the columns of a packed
// strip; D head dim of q and k; Dv of v, Dp = Dv rounded up to VR (FlashShape).
#pragma once

#include <type_traits>

#include "../kernel_table.hpp"
#include "../simd.hpp"

namespace attnlab {
namespace kernels {
namespace arch {

template <class Arch>
struct FlashShape {
    using Batch = simd::Batch<Arch>;
    static constexpr std::size_t W = Batch::size;
    static constexpr bool kWasm = simd::kWasmKernels<Arch>;
    // Rows of a micro-tile (keys of a score tile, queries of p·V): 6, and 4 in WebAssembly,
    // which has no FMA, so a multiply-add needs a product temporary, and V8 keeps one of x64's
    // 16 vector registers as scratch: 6 x 2 accumulators spill, and 4 rows run fastest there
    // (docs/performance.md).
    static constexpr std::size_t MR = kWasm ? 4 : 6;
    // The score products (q·kᵀ, and dp = dO·vᵀ in the backward) load SV vectors of a packed
    // strip per step: 6 x 4 = 24 accumulators where AVX-512's 32 registers hold them, else 6 x 2
    // (fewer loads of the broadcast operand per FMA; docs/performance.md).
    static constexpr std::size_t SV = W == 16 ? 4 : 2;
    static constexpr std::size_t NR = SV * W;  // columns of a packed strip
    // p·V loads VV vectors of a value row per step (6 x 2 = 12 accumulators): value rows are
    // padded to VR columns, which one head dim of 32 fills on AVX-512.
    static constexpr std::size_t VV = 2;
    static constexpr std::size_t VR = VV * W;
    // p·V on 2·MR query rows at once (24 accumulators) where the registers hold them: the same
    // sums in the same order, each value row loaded once for twice the rows.
    static constexpr bool kPvPairs = W == 16;
    // The forward's exponentials in the score kernel's epilogue, against the running reference
    // of the previous key tiles (flash_scores_exp): where the separate exp pass over a stored
    // tile cannot overlap with the products (V8); natively both run alike (docs/performance.md).
    static constexpr bool kLazyExp = kWasm;
    // One strip per score micro-kernel call in WebAssembly: V8 compiles the kernel with the
    // strip loop inside to slower code; native compilers keep the accumulators in registers only
    // with the loop inside (a call per strip spills them to the stack).
    static constexpr bool kOneStripPerCall = kWasm;
};

// x: (rows, D), rows ld floats apart -> xp: (ceil(rows / G), D, G), xp[(g·D + p)·G + r] = scale · x[g·G + r][p],
// zero for rows past the end: the G rows of one p are adjacent. G = NR packs the vector operand
// of flash_scores (strips), G = MR its broadcast operand (groups). A template on Arch too, so each
// ISA's file gets its own symbol (simd.hpp).
template <class Arch, std::size_t G>
void pack_row_groups(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float scale, float* xp) {
    for (std::size_t g = 0; g * G < rows; ++g) {
        float* dst = xp + g * d * G;
        const std::size_t n = simd::min_size(G, rows - g * G);
        std::size_t r0 = 0;
#if ATTNLAB_SSE_TRANSPOSE
        // 4 rows x 4 columns at a time through a register transpose (the same products as the
        // scalar loop below: one rounding each).
        for (; r0 + 4 <= n; r0 += 4) {
            const float* src = x + (g * G + r0) * ld;
            std::size_t p = 0;
            for (; p + 4 <= d; p += 4) simd::transpose4<Arch>(src + p, ld, dst + p * G + r0, G, scale);
            for (; p < d; ++p) {
                for (std::size_t r = 0; r < 4; ++r) dst[p * G + r0 + r] = scale * src[r * ld + p];
            }
        }
#endif
        for (std::size_t r = r0; r < n; ++r) {
            const float* src = x + (g * G + r) * ld;
            for (std::size_t p = 0; p < d; ++p) dst[p * G + r] = scale * src[p];
        }
        for (std::size_t r = n; r < G; ++r) {
            for (std::size_t p = 0; p < d; ++p) dst[p * G + r] = 0.0f;
        }
    }
}

// v: (keys, Dv) row-major -> vp: (keys, Dp), Dp a multiple of VR, zero in columns [Dv, Dp).
template <class Arch>
void flash_pack_values(const float* v, std::size_t keys, std::size_t dv, std::size_t ld, std::size_t dp,
                       float* vp) {
    for (std::size_t j = 0; j < keys; ++j) {
        const float* src = v + j * ld;
        float* dst = vp + j * dp;
        std::size_t c = 0;
        for (; c < dv; ++c) dst[c] = src[c];
        for (; c < dp; ++c) dst[c] = 0.0f;
    }
}

// acc (R, NV vectors) = the first R rows of one packed group qg (D, MR) · one packed strip kp
// (D, NR): the FMA chains over D of a score micro-tile.
template <class Arch, std::size_t R>
inline void strip_products(const float* qg, std::size_t d, const float* kp,
                           simd::Batch<Arch> (&acc)[R][FlashShape<Arch>::SV]) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NR = S::NR, NV = S::SV, W = S::W;
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch(0.0f);
    }
    // Pointer bumps and constant offsets (not p·NR + v·W): WebAssembly folds constant offsets
    // into its loads, and V8 then needs no integer op per access.
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
}

// s (R, strips·NR) with ld = one packed group (D, MR), its first R rows, · `strips` packed
// strips (D, NR) each.
template <class Arch, std::size_t R>
void scores_micro_kernel(const float* qg, std::size_t d, const float* kp, std::size_t strips, float* s,
                         std::size_t ld) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NR = S::NR, NV = S::SV, W = S::W;
    // All strips in one call, the accumulators declared per strip: the compiler then keeps them
    // in registers from zeroing to store (a call per strip spilled them to the stack twice).
    for (std::size_t st = 0; st < strips; ++st, kp += d * NR, s += NR) {
        Batch acc[R][NV];
        strip_products<Arch, R>(qg, d, kp, acc);
        for (std::size_t r = 0; r < R; ++r) {
            for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_unaligned(s + r * ld + v * W);
        }
    }
}

// o (R, NR) with ldo += p (R, cols) · one column strip of packed values (cols, NR) with row
// stride dp, p stored key-major: p[r][j] = p[j·ld + r], so the R broadcasts of one key sit at
// constant offsets from one pointer (on WebAssembly, which computes every address with integer
// ops, that keeps V8's loop free of them).
template <class Arch, std::size_t R>
void pv_micro_kernel(const float* p, std::size_t ld, std::size_t cols, const float* vstrip, std::size_t dp, float* o,
                     std::size_t ldo) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NV = S::VV, W = S::W;
    Batch acc[R][NV];
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch::load_unaligned(o + r * ldo + v * W);
    }
    const float* vcur = vstrip;
    const float* pcur = p;
    for (std::size_t j = 0; j < cols; ++j, vcur += dp, pcur += ld) {
        Batch vv[NV];
        for (std::size_t v = 0; v < NV; ++v) vv[v] = Batch::load_unaligned(vcur + v * W);
        for (std::size_t r = 0; r < R; ++r) {
            const Batch pv(pcur[r]);
            for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(pv, vv[v], acc[r][v]);
        }
    }
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_unaligned(o + r * ldo + v * W);
    }
}

// s (rows, strips·NR) with ld = qp (rows packed in groups of MR) · kp (strips of (D, NR))ᵀ:
// the dot products of `rows` rows against strips·NR packed rows, micro-tile by micro-tile.
template <class Arch>
void flash_scores(const float* qp, std::size_t rows, std::size_t d, const float* kp, std::size_t strips, float* s,
                  std::size_t ld) {
    using S = FlashShape<Arch>;
    constexpr std::size_t MR = S::MR, NR = S::NR;
    for (std::size_t i = 0; i < rows; i += MR) {
        const float* qi = qp + i * d;  // group i / MR
        float* si = s + i * ld;
        simd::dispatch_rows<MR>(simd::min_size(MR, rows - i), [&](auto r) {
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

// The exponentials of one strip of a score tile in the product's epilogue: s (R, NR) with ld
// (R keys by NR queries, one packed group · one packed strip, as scores_micro_kernel), written
// as p = 2^(s - ref[q]) (exp2 clamps t = s - ref below at -127, giving 0; t up to 127 is exact
// to its rounding: ref may lie below the tile's scores); tile_max[q] = max(tile_max[q],
// max_r s), tile_sum[q] += Σ_r p. ref, tile_max, tile_sum: (NR), the strip's queries.
template <class Arch, std::size_t R>
void scores_exp_micro_kernel(const float* qg, std::size_t d, const float* kp, float* s, std::size_t ld,
                             const float* ref, float* tile_max, float* tile_sum,
                             const simd::Exp2NonPositive<Arch>& exp2) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NV = S::SV, W = S::W;
    Batch acc[R][NV];
    strip_products<Arch, R>(qg, d, kp, acc);
    for (std::size_t v = 0; v < NV; ++v) {
        const Batch rf = Batch::load_unaligned(ref + v * W);
        Batch m = acc[0][v], sum(0.0f);
        for (std::size_t r = 0; r < R; ++r) {
            if (r > 0) m = simd::max(m, acc[r][v]);
            const Batch e = exp2(acc[r][v] - rf);
            e.store_unaligned(s + r * ld + v * W);
            sum += e;
        }
        simd::max(m, Batch::load_unaligned(tile_max + v * W)).store_unaligned(tile_max + v * W);
        (Batch::load_unaligned(tile_sum + v * W) + sum).store_unaligned(tile_sum + v * W);
    }
}

// flash_scores with the exponentials in the epilogue: pt (keys, strips·NR) with ld, keys by
// queries, = 2^(kg · qsᵀ - ref) per query column; tile_max, tile_sum (strips·NR) updated with
// the scores' max and the p's sum per query (the caller starts them at -inf and 0).
template <class Arch>
void flash_scores_exp(const float* kg, std::size_t keys, std::size_t d, const float* qs, std::size_t strips,
                      float* pt, std::size_t ld, const float* ref, float* tile_max, float* tile_sum) {
    using S = FlashShape<Arch>;
    constexpr std::size_t MR = S::MR, NR = S::NR;
    const simd::Exp2NonPositive<Arch> exp2;
    for (std::size_t i = 0; i < keys; i += MR) {
        const float* ki = kg + i * d;  // group i / MR
        float* pi = pt + i * ld;
        simd::dispatch_rows<MR>(simd::min_size(MR, keys - i), [&](auto r) {
            for (std::size_t st = 0; st < strips; ++st) {
                scores_exp_micro_kernel<Arch, decltype(r)::value>(ki, d, qs + st * d * NR, pi + st * NR, ld,
                                                                  ref + st * NR, tile_max + st * NR,
                                                                  tile_sum + st * NR, exp2);
            }
        });
    }
}

// o (rows, dp) = alpha ⊙ o + pt · V, pt (cols, ldq) keys by queries, vp (cols, dp) with ldv;
// alpha (rows) the rows' rescale factors, or null for none (all 1).
template <class Arch>
void flash_pv_columns(const float* st, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                      std::size_t ldv, std::size_t dp, float* o, const float* alpha) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t MR = S::MR, W = S::W;
    if (alpha) {
        for (std::size_t r = 0; r < rows; ++r) {
            const Batch a(alpha[r]);
            float* orow = o + r * dp;
            for (std::size_t c = 0; c < dp; c += W) (Batch::load_unaligned(orow + c) * a).store_unaligned(orow + c);
        }
    }
    std::size_t i = 0;
    if constexpr (S::kPvPairs) {
        // Two row groups at a time where the registers hold their 24 accumulators.
        for (; i + 2 * MR <= rows; i += 2 * MR) {
            for (std::size_t c = 0; c < dp; c += S::VR) {
                pv_micro_kernel<Arch, 2 * MR>(st + i, ldq, cols, vp + c, ldv, o + i * dp + c, dp);
            }
        }
    }
    for (; i < rows; i += MR) {
        const std::size_t n = simd::min_size(MR, rows - i);
        float* oi = o + i * dp;
        for (std::size_t c = 0; c < dp; c += S::VR) {
            simd::dispatch_rows<MR>(n, [&](auto r) {
                pv_micro_kernel<Arch, decltype(r)::value>(st + i, ldq, cols, vp + c, ldv, oi + c, dp);
            });
        }
    }
}

// One key tile of the forward with the scores stored keys by queries: st (cols, ldq),
// st[j·ldq + q] = t of query q and key j (t = log2(e)·scale·q·kᵀ, masked -inf), ldq a multiple
// of W (columns past `rows` are padding: computed, never used). The online softmax then runs
// down the columns, a vector of W queries at a time, with no horizontal reduction and no scalar
// step per query; and p·V reads the probabilities of one key for R adjacent queries at constant
// offsets. (Stored queries by keys, the softmax would need a horizontal max and sum and scalar
// steps per query and tile, and on WebAssembly a transpose of p for p·V.)
// Per query q: m' = max(m, max_j t_j), p_j = 2^(t_j - m'), alpha = 2^(m - m'), l = alpha·l + Σ p,
// o_q = alpha·o_q + Σ_j p_j v_j. A query that has seen only masked keys keeps m = -inf, l = 0
// and o = 0. row_max (log2 units), row_sum, alpha: (ldq); vp: (cols, Dp); o: (rows, Dp).
template <class Arch>
void flash_softmax_pv_columns(float* st, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                              std::size_t ldv, std::size_t dp, float* o, float* row_max, float* row_sum,
                              float* alpha) {
    using S = FlashShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t W = S::W, kMaxChains = 8;
    constexpr float kNegInf = -__builtin_inff();
    const simd::Exp2NonPositive<Arch> exp2;
    for (std::size_t q = 0; q < ldq; q += W) {
        float* col = st + q;
        // The column's max over kMaxChains independent chains, so the pass is not bound by
        // max's latency.
        Batch chain[kMaxChains];
        ATTNLAB_UNROLL_ALL for (std::size_t c = 0; c < kMaxChains; ++c) chain[c] = Batch(kNegInf);
        std::size_t j = 0;
        for (const float* x = col; j + kMaxChains <= cols; j += kMaxChains, x += kMaxChains * ldq) {
            ATTNLAB_UNROLL_ALL for (std::size_t c = 0; c < kMaxChains; ++c) {
                chain[c] = simd::max(chain[c], Batch::load_unaligned(x + c * ldq));
            }
        }
        for (; j < cols; ++j) chain[0] = simd::max(chain[0], Batch::load_unaligned(col + j * ldq));
        ATTNLAB_UNROLL_ALL for (std::size_t c = kMaxChains / 2; c > 0; c /= 2) {
            ATTNLAB_UNROLL_ALL for (std::size_t i = 0; i < c; ++i) chain[i] = simd::max(chain[i], chain[i + c]);
        }
        const Batch m_old = Batch::load_unaligned(row_max + q);
        const Batch m_new = simd::max(m_old, chain[0]);
        // 0 stands in for the reference of a query with no visible key yet: its -inf scores
        // then give p = 2^-inf = 0 (the clamp in exp2), not NaN.
        const Batch ref = simd::select(m_new < Batch(-__FLT_MAX__), Batch(0.0f), m_new);
        Batch sum0(0.0f), sum1(0.0f);
        for (j = 0; j + 2 <= cols; j += 2) {
            float* x0 = col + j * ldq;
            float* x1 = x0 + ldq;
            const Batch e0 = exp2(Batch::load_unaligned(x0) - ref);
            const Batch e1 = exp2(Batch::load_unaligned(x1) - ref);
            e0.store_unaligned(x0);
            e1.store_unaligned(x1);
            sum0 += e0;
            sum1 += e1;
        }
        if (j < cols) {
            float* x0 = col + j * ldq;
            const Batch e0 = exp2(Batch::load_unaligned(x0) - ref);
            e0.store_unaligned(x0);
            sum0 += e0;
        }
        const Batch a = exp2(m_old - ref);  // 0 while m was -inf (o and l are still 0 then)
        (a * Batch::load_unaligned(row_sum + q) + (sum0 + sum1)).store_unaligned(row_sum + q);
        m_new.store_unaligned(row_max + q);
        a.store_unaligned(alpha + q);
    }
    flash_pv_columns<Arch>(st, rows, cols, ldq, vp, ldv, dp, o, alpha);
}

// out[i] = Σ_c a[i·lda + c]·b[i·ldb + c] for i < rows (the backward's delta = rowsum(dO ⊙ O)):
// per row an FMA chain over its whole vectors, a horizontal add, then the tail in order; 4 rows
// at a time so their chains and horizontal adds overlap.
template <class Arch>
void flash_row_dots(const float* a, std::size_t lda, const float* b, std::size_t ldb, std::size_t rows,
                    std::size_t cols, float* out) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size, R = 4;
    const std::size_t full = cols / W * W;
    const auto block = [&](auto nr, std::size_t i) {
        constexpr std::size_t N = decltype(nr)::value;
        Batch acc[N];
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < N; ++r) acc[r] = Batch(0.0f);
        for (std::size_t c = 0; c < full; c += W) {
            ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < N; ++r) {
                acc[r] = simd::fma(Batch::load_unaligned(a + (i + r) * lda + c),
                                   Batch::load_unaligned(b + (i + r) * ldb + c), acc[r]);
            }
        }
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < N; ++r) {
            float sum = simd::hadd(acc[r]);
            for (std::size_t c = full; c < cols; ++c) sum += a[(i + r) * lda + c] * b[(i + r) * ldb + c];
            out[i + r] = sum;
        }
    };
    std::size_t i = 0;
    for (; i + R <= rows; i += R) block(std::integral_constant<std::size_t, R>{}, i);
    for (; i < rows; ++i) block(std::integral_constant<std::size_t, 1>{}, i);
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
