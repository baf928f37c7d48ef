// src/kernels/matmul_arch.hpp (private): the packing routines and the register-blocked
// micro-kernel of matmul.cpp, one template per architecture (see simd.hpp for the tags and for
// the rule on what may be used here). matmul.cpp holds the loop nest, scratch and threading.
//
// Legend: M rows of C, N columns, K the summed dimension; MR x NR micro-tile, NR = NV vectors.
#pragma once

#include "kernel_table.hpp"
#include "simd.hpp"

namespace attnlab {
namespace kernels {
namespace arch {

template <class Arch>
struct MatmulShape {
    using Batch = simd::Batch<Arch>;
    static constexpr std::size_t W = Batch::size;  // floats per vector: 1, 4 (SSE, WASM), 8 (AVX2), 16 (AVX-512)
    static constexpr std::size_t MR = kMatmulMR;   // rows of a micro-tile (micro_dispatch may split them)
    static constexpr bool kWasm = simd::kWasmKernels<Arch>;
    // WebAssembly: 4 vectors (16 columns) per row, run 2 rows at a time (micro_dispatch). There
    // is no FMA, so each multiply-add is a mul and an add, on separate pipes; 2 x 4 needs 4 loads
    // and 2 broadcasts per 8 of each, where 3 x 2 needs 2 and 3 per 6, and it is the faster
    // tile in V8 (docs/performance.md). 8 accumulators, 4 B vectors, a broadcast and a product
    // temporary: 14 of x64's 16 registers (V8 keeps one as scratch).
    // SSE2/AVX2: 6 x 2 accumulators + 2 B vectors + 1 broadcast (+1 product temporary without
    // FMA) = 16 registers, their 16 without spills. AVX-512 (W = 16) has 32 registers: 6 x 4
    // accumulators + 4 + 1 = 29, so a row's broadcast feeds 4 FMAs instead of 2, which speeds up
    // the weight gradients, whose operands stream from memory (docs/performance.md). Narrow
    // products (p·V at head dimension 16) compute only the vectors they need
    // (micro_dispatch).
    static constexpr std::size_t NV = kWasm ? 4 : W == 16 ? 4 : 2;
    static constexpr std::size_t NR = NV * W;  // columns of a micro-tile
    // A partial strip (the right edge of C, or a product narrower than NR) computes, packs and
    // stores only the vectors that hold its columns (micro_dispatch, pack_b). Not in
    // WebAssembly, whose strips are 16 columns and whose tiles run 2 rows at a time: 6 rows of
    // trimmed strips would spill in V8.
    static constexpr bool kTrimsPartialStrips = !kWasm;
    // K block of a product that reads A transposed (the weight gradients dW = dYᵀ·X, K = tokens):
    // in WebAssembly 128, so the A rows a micro-tile reads, 64-256 floats apart, fit L1's sets;
    // natively 128 is no better than matmul.cpp's KC of 256 (docs/performance.md).
    static constexpr std::size_t kKcTransA = kWasm ? 128 : 256;
    // matmul reads a row-major B in place, without packing it, when ldb is at most this (see
    // matmul.cpp for the other conditions). Farther apart (1024³, 512³: a strip's rows 2-4 KiB
    // apart, every row its own page or cache set) packed B is faster; up to 256 floats in place is
    // as fast on 1 thread and faster on 2, with no packing job and its barrier. WebAssembly always
    // packs: in V8 the products read B in place are slower than the packing costs
    // (docs/performance.md).
    static constexpr std::size_t kMaxLdbInPlace = kWasm ? 0 : 256;
    // Whether the micro-kernel addresses A's rows by index (x86's base plus scaled index)
    // rather than by pointer bumps: never when compiled to WebAssembly, which has no scaled-index
    // addressing, and not in the WebAssembly kernels natively either (the same sums in the same
    // order; the same code).
#if defined(__wasm__)
    static constexpr bool kIndexedA = false;
#else
    static constexpr bool kIndexedA = !kWasm;
#endif
};

// Packs rows [i0, i0 + mc) x inner indices [p0, p0 + kc) of op(A) into ap, as groups of MR rows:
// ap[g·MR·kc + p·MR + r] = op(A)[i0 + g·MR + r][p0 + p]. Rows past mc in the last group are left
// unwritten: the micro-kernel for a short group never reads them.
// a: (M, K) with lda when !trans_a; (K, M) with lda when trans_a.
template <class Arch>
void pack_a(bool trans_a, const float* a, std::size_t lda, std::size_t i0, std::size_t mc, std::size_t p0,
            std::size_t kc, float* ap) {
    constexpr std::size_t MR = MatmulShape<Arch>::MR;
    for (std::size_t g = 0; g * MR < mc; ++g) {
        const std::size_t rows = simd::min_size(MR, mc - g * MR);
        float* dst = ap + g * MR * kc;
        if (!trans_a) {
            for (std::size_t r = 0; r < rows; ++r) {
                const float* src = a + (i0 + g * MR + r) * lda + p0;
                for (std::size_t p = 0; p < kc; ++p) dst[p * MR + r] = src[p];
            }
        } else {
            for (std::size_t p = 0; p < kc; ++p) {
                const float* src = a + (p0 + p) * lda + i0 + g * MR;
                for (std::size_t r = 0; r < rows; ++r) dst[p * MR + r] = src[r];
            }
        }
    }
}

// Packs inner indices [p0, p0 + kc) x columns [j0, j0 + nc) of op(B) into bp as strips of NR
// columns: bp[s·kc·NR + p·NR + j] = op(B)[p0 + p][j0 + s·NR + j], zero past column nc up to
// the end of its vector (of the strip in WebAssembly): the columns the micro-kernel reads.
// b: (K, N) with ldb when !trans_b; (N, K) with ldb when trans_b.
template <class Arch>
void pack_b(bool trans_b, const float* b, std::size_t ldb, std::size_t p0, std::size_t kc, std::size_t j0,
            std::size_t nc, float* bp) {
    using S = MatmulShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t NR = S::NR, NV = S::NV, W = S::W;
    for (std::size_t s = 0; s * NR < nc; ++s) {
        const std::size_t cols = simd::min_size(NR, nc - s * NR);
        // Columns the micro-kernel reads: a partial strip's vectors that hold its columns
        // (kTrimsPartialStrips), or the whole strip. With AVX-512's 64-column strips a
        // head-dimension-16 product would otherwise pack 48 zero columns per row of B.
        const std::size_t width = S::kTrimsPartialStrips ? (cols + W - 1) / W * W : NR;
        float* dst = bp + s * kc * NR;
        if (!trans_b) {
            for (std::size_t p = 0; p < kc; ++p) {
                const float* src = b + (p0 + p) * ldb + j0 + s * NR;
                if (cols == NR) {
                    for (std::size_t v = 0; v < NV; ++v)
                        Batch::load_unaligned(src + v * W).store_aligned(dst + p * NR + v * W);
                } else {
                    std::size_t j = 0;
                    for (; j + W <= cols; j += W) Batch::load_unaligned(src + j).store_aligned(dst + p * NR + j);
                    for (; j < cols; ++j) dst[p * NR + j] = src[j];
                    for (; j < width; ++j) dst[p * NR + j] = 0.0f;
                }
            }
        } else {
            // Read each row of B (a column of op(B)) contiguously; the strided writes stay in
            // the L1-sized strip. Groups of 4 columns x 4 p go through a register transpose.
            const float* src0 = b + (j0 + s * NR) * ldb + p0;  // column j of op(B) at src0 + j·ldb
            std::size_t j = 0;
#if ATTNLAB_SSE_TRANSPOSE
            for (; j + 4 <= cols; j += 4) {
                const float* src = src0 + j * ldb;
                std::size_t p = 0;
                for (; p + 4 <= kc; p += 4) simd::transpose4<Arch>(src + p, ldb, dst + p * NR + j, NR);
                for (; p < kc; ++p) {
                    for (std::size_t jj = 0; jj < 4; ++jj) dst[p * NR + j + jj] = src[jj * ldb + p];
                }
            }
#endif
            for (; j < cols; ++j) {
                const float* src = src0 + j * ldb;
                for (std::size_t p = 0; p < kc; ++p) dst[p * NR + j] = src[p];
            }
            for (std::size_t j = cols; j < width; ++j) {
                for (std::size_t p = 0; p < kc; ++p) dst[p * NR + j] = 0.0f;
            }
        }
    }
}

// The epilogue of one stored vector x of C (operand: the W gate or added values at x, for
// Kind::gate and Kind::add): see
// attnlab/kernels/epilogue.hpp. The ReLU keeps NaN like relu_forward (x < 0 is false for NaN).
template <class Arch>
inline simd::Batch<Arch> epilogue_vector(simd::Batch<Arch> x, Epilogue::Kind kind, const float* operand) {
    using Batch = simd::Batch<Arch>;
    const Batch zero(0.0f);
    if (kind == Epilogue::Kind::relu) return simd::select(x < zero, zero, x);
    if (kind == Epilogue::Kind::gate) return simd::select(Batch::load_unaligned(operand) > zero, x, zero);
    if (kind == Epilogue::Kind::add) return x + Batch::load_unaligned(operand);
    return x;
}

// C tile (R, cols) (+)= A (R, kc) · bp (kc, NR), cols <= NR; R <= MR rows (2·MR for the
// one-vector strips of gemm_rows); only the first NVC vectors of the strip are computed
// (cols <= NVC·W: micro_dispatch trims partial strips). Without add, a
// non-null bias (the tile's NR columns of a bias row) is added in the store: C = bias + A·B,
// the same single rounding as C = bias followed by C += A·B, without the extra pass over C.
// Then the epilogue `kind` (operand: the tile's top-left gate or added value, indexed like c).
// A element (r, p) is a[r·rs + p·cs]: a packed group has rs = 1, cs = MR; A read in place has
// rs = lda, cs = 1 (row-major) or rs = 1, cs = lda (transposed). bp: the B strip, its row p at
// bp + p·bs (bs = NR when packed, B's ldb when read in place); c: top-left of the tile with ldc.
template <class Arch, std::size_t R, std::size_t NVC = MatmulShape<Arch>::NV>
void micro_kernel(std::size_t kc, const float* a, std::size_t rs, std::size_t cs, const float* bp, std::size_t bs,
                  float* c, std::size_t ldc, std::size_t cols, bool add, const float* bias, Epilogue::Kind kind,
                  const float* operand) {
    using S = MatmulShape<Arch>;
    using Batch = typename S::Batch;
    constexpr std::size_t W = S::W;
    constexpr std::size_t NV = NVC;  // vectors computed: the strip's first NVC of S::NV
    static_assert(NVC >= 1 && NVC <= S::NV, "a micro-tile computes 1 to NV vectors of its strip");
    Batch acc[R][NV];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch(0.0f);
    }
    // Pointer bumps, not p·cs and p·NR: WebAssembly has no scaled-index addressing, and V8
    // kept an integer multiply and shifts per p for the indexed form.
    const float* arow[R];  // A row r at the current p, advanced by cs
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) arow[r] = a + r * rs;
    const float* bcur = bp;  // the B row of the current p (bs floats apart)
    // x86 with A's rows in place (cs = 1): one index for every row (arow[r][p], base plus
    // scaled index), not R pointer bumps per p. Both loops unrolled 4 times, which GCC does not
    // do by itself: the weight gradients (64 x 256 x 2048 and kin) gain most
    // (docs/performance.md). The same multiply-adds in the same order as the loop below.
    if (S::kIndexedA && cs == 1) {
#pragma GCC unroll 4
        for (std::size_t p = 0; p < kc; ++p, bcur += bs) {
            Batch bv[NV];
            ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) bv[v] = Batch::load_unaligned(bcur + v * W);
            ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
                const Batch av(arow[r][p]);
                ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(av, bv[v], acc[r][v]);
            }
        }
    } else if (S::kIndexedA && rs == 1) {
        // A transposed in place (or packed): row r at a constant offset from one pointer.
        const float* acur = a;
#pragma GCC unroll 4
        for (std::size_t p = 0; p < kc; ++p, bcur += bs, acur += cs) {
            Batch bv[NV];
            ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) bv[v] = Batch::load_unaligned(bcur + v * W);
            ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
                const Batch av(acur[r]);
                ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(av, bv[v], acc[r][v]);
            }
        }
    } else {
        for (std::size_t p = 0; p < kc; ++p, bcur += bs) {
            Batch bv[NV];
            ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) bv[v] = Batch::load_unaligned(bcur + v * W);
            ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
                const Batch av(*arow[r]);
                arow[r] += cs;
                ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) acc[r][v] = simd::fma(av, bv[v], acc[r][v]);
            }
        }
    }
    // Every vector computed lies inside the valid columns: the whole strip, or a trimmed one
    // whose columns fill its vectors (p·V at head dimension 16 is one whole vector).
    if (cols >= NV * W) {
        if (kind == Epilogue::Kind::none) {
            if (!add && bias) {
                Batch bv[NV];
                ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) bv[v] = Batch::load_unaligned(bias + v * W);
                ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
                    ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
                        (bv[v] + acc[r][v]).store_unaligned(c + r * ldc + v * W);
                    }
                }
                return;
            }
            ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
                ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
                    float* out = c + r * ldc + v * W;
                    (add ? Batch::load_unaligned(out) + acc[r][v] : acc[r][v]).store_unaligned(out);
                }
            }
            return;
        }
        ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
            ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) {
                float* out = c + r * ldc + v * W;
                Batch x = acc[r][v];
                if (add) x = Batch::load_unaligned(out) + x;
                else if (bias) x = Batch::load_unaligned(bias + v * W) + x;
                epilogue_vector<Arch>(x, kind, operand ? operand + r * ldc + v * W : nullptr).store_unaligned(out);
            }
        }
        return;
    }
    // The last vector crosses the edge of C (cols not a multiple of W): the tile goes through
    // an aligned buffer and only the valid columns are kept. Scalar a + b rounds exactly like
    // a lane of the vector add. Every loop over acc (here and above) is unrolled completely
    // (ATTNLAB_UNROLL_ALL), so acc is only ever indexed by constants and never has its address
    // taken: taken by reference (in a lambda, say), GCC keeps all 24 AVX-512 accumulators in a
    // stack copy, zeroed and written back on every call (48 extra 64-byte stores per
    // micro-tile), and an index known only at run time makes LLVM keep them in memory in
    // WebAssembly, zeroed by a memset per call.
    alignas(64) float tile[R][NV * W];
    ATTNLAB_UNROLL_ALL for (std::size_t r = 0; r < R; ++r) {
        ATTNLAB_UNROLL_ALL for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_aligned(&tile[r][v * W]);
    }
    for (std::size_t r = 0; r < R; ++r) {
        float* out = c + r * ldc;
        const float* operand_row = operand ? operand + r * ldc : nullptr;
        std::size_t j = 0;
        for (; j + W <= cols; j += W) {  // the whole vectors, as vectors
            Batch x = Batch::load_aligned(&tile[r][j]);
            if (add) x = Batch::load_unaligned(out + j) + x;
            else if (bias) x = Batch::load_unaligned(bias + j) + x;
            epilogue_vector<Arch>(x, kind, operand_row ? operand_row + j : nullptr).store_unaligned(out + j);
        }
        for (; j < cols; ++j) {
            const float t = add ? out[j] + tile[r][j] : bias ? bias[j] + tile[r][j] : tile[r][j];
            out[j] = epilogue_scalar(t, kind, operand_row ? operand_row + j : nullptr);  // kernel_table.hpp
        }
    }
}

// Runs micro_kernel<Arch, R, NVC> with NVC = the vectors that hold `cols` columns (1..NV).
template <class Arch, std::size_t R, std::size_t NVC = MatmulShape<Arch>::NV>
void micro_trimmed(std::size_t kc, const float* a, std::size_t rs, std::size_t cs, const float* bp, std::size_t bs,
                   float* c, std::size_t ldc, std::size_t cols, bool add, const float* bias, Epilogue::Kind kind,
                   const float* operand) {
    if constexpr (NVC > 1) {
        if (cols <= (NVC - 1) * MatmulShape<Arch>::W) {
            micro_trimmed<Arch, R, NVC - 1>(kc, a, rs, cs, bp, bs, c, ldc, cols, add, bias, kind, operand);
            return;
        }
    }
    micro_kernel<Arch, R, NVC>(kc, a, rs, cs, bp, bs, c, ldc, cols, add, bias, kind, operand);
}

// Runs the micro-kernel specialised for `rows` (1..MR) rows. A partial strip (the right edge of
// C, or a product narrower than NR such as p·V with a head dimension of 16) computes only the
// vectors that hold its columns where kTrimsPartialStrips: with AVX-512's strips of 4 vectors
// (64 columns) that is a quarter of the work at 16 columns.
template <class Arch>
void micro_dispatch(std::size_t rows, std::size_t kc, const float* a, std::size_t rs, std::size_t cs,
                    const float* bp, std::size_t bs, float* c, std::size_t ldc, std::size_t cols, bool add,
                    const float* bias, Epilogue::Kind kind, const float* operand) {
    static_assert(kMatmulMR == 6, "update the dispatch when MR changes");
    if constexpr (MatmulShape<Arch>::kTrimsPartialStrips) {
        if (cols < MatmulShape<Arch>::NR) {
            simd::dispatch_rows<kMatmulMR>(rows, [&](auto r) {
                micro_trimmed<Arch, decltype(r)::value>(kc, a, rs, cs, bp, bs, c, ldc, cols, add, bias, kind, operand);
            });
            return;
        }
    }
    if constexpr (MatmulShape<Arch>::kWasm) {
        // WebAssembly: 2 rows at a time (see MatmulShape); an odd last row runs alone.
        if (rows >= 3) {
            micro_kernel<Arch, 2>(kc, a, rs, cs, bp, bs, c, ldc, cols, add, bias, kind, operand);
            micro_dispatch<Arch>(rows - 2, kc, a + 2 * rs, rs, cs, bp, bs, c + 2 * ldc, ldc, cols, add, bias, kind,
                                 operand ? operand + 2 * ldc : nullptr);
        } else if (rows == 2) {
            micro_kernel<Arch, 2>(kc, a, rs, cs, bp, bs, c, ldc, cols, add, bias, kind, operand);
        } else {
            micro_kernel<Arch, 1>(kc, a, rs, cs, bp, bs, c, ldc, cols, add, bias, kind, operand);
        }
    } else {
        simd::dispatch_rows<kMatmulMR>(rows, [&](auto r) {
            micro_kernel<Arch, decltype(r)::value>(kc, a, rs, cs, bp, bs, c, ldc, cols, add, bias, kind, operand);
        });
    }
}

// gemm_rows reads A in place, without packing it, when lda is at most kMatmulMaxLdaInPlace. The micro-kernel broadcasts one A
// element per row and p, so A needs no vector layout; packing pays only when A's rows are so far
// apart that the block's cache lines conflict or miss the TLB. In place is as fast or faster
// from 64³ to 1024³, and faster for the thin products of a small model (2048 x 64 x 64),
// where packing A costs as much as a quarter of the multiply-adds. The choice cannot change a result: the micro-kernel does the same
// operations in the same order either way.
constexpr std::size_t kMaxLdaInPlace = kMatmulMaxLdaInPlace;

// C rows [i_begin, i_end) x columns [j0, j0 + nc) (+)= op(A) rows x [p0, p0 + kc) · B panel.
// bp: the panel (kc, nc), its strip s at bp + s·b_strip and each strip's row p bs floats after
// row p - 1: packed by pack_b (bs = NR, b_strip = kc·NR), or B itself read in place (bs = ldb,
// b_strip = NR; matmul.cpp decides); ap: scratch for kMatmulMC x kc packed A floats
// (used only when A is packed, see kMaxLdaInPlace); add = accumulate into C instead of
// overwriting; bias (indexed by C's column, or null) is added when overwriting; epilogue is
// applied by the stores (the caller passes it with the last K block only).
template <class Arch>
void gemm_rows(bool trans_a, const float* a, std::size_t lda, float* ap, const float* bp, std::size_t bs,
               std::size_t b_strip, float* c, std::size_t ldc, std::size_t i_begin, std::size_t i_end, std::size_t j0,
               std::size_t nc, std::size_t p0, std::size_t kc, bool add, const float* bias,
               const Epilogue& epilogue) {
    using S = MatmulShape<Arch>;
    constexpr std::size_t MR = S::MR, NR = S::NR, MC = kMatmulMC;
    static_assert(MC % MR == 0, "row blocks must hold whole micro-tile row groups");
    const bool in_place = lda <= kMaxLdaInPlace;
    const Epilogue::Kind kind = epilogue.kind;
    // The operand of C's element (i, j), indexed like C; null without one.
    const auto operand_at = [&](std::size_t i, std::size_t j) -> const float* {
        return epilogue.operand ? epilogue.operand + i * ldc + j : nullptr;
    };
    // Element (i, p) of op(A) in place: a[i·lda + p], or a[p·lda + i] when transposed.
    const std::size_t rs = in_place ? (trans_a ? 1 : lda) : 1;
    const std::size_t cs = in_place ? (trans_a ? lda : 1) : MR;
    for (std::size_t i0 = i_begin; i0 < i_end; i0 += MC) {
        const std::size_t mc = simd::min_size(MC, i_end - i0);
        if (!in_place) pack_a<Arch>(trans_a, a, lda, i0, mc, p0, kc, ap);
        for (std::size_t s = 0; s * NR < nc; ++s) {
            const std::size_t cols = simd::min_size(NR, nc - s * NR);
            // A strip of one vector with A in place (p·V and its gradients at head dimension 16
            // on AVX-512): 12 rows at a time, so 12 independent FMA chains instead of 6 hide the
            // FMA latency. Only where 12 accumulators leave room (AVX-512's 32 registers).
            if constexpr (S::W == 16) {
                if (in_place && cols <= S::W) {
                    const float* bs_strip = bp + s * b_strip;
                    float* c_strip = c + j0 + s * NR;
                    const float* bias_strip = bias ? bias + j0 + s * NR : nullptr;
                    std::size_t i = i0;
                    for (; i + 2 * MR <= i0 + mc; i += 2 * MR) {
                        const float* ai = trans_a ? a + p0 * lda + i : a + i * lda + p0;
                        micro_kernel<Arch, 2 * MR, 1>(kc, ai, rs, cs, bs_strip, bs, c_strip + i * ldc, ldc, cols,
                                                      add, bias_strip, kind, operand_at(i, j0 + s * NR));
                    }
                    for (; i < i0 + mc; i += MR) {
                        const float* ai = trans_a ? a + p0 * lda + i : a + i * lda + p0;
                        micro_dispatch<Arch>(simd::min_size(MR, i0 + mc - i), kc, ai, rs, cs, bs_strip, bs,
                                             c_strip + i * ldc, ldc, cols, add, bias_strip, kind,
                                             operand_at(i, j0 + s * NR));
                    }
                    continue;
                }
            }
            for (std::size_t g = 0; g * MR < mc; ++g) {
                const std::size_t rows = simd::min_size(MR, mc - g * MR);
                const std::size_t i = i0 + g * MR;
                const float* ag = in_place ? (trans_a ? a + p0 * lda + i : a + i * lda + p0) : ap + g * MR * kc;
                micro_dispatch<Arch>(rows, kc, ag, rs, cs, bp + s * b_strip, bs, c + i * ldc + j0 + s * NR, ldc,
                                     cols, add, bias ? bias + j0 + s * NR : nullptr, kind, operand_at(i, j0 + s * NR));
            }
        }
    }
}

// The FMA roofline of this ISA, for benchmarks: kPeakChains independent multiply-add chains
// that stay in registers (enough to cover the FMA latency on two pipes: 5 cycles x 2), `rounds`
// times. Returns a value that depends on every chain so none can be optimised away.
constexpr std::size_t kPeakChains = 12;

template <class Arch>
float fma_peak(std::size_t rounds) {
    using Batch = simd::Batch<Arch>;
    Batch acc[kPeakChains];
    for (std::size_t i = 0; i < kPeakChains; ++i) acc[i] = Batch(0.01f * static_cast<float>(i));
    const Batch a(0.999f), b(0.001f);  // a fixed point at 1: no overflow, no denormals
    for (std::size_t r = 0; r < rounds; ++r) {
        for (std::size_t i = 0; i < kPeakChains; ++i) acc[i] = simd::fma(acc[i], a, b);
    }
    Batch sum = acc[0];
    for (std::size_t i = 1; i < kPeakChains; ++i) sum += acc[i];
    return simd::hadd(sum);
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
