// Single-precision GEMM in the BLIS/GotoBLAS layout (Goto & van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication", 2008). The packing routines and the xsimd micro-kernel
// are in matmul_arch.hpp, compiled per ISA and chosen at run time (kernels/isa.hpp).
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
// lanes are kept), so results are bit-identical for any number of threads. (They may differ
// between ISAs: SSE2 has no fused multiply-add.)
#include "attnlab/kernels/matmul.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "kernel_table.hpp"

namespace attnlab {
namespace kernels {
namespace {

// The micro-kernel and the packing routines are ISA-specific (src/kernels/matmul_arch.hpp, one
// template instantiated per ISA and chosen at run time, kernels/isa.hpp); this file holds the
// loop nest, the scratch buffers and the threading, the same for every ISA.
constexpr std::size_t MR = kMatmulMR;  // rows of a micro-tile; its columns NR = table().nr
constexpr std::size_t KC = 256;        // K block: one B strip (KC, NR) is 8-16 KiB, stays in L1
constexpr std::size_t MC = kMatmulMC;  // row block: packed A (MC, KC) is 96 KiB, stays in L2
constexpr std::size_t NC = 512;        // column panel: packed B (KC, NC) is 512 KiB
// A chunk of rows handed to a thread should hold at least this many multiply-adds (~10-20 µs),
// so small products (attention on short sequences) do not pay for waking the pool: measured,
// 64³ on 2 threads ran at half the speed of 1 thread with 2^17.
constexpr std::size_t kMinMacsPerChunk = std::size_t{1} << 18;

// Floats of B a thread packs per chunk before packing is split across threads.
constexpr std::size_t kMinPackPerChunk = std::size_t{1} << 16;

static_assert(MC % MR == 0, "row blocks must hold whole micro-tile row groups");
static_assert(NC % 16 == 0, "column panels must hold whole micro-tile strips of every ISA");

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
    const KernelTable& isa = table();
    const std::size_t NR = isa.nr;
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
                    isa.pack_b(TransB, b, ldb, p0, kc, j0 + s_begin * NR, cols_end - s_begin * NR,
                               bp + s_begin * kc * NR);
                },
                std::max<std::size_t>(1, kMinPackPerChunk / (kc * NR)));
            const bool add = acc == Accumulate::yes || p0 > 0;
            const std::size_t grain = std::max<std::size_t>(1, kMinMacsPerChunk / (MR * nc * kc));
            parallel_for(
                0, row_groups,
                [&](std::size_t g_begin, std::size_t g_end) {
                    thread_local Scratch a_scratch;
                    float* ap = a_scratch.get(MC * kc);
                    isa.gemm_rows(TransA, a, lda, ap, bp, c, ldc, g_begin * MR, std::min(g_end * MR, m), j0, nc, p0, kc,
                                  add);
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
