// src/kernels/flash/one_tile_arch.hpp (private): FlashAttention when all keys of a head fit one score
// tile and no mask but the causal one applies, fused per block of query rows, one template per
// architecture (see simd.hpp for the tags and the rule on what may be used here).
// kernels/flash_tiles.hpp is the public face; src/attention/flash/path.hpp decides when they
// apply (one_tile_fits, and at most a causal mask).
//
// Why: the tiny models train on heads of T = S = 64 and D = 16. Run as general products
// (matmul_nt, the softmax pass, matmul_nn), every head pays the product's set-up per call, a
// packed Kᵀ per product, a store and three reloads of each score, and one-vector products run
// 12 rows at a time with a latency-bound remainder of 4. Here the scores of R query rows stay in
// registers from the product through the softmax (or the backward's exp and score gradient),
// and the products with the (rows, keys) tiles read them at constant offsets (the tile's row
// stride kOneTileLd is a compile-time constant) 16 rows at a time on AVX-512.
//
// Bit-identical to the general path (tests/attention/test_flash_attention.cpp:
// OneKeyTileEqualsTheMathPathBitForBit, FusedOneTileEqualsTheGeneralOneTilePathBitForBit):
// every score is the FMA chain over d from 0 that the matmul micro-kernel computes; the softmax
// runs the operations of softmax_tile_rows<Arch, R, true> in the same order; the backward's tile
// those of flash_backward_tile; and every product element is the matmul micro-kernel's FMA
// chain over its inner index, in order.
//
// Legend: R rows of a block; NV key vectors (keys = NV·W); NVV vectors of a product's columns;
// d head dim of q and k, dv of v; ld kOneTileLd floats between the rows of a p or ds tile.
#pragma once

#include <type_traits>

#include "../kernel_table.hpp"
#include "../simd.hpp"
#include "../softmax_arch.hpp"

namespace attnlab {
namespace kernels {
namespace arch {

template <class Arch>
struct OneTileShape {
    using Batch = simd::Batch<Arch>;
    static constexpr std::size_t W = Batch::size;
    // Accumulators a block may keep in registers: AVX-512 has 32 (24 + the loaded vectors and
    // broadcasts), SSE2/AVX2 16, WebAssembly 16 of which V8 keeps one as scratch and each
    // multiply-add needs a product temporary.
    static constexpr std::size_t kAccumulators = simd::kWasmKernels<Arch> ? 8 : W == 16 ? 24 : 12;
    static constexpr std::size_t kMaxKeyVectors = 8;    // keys <= 8·W (and <= kOneTileLd)
    static constexpr std::size_t kMaxValueVectors = 4;  // product columns <= 4·W
    static constexpr std::size_t kMaxKeys = W * (kMaxKeyVectors < kAccumulators ? kMaxKeyVectors : kAccumulators);
    static constexpr std::size_t kMaxColumns = W * kMaxValueVectors;
    static_assert(kMaxKeys <= kOneTileLd, "a tile row holds every key");
    // Query rows per score block: 6 (24 accumulators at 4 key vectors), fewer for more keys.
    static constexpr std::size_t score_rows(std::size_t nv) {
        return kAccumulators / nv < 6 ? kAccumulators / nv : 6;
    }
    // Rows per product block: 16 one-vector rows on AVX-512 (64 = 4 blocks, no remainder; the
    // general kernel's 12 left 4 rows, 4 dependent FMA chains).
    static constexpr std::size_t product_rows(std::size_t nvv) {
        return kAccumulators / nvv < 16 ? kAccumulators / nvv : 16;
    }
};

// f(integral_constant<N>, i) for the one block of N = rows rows (1 <= rows <= R).
template <std::size_t R, class F>
inline void run_block(std::size_t rows, std::size_t i, const F& f) {
    if constexpr (R > 1) {
        if (rows < R) {
            run_block<R - 1>(rows, i, f);
            return;
        }
    }
    f(std::integral_constant<std::size_t, R>{}, i);
}

// f(integral_constant<R>, i) for blocks [i, i + R) of [begin, end): whole blocks of R, then the
// remainder as one block (64 rows in blocks of 6 end with one of 4, not 3 and a lone row whose
// few FMA chains are latency-bound).
template <std::size_t R, class F>
inline void for_row_blocks(std::size_t begin, std::size_t end, const F& f) {
    std::size_t i = begin;
    for (; i + R <= end; i += R) f(std::integral_constant<std::size_t, R>{}, i);
    if (i < end) run_block<R>(end - i, i, f);
}

// f(integral_constant<N>) for n in 1..8 (callers check the range).
template <class F>
inline void dispatch_vectors(std::size_t n, const F& f) {
    switch (n) {
        case 1: f(std::integral_constant<std::size_t, 1>{}); break;
        case 2: f(std::integral_constant<std::size_t, 2>{}); break;
        case 3: f(std::integral_constant<std::size_t, 3>{}); break;
        case 4: f(std::integral_constant<std::size_t, 4>{}); break;
        case 5: f(std::integral_constant<std::size_t, 5>{}); break;
        case 6: f(std::integral_constant<std::size_t, 6>{}); break;
        case 7: f(std::integral_constant<std::size_t, 7>{}); break;
        default: f(std::integral_constant<std::size_t, 8>{}); break;
    }
}

// x: (rows, d) with ld -> xt: (d, rows), xt[p·rows + j] = x[j·ld + p] (the Kᵀ or Vᵀ of a head,
// the vector operand of the score blocks).
template <class Arch>
void one_tile_transpose(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float* xt) {
    std::size_t j = 0;
#if ATTNLAB_SSE_TRANSPOSE
    for (; j + 4 <= rows; j += 4) {
        std::size_t p = 0;
        for (; p + 4 <= d; p += 4) simd::transpose4<Arch>(x + j * ld + p, ld, xt + p * rows + j, rows);
        for (; p < d; ++p) {
            for (std::size_t jj = j; jj < j + 4; ++jj) xt[p * rows + jj] = x[jj * ld + p];
        }
    }
#endif
    for (; j < rows; ++j) {
        for (std::size_t p = 0; p < d; ++p) xt[p * rows + j] = x[j * ld + p];
    }
}

// acc (R, NV) = x (R, d) with lx · yt (d, NV·W): the matmul micro-kernel's FMA chains.
template <class Arch, std::size_t R, std::size_t NV>
inline void block_scores(const float* x, std::size_t lx, std::size_t d, const float* yt,
                         simd::Batch<Arch> (&acc)[R][NV]) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch(0.0f);
    }
    const float* ycur = yt;
#pragma GCC unroll 4
    for (std::size_t p = 0; p < d; ++p, ycur += NV * W) {
        Batch yv[NV];
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) yv[v] = Batch::load_unaligned(ycur + v * W);
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            const Batch xv(x[r * lx + p]);
            ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(xv, yv[v], acc[r][v]);
        }
    }
}

// The causal mask on a block's raw scores, as mask_tile applies it: row r hides keys
// j >= hide_from + r (-inf; then the scale keeps it -inf and exp makes it exactly 0).
template <class Arch, std::size_t R, std::size_t NV>
inline void hide_future(std::ptrdiff_t hide_from, simd::Batch<Arch> (&acc)[R][NV]) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size;
    alignas(64) float lane[W];  // 0 .. W-1 (small integers: exact as floats)
    for (std::size_t l = 0; l < W; ++l) lane[l] = static_cast<float>(l);
    const Batch lanes = Batch::load_aligned(lane);
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        const Batch first_hidden(static_cast<float>(hide_from + static_cast<std::ptrdiff_t>(r)));
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
            const Batch key = lanes + Batch(static_cast<float>(v * W));
            acc[r][v] = simd::select(key < first_hidden, acc[r][v], Batch(kNegInf));
        }
    }
}

// R query rows of the forward: p (R, NV·W) with kOneTileLd = softmax(scale · q·kᵀ) from
// q (R, d) with lq and kt = Kᵀ (d, NV·W); row_max, row_sum (R) as softmax_tile gives them.
// Causal: row r sees keys j < hide_from + r only.
template <class Arch, std::size_t R, std::size_t NV, bool Causal>
void one_tile_softmax_rows(const float* q, std::size_t lq, std::size_t d, const float* kt, float scale,
                           std::ptrdiff_t hide_from, float* p, float* row_max, float* row_sum) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size, LD = kOneTileLd;
    Batch acc[R][NV];
    block_scores<Arch, R, NV>(q, lq, d, kt, acc);
    if constexpr (Causal) hide_future<Arch, R, NV>(hide_from, acc);
    const Batch vscale(scale);
    const SoftmaxExp<Arch> exp;
    // softmax_tile_rows<Arch, R, true>: the scaled scores and their max, vector by vector ...
    Batch vmax[R];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) vmax[r] = Batch(kNegInf);
    ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            acc[r][v] = scaled_scores<Arch>(acc[r][v], vscale);
            vmax[r] = simd::max(vmax[r], acc[r][v]);
        }
    }
    // ... exp(x - max) summed in vector order ...
    float m[R];
    Batch ref[R], vsum[R];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        m[r] = simd::max_lane(vmax[r]);
        ref[r] = Batch(m[r] == kNegInf ? 0.0f : m[r]);
        vsum[r] = Batch(0.0f);
    }
    ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            acc[r][v] = exp(acc[r][v] - ref[r]);
            vsum[r] += acc[r][v];
        }
    }
    // ... and p·(1/sum).
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        const float sum = simd::hadd(vsum[r]);
        row_max[r] = m[r];
        row_sum[r] = m[r] == kNegInf ? 0.0f : sum;
        const Batch inv(m[r] == kNegInf ? 0.0f : 1.0f / sum);
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) (acc[r][v] * inv).store_unaligned(p + r * LD + v * W);
    }
}

// R query rows of the backward: p = exp(scale · q·kᵀ - lse) and ds = scale · p ⊙ (dO·vᵀ - delta),
// both (R, NV·W) with kOneTileLd, as flash_backward_tile computes them from the products; rows
// with lse = -inf (no visible key) get zeros. q (R, d) with lq, dout (R, dv) with ldo,
// kt = Kᵀ (d, NV·W), vt = Vᵀ (dv, NV·W); lse, delta (R). Causal: as one_tile_softmax_rows.
template <class Arch, std::size_t R, std::size_t NV, bool Causal>
void one_tile_backward_rows(const float* q, std::size_t lq, const float* dout, std::size_t ldo, std::size_t d,
                            std::size_t dv, const float* kt, const float* vt, float scale, std::ptrdiff_t hide_from,
                            const float* lse, const float* delta, float* p, float* ds) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size, LD = kOneTileLd;
    const Batch vscale(scale);
    const SoftmaxExp<Arch> exp;
    Batch acc[R][NV];
    block_scores<Arch, R, NV>(q, lq, d, kt, acc);
    if constexpr (Causal) hide_future<Arch, R, NV>(hide_from, acc);
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        const Batch vlse(lse[r]);
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
            exp(scaled_scores<Arch>(acc[r][v], vscale) - vlse).store_unaligned(p + r * LD + v * W);
        }
    }
    block_scores<Arch, R, NV>(dout, ldo, dv, vt, acc);
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        float* pr = p + r * LD;
        float* dsr = ds + r * LD;
        if (lse[r] == kNegInf) {  // every key masked: zero weights, zero gradient
            ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
                Batch(0.0f).store_unaligned(pr + v * W);
                Batch(0.0f).store_unaligned(dsr + v * W);
            }
            continue;
        }
        const Batch vdelta(delta[r]);
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
            ((acc[r][v] - vdelta) * Batch::load_unaligned(pr + v * W) * vscale).store_unaligned(dsr + v * W);
        }
    }
}

// R query rows of the backward from the forward's weights: ds = scale · p ⊙ (dO·vᵀ - delta)
// (R, NV·W) with kOneTileLd, p (R, NV·W) with kOneTileLd the weights one_tile_softmax wrote
// (exactly 0 for masked keys and for rows with no visible key); the operations of
// one_tile_backward_rows on that p. dout (R, dv) with ldo, vt = Vᵀ (dv, NV·W); lse, delta (R).
template <class Arch, std::size_t R, std::size_t NV>
void one_tile_backward_from_weights_rows(const float* dout, std::size_t ldo, std::size_t dv, const float* vt,
                                         float scale, const float* lse, const float* delta, const float* p,
                                         float* ds) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size, LD = kOneTileLd;
    const Batch vscale(scale);
    // The block's weights come from the forward (the whole layer's, (B·H·T, kOneTileLd): out of
    // L2 by now); asked for before the product over dv, they arrive while it runs instead of
    // stalling the loads after it.
    constexpr std::size_t kLineFloats = 64 / sizeof(float);
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        ATTNLAB_UNROLL_ALL for (std::size_t j = 0; j < NV * W; j += kLineFloats) simd::prefetch(p + r * LD + j);
    }
    Batch acc[R][NV];
    block_scores<Arch, R, NV>(dout, ldo, dv, vt, acc);
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        const float* pr = p + r * LD;
        float* dsr = ds + r * LD;
        if (lse[r] == kNegInf) {  // every key masked: zero gradient
            ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) Batch(0.0f).store_unaligned(dsr + v * W);
            continue;
        }
        const Batch vdelta(delta[r]);
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
            ((acc[r][v] - vdelta) * Batch::load_unaligned(pr + v * W) * vscale).store_unaligned(dsr + v * W);
        }
    }
}

// c (R, NVV·W) with ldc (+)= a · b over k, b (k, NVV·W) with ldb; a element (r, p) at
// a[r·kOneTileLd + p] (a tile's rows), or a[p·kOneTileLd + r] when TransA (its columns).
template <class Arch, std::size_t R, std::size_t NVV, bool TransA>
void one_tile_product_rows(const float* a, std::size_t k, const float* b, std::size_t ldb, float* c,
                           std::size_t ldc, bool add) {
    using Batch = simd::Batch<Arch>;
    constexpr std::size_t W = Batch::size, LD = kOneTileLd;
    Batch acc[R][NVV];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NVV; ++v) acc[r][v] = Batch(0.0f);
    }
    const float* acur = a;  // element (0, p): every row at a constant offset from it
    const float* bcur = b;
#pragma GCC unroll 4
    for (std::size_t p = 0; p < k; ++p, acur += TransA ? LD : 1, bcur += ldb) {
        Batch bv[NVV];
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NVV; ++v) bv[v] = Batch::load_unaligned(bcur + v * W);
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            const Batch av(TransA ? acur[r] : acur[r * LD]);
            ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NVV; ++v) acc[r][v] = simd::fma(av, bv[v], acc[r][v]);
        }
    }
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NVV; ++v) {
            float* out = c + r * ldc + v * W;
            (add ? Batch::load_unaligned(out) + acc[r][v] : acc[r][v]).store_unaligned(out);
        }
    }
}

// The table's entries: the row blocks and the vector counts dispatched (one_tile_fits checks
// keys = NV·W with NV <= kMaxKeyVectors and NV <= kAccumulators, n = NVV·W likewise).

// f(R, NV, Causal, i, from) (integral constants, then the block's first row and hide_from) for
// each block of score rows [i, i + R). A block that hides a key (a causal block whose first row
// does not see every key) gets Causal = true; hide_from = kOneTileSeesAll (or any value >= keys)
// hides nothing.
template <class Arch, class F>
void for_score_blocks(std::size_t rows, std::size_t keys, std::ptrdiff_t hide_from, const F& f) {
    using S = OneTileShape<Arch>;
    dispatch_vectors(keys / S::W, [&](auto nv) {
        constexpr std::size_t NV = decltype(nv)::value;
        if constexpr (S::score_rows(NV) >= 1) {
            for_row_blocks<S::score_rows(NV)>(0, rows, [&](auto r, std::size_t i) {
                const std::ptrdiff_t from =
                    hide_from == kOneTileSeesAll ? hide_from : hide_from + static_cast<std::ptrdiff_t>(i);
                if (from < static_cast<std::ptrdiff_t>(keys)) {
                    f(r, nv, std::true_type{}, i, from);
                } else {
                    f(r, nv, std::false_type{}, i, from);
                }
            });
        }
    });
}

template <class Arch>
void one_tile_softmax(const float* q, std::size_t lq, std::size_t rows, std::size_t d, const float* kt,
                      std::size_t keys, float scale, std::ptrdiff_t hide_from, float* p, float* row_max,
                      float* row_sum) {
    for_score_blocks<Arch>(rows, keys, hide_from, [&](auto r, auto nv, auto causal, std::size_t i, auto from) {
        one_tile_softmax_rows<Arch, decltype(r)::value, decltype(nv)::value, decltype(causal)::value>(
            q + i * lq, lq, d, kt, scale, from, p + i * kOneTileLd, row_max + i, row_sum + i);
    });
}

template <class Arch>
void one_tile_backward(const float* q, std::size_t lq, const float* dout, std::size_t ldo, std::size_t rows,
                       std::size_t d, std::size_t dv, const float* kt, const float* vt, std::size_t keys, float scale,
                       std::ptrdiff_t hide_from, const float* lse, const float* delta, float* p, float* ds) {
    for_score_blocks<Arch>(rows, keys, hide_from, [&](auto r, auto nv, auto causal, std::size_t i, auto from) {
        one_tile_backward_rows<Arch, decltype(r)::value, decltype(nv)::value, decltype(causal)::value>(
            q + i * lq, lq, dout + i * ldo, ldo, d, dv, kt, vt, scale, from, lse + i, delta + i, p + i * kOneTileLd,
            ds + i * kOneTileLd);
    });
}

template <class Arch>
void one_tile_backward_from_weights(const float* dout, std::size_t ldo, std::size_t rows, std::size_t dv,
                                    const float* vt, std::size_t keys, float scale, const float* lse,
                                    const float* delta, const float* p, float* ds) {
    // The blocks of the score rows (no mask to apply: p already holds the forward's zeros).
    for_score_blocks<Arch>(rows, keys, kOneTileSeesAll, [&](auto r, auto nv, auto, std::size_t i, auto) {
        one_tile_backward_from_weights_rows<Arch, decltype(r)::value, decltype(nv)::value>(
            dout + i * ldo, ldo, dv, vt, scale, lse + i, delta + i, p + i * kOneTileLd, ds + i * kOneTileLd);
    });
}

template <class Arch>
void one_tile_product(bool trans_a, const float* a, std::size_t rows, std::size_t k, const float* b,
                      std::size_t ldb, std::size_t n, float* c, std::size_t ldc, bool add) {
    using S = OneTileShape<Arch>;
    dispatch_vectors(n / S::W, [&](auto nvv) {
        constexpr std::size_t NVV = decltype(nvv)::value;
        if constexpr (NVV <= S::kMaxValueVectors && S::product_rows(NVV) >= 1) {
            for_row_blocks<S::product_rows(NVV)>(0, rows, [&](auto r, std::size_t i) {
                constexpr std::size_t R = decltype(r)::value;
                if (trans_a) {
                    one_tile_product_rows<Arch, R, NVV, true>(a + i, k, b, ldb, c + i * ldc, ldc, add);
                } else {
                    one_tile_product_rows<Arch, R, NVV, false>(a + i * kOneTileLd, k, b, ldb, c + i * ldc, ldc, add);
                }
            });
        }
    });
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
