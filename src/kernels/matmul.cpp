// Single-precision GEMM in the BLIS/GotoBLAS layout (Goto & van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication", 2008), with xsimd for the arithmetic.
//
// Legend: M rows of C, N columns of C, K the inner (summed) dimension.
//   C (M, N) (+)= op(A) (M, K) · op(B) (K, N), op = identity or transpose.
//
// Loop nest (outermost first), one implementation for all three variants; only the packing
// routines know whether an operand is transposed:
//   j0 over N in NC columns   | B panel (KC, NC) packed once per (j0, p0) into the caller's
//   p0 over K in KC rows      |   buffer, as strips of NR columns: bp[strip][p][NR]  (L2)
//     parallel_for over row groups of MR rows (each thread owns whole rows of C):
//       i0 over its rows in MC  | A block (MC, KC) packed per thread: ap[group][p][MR] (L2)
//         strip over NR columns | one B strip (KC, NR) stays in L1
//           group over MR rows  | micro-kernel: MR x NR accumulators in registers, FMA over kc
//
// Determinism: an element of C is the float sum over K blocks (in order) of a per-block FMA
// chain over p (in order), in one SIMD lane. Neither the thread count nor the chunk a row lands
// in changes that sequence (chunks are whole row groups; tiles only differ in which rows and
// lanes are kept), so results are bit-identical for any number of threads.
#include "attnlab/kernels/matmul.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"

namespace attnlab {
namespace kernels {
namespace {

using Batch = xsimd::batch<float>;
constexpr std::size_t W = Batch::size;  // floats per SIMD vector: 4 (SSE, WASM), 8 (AVX2)
constexpr std::size_t MR = 6;           // rows of a micro-tile
constexpr std::size_t NV = 2;           // SIMD vectors per micro-tile row
constexpr std::size_t NR = NV * W;      // columns of a micro-tile
// 6 x 2 accumulators + 2 B vectors + 1 broadcast (+1 product temporary without FMA) = 16
// registers: fits SSE2/AVX2's 16 without spills.
constexpr std::size_t KC = 256;      // K block: one B strip (KC, NR) is 8-16 KiB, stays in L1
constexpr std::size_t MC = 16 * MR;  // row block: packed A (MC, KC) is 96 KiB, stays in L2
constexpr std::size_t NC = 512;      // column panel: packed B (KC, NC) is 512 KiB
// A chunk of rows handed to a thread should hold at least this many multiply-adds (~10-20 µs),
// so small products (attention on short sequences) do not pay for waking the pool: measured,
// 64³ on 2 threads ran at half the speed of 1 thread with 2^17.
constexpr std::size_t kMinMacsPerChunk = std::size_t{1} << 18;

// Floats of B a thread packs per chunk before packing is split across threads.
constexpr std::size_t kMinPackPerChunk = std::size_t{1} << 16;

static_assert(MC % MR == 0, "row blocks must hold whole micro-tile row groups");
static_assert(NC % NR == 0, "column panels must hold whole micro-tile strips");

// Grow-only scratch buffer with 64-byte alignment, one per thread (thread_local below), so
// packing never allocates inside the loops and threads never share scratch.
class Scratch {
public:
    float* get(std::size_t n) {
        constexpr std::size_t pad = 64 / sizeof(float);
        if (storage_.size() < n + pad) storage_.resize(n + pad);
        const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
        const std::size_t offset = ((64 - address % 64) % 64) / sizeof(float);
        return storage_.data() + offset;
    }

private:
    std::vector<float> storage_;
};

// Packs rows [i0, i0 + mc) x inner indices [p0, p0 + kc) of op(A) into ap, as groups of MR rows:
// ap[g·MR·kc + p·MR + r] = op(A)[i0 + g·MR + r][p0 + p]. Rows past mc in the last group are left
// unwritten: the micro-kernel for a short group never reads them.
// a: (M, K) with lda when !TransA; (K, M) with lda when TransA.
template <bool TransA>
void pack_a(const float* a, std::size_t lda, std::size_t i0, std::size_t mc, std::size_t p0, std::size_t kc,
            float* ap) {
    for (std::size_t g = 0; g * MR < mc; ++g) {
        const std::size_t rows = std::min(MR, mc - g * MR);
        float* dst = ap + g * MR * kc;
        if (!TransA) {
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
// columns: bp[s·kc·NR + p·NR + j] = op(B)[p0 + p][j0 + s·NR + j], zero past column nc.
// b: (K, N) with ldb when !TransB; (N, K) with ldb when TransB.
template <bool TransB>
void pack_b(const float* b, std::size_t ldb, std::size_t p0, std::size_t kc, std::size_t j0, std::size_t nc,
            float* bp) {
    for (std::size_t s = 0; s * NR < nc; ++s) {
        const std::size_t cols = std::min(NR, nc - s * NR);
        float* dst = bp + s * kc * NR;
        if (!TransB) {
            for (std::size_t p = 0; p < kc; ++p) {
                const float* src = b + (p0 + p) * ldb + j0 + s * NR;
                if (cols == NR) {
                    for (std::size_t v = 0; v < NV; ++v)
                        Batch::load_unaligned(src + v * W).store_aligned(dst + p * NR + v * W);
                } else {
                    std::size_t j = 0;
                    for (; j < cols; ++j) dst[p * NR + j] = src[j];
                    for (; j < NR; ++j) dst[p * NR + j] = 0.0f;
                }
            }
        } else {
            // Read each row of B (a column of op(B)) contiguously; the strided writes stay in
            // the L1-sized strip.
            for (std::size_t j = 0; j < cols; ++j) {
                const float* src = b + (j0 + s * NR + j) * ldb + p0;
                for (std::size_t p = 0; p < kc; ++p) dst[p * NR + j] = src[p];
            }
            for (std::size_t j = cols; j < NR; ++j) {
                for (std::size_t p = 0; p < kc; ++p) dst[p * NR + j] = 0.0f;
            }
        }
    }
}

// C tile (R, cols) (+)= ap (R of MR, kc) · bp (kc, NR), cols <= NR; R <= MR rows.
// ap: packed A group, bp: packed B strip (64-byte aligned), c: top-left of the tile with ldc.
template <std::size_t R>
void micro_kernel(std::size_t kc, const float* ap, const float* bp, float* c, std::size_t ldc, std::size_t cols,
                  bool add) {
    Batch acc[R][NV];
    for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Batch(0.0f);
    }
    for (std::size_t p = 0; p < kc; ++p) {
        Batch bv[NV];
        for (std::size_t v = 0; v < NV; ++v) bv[v] = Batch::load_aligned(bp + p * NR + v * W);
        for (std::size_t r = 0; r < R; ++r) {
            const Batch av(ap[p * MR + r]);
            for (std::size_t v = 0; v < NV; ++v) acc[r][v] = xsimd::fma(av, bv[v], acc[r][v]);
        }
    }
    if (cols == NR) {
        for (std::size_t r = 0; r < R; ++r) {
            for (std::size_t v = 0; v < NV; ++v) {
                float* out = c + r * ldc + v * W;
                (add ? Batch::load_unaligned(out) + acc[r][v] : acc[r][v]).store_unaligned(out);
            }
        }
    } else {
        // Partial strip at the right edge of C: spill the tile and keep the valid columns.
        // Scalar a + b rounds exactly like a lane of the vector add above.
        alignas(64) float tile[NR];
        for (std::size_t r = 0; r < R; ++r) {
            for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_aligned(tile + v * W);
            float* out = c + r * ldc;
            for (std::size_t j = 0; j < cols; ++j) out[j] = add ? out[j] + tile[j] : tile[j];
        }
    }
}

// Runs the micro-kernel specialised for `rows` (1..MR) rows.
void micro_dispatch(std::size_t rows, std::size_t kc, const float* ap, const float* bp, float* c, std::size_t ldc,
                    std::size_t cols, bool add) {
    static_assert(MR == 6, "update the dispatch when MR changes");
    switch (rows) {
        case 6: micro_kernel<6>(kc, ap, bp, c, ldc, cols, add); break;
        case 5: micro_kernel<5>(kc, ap, bp, c, ldc, cols, add); break;
        case 4: micro_kernel<4>(kc, ap, bp, c, ldc, cols, add); break;
        case 3: micro_kernel<3>(kc, ap, bp, c, ldc, cols, add); break;
        case 2: micro_kernel<2>(kc, ap, bp, c, ldc, cols, add); break;
        default: micro_kernel<1>(kc, ap, bp, c, ldc, cols, add); break;
    }
}

// C rows [i_begin, i_end) x columns [j0, j0 + nc) (+)= op(A) rows x [p0, p0 + kc) · packed B.
// bp: the packed panel (KC, NC) from pack_b; add = accumulate into C instead of overwriting.
template <bool TransA>
void row_range(const float* a, std::size_t lda, const float* bp, float* c, std::size_t ldc, std::size_t i_begin,
               std::size_t i_end, std::size_t j0, std::size_t nc, std::size_t p0, std::size_t kc, bool add) {
    thread_local Scratch a_scratch;
    float* ap = a_scratch.get(MC * kc);
    for (std::size_t i0 = i_begin; i0 < i_end; i0 += MC) {
        const std::size_t mc = std::min(MC, i_end - i0);
        pack_a<TransA>(a, lda, i0, mc, p0, kc, ap);
        for (std::size_t s = 0; s * NR < nc; ++s) {
            const std::size_t cols = std::min(NR, nc - s * NR);
            for (std::size_t g = 0; g * MR < mc; ++g) {
                const std::size_t rows = std::min(MR, mc - g * MR);
                micro_dispatch(rows, kc, ap + g * MR * kc, bp + s * kc * NR, c + (i0 + g * MR) * ldc + j0 + s * NR, ldc,
                               cols, add);
            }
        }
    }
}

// C (M, N) (+)= op(A) (M, K) · op(B) (K, N); see the file comment for the loop nest.
template <bool TransA, bool TransB>
void gemm(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc, std::size_t m,
          std::size_t n, std::size_t k, Accumulate acc) {
    // A leading dimension only matters when its matrix has a second row.
    ATTNLAB_DEBUG_ASSERT(m <= 1 || ldc >= n);
    ATTNLAB_DEBUG_ASSERT(TransA ? (k <= 1 || lda >= m) : (m <= 1 || lda >= k));
    ATTNLAB_DEBUG_ASSERT(TransB ? (n <= 1 || ldb >= k) : (k <= 1 || ldb >= n));
    if (m == 0 || n == 0) return;
    if (k == 0) {  // empty sum: C = 0, or C unchanged when accumulating
        if (acc == Accumulate::no) {
            for (std::size_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
        }
        return;
    }
    thread_local Scratch b_scratch;  // the calling thread's; workers only read it
    const std::size_t row_groups = (m + MR - 1) / MR;
    for (std::size_t j0 = 0; j0 < n; j0 += NC) {
        const std::size_t nc = std::min(NC, n - j0);
        const std::size_t strips = (nc + NR - 1) / NR;
        for (std::size_t p0 = 0; p0 < k; p0 += KC) {
            const std::size_t kc = std::min(KC, k - p0);
            float* bp = b_scratch.get(strips * NR * kc);
            // Packing is a plain copy, so splitting it over strips cannot change any result; it
            // matters when few rows of C (decoding one token) leave packing as much work as FMAs.
            parallel_for(
                0, strips,
                [&](std::size_t s_begin, std::size_t s_end) {
                    const std::size_t cols_end = std::min(s_end * NR, nc);
                    pack_b<TransB>(b, ldb, p0, kc, j0 + s_begin * NR, cols_end - s_begin * NR, bp + s_begin * kc * NR);
                },
                std::max<std::size_t>(1, kMinPackPerChunk / (kc * NR)));
            const bool add = acc == Accumulate::yes || p0 > 0;
            const std::size_t grain = std::max<std::size_t>(1, kMinMacsPerChunk / (MR * nc * kc));
            parallel_for(
                0, row_groups,
                [&](std::size_t g_begin, std::size_t g_end) {
                    row_range<TransA>(a, lda, bp, c, ldc, g_begin * MR, std::min(g_end * MR, m), j0, nc, p0, kc, add);
                },
                grain);
        }
    }
}

}  // namespace

void matmul_nn(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc) {
    gemm<false, false>(a, lda, b, ldb, c, ldc, m, n, k, acc);
}

void matmul_nt(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc) {
    gemm<false, true>(a, lda, b, ldb, c, ldc, m, n, k, acc);
}

void matmul_tn(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc) {
    gemm<true, false>(a, lda, b, ldb, c, ldc, m, n, k, acc);
}

// The references spell out the index arithmetic of each variant once, with nothing clever.
void matmul_nn_reference(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                         std::size_t m, std::size_t n, std::size_t k) {
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            double sum = 0.0;
            for (std::size_t p = 0; p < k; ++p) sum += double(a[i * lda + p]) * double(b[p * ldb + j]);
            c[i * ldc + j] = static_cast<float>(sum);
        }
    }
}

void matmul_nt_reference(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                         std::size_t m, std::size_t n, std::size_t k) {
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            double sum = 0.0;
            for (std::size_t p = 0; p < k; ++p) sum += double(a[i * lda + p]) * double(b[j * ldb + p]);
            c[i * ldc + j] = static_cast<float>(sum);
        }
    }
}

void matmul_tn_reference(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                         std::size_t m, std::size_t n, std::size_t k) {
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            double sum = 0.0;
            for (std::size_t p = 0; p < k; ++p) sum += double(a[p * lda + i]) * double(b[p * ldb + j]);
            c[i * ldc + j] = static_cast<float>(sum);
        }
    }
}

}  // namespace kernels

namespace {
// Allocates the (m, n) result after checking it fits the memory budget.
Tensor2 make_result(std::size_t m, std::size_t n, const char* where) {
    require_allocatable({m, n}, where, "the result");
    return Tensor2::from_shape({m, n});
}
}  // namespace

// a: (M, K), b: (K, N) -> (M, N)
Tensor2 matmul(const Tensor2& a, const Tensor2& b) {
    if (a.shape(1) != b.shape(0)) {
        fail<ShapeError>("matmul: inner dimensions differ: a is ", shape_string(a.shape()), ", b is ",
                         shape_string(b.shape()));
    }
    const std::size_t m = a.shape(0), k = a.shape(1), n = b.shape(1);
    Tensor2 c = make_result(m, n, "matmul");
    kernels::matmul_nn(a.data(), k, b.data(), n, c.data(), n, m, n, k);
    return c;
}

// a: (M, K), b: (N, K) -> (M, N)
Tensor2 matmul_nt(const Tensor2& a, const Tensor2& b) {
    if (a.shape(1) != b.shape(1)) {
        fail<ShapeError>("matmul_nt: inner dimensions differ (expected a (M, K), b (N, K)): a is ",
                         shape_string(a.shape()), ", b is ", shape_string(b.shape()));
    }
    const std::size_t m = a.shape(0), k = a.shape(1), n = b.shape(0);
    Tensor2 c = make_result(m, n, "matmul_nt");
    kernels::matmul_nt(a.data(), k, b.data(), k, c.data(), n, m, n, k);
    return c;
}

// a: (K, M), b: (K, N) -> (M, N)
Tensor2 matmul_tn(const Tensor2& a, const Tensor2& b) {
    if (a.shape(0) != b.shape(0)) {
        fail<ShapeError>("matmul_tn: inner dimensions differ (expected a (K, M), b (K, N)): a is ",
                         shape_string(a.shape()), ", b is ", shape_string(b.shape()));
    }
    const std::size_t k = a.shape(0), m = a.shape(1), n = b.shape(1);
    Tensor2 c = make_result(m, n, "matmul_tn");
    kernels::matmul_tn(a.data(), m, b.data(), n, c.data(), n, m, n, k);
    return c;
}

}  // namespace attnlab
