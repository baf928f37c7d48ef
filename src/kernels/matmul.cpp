// Single-precision GEMM in the BLIS/GotoBLAS layout (Goto & van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication", 2008). The packing routines and the xsimd micro-kernel
// are in matmul_arch.hpp, compiled per ISA and chosen at run time (kernels/isa.hpp).
//
// Legend: M rows of C, N columns of C, K the inner (summed) dimension.
//   C (M, N) (+)= op(A) (M, K) · op(B) (K, N), op = identity or transpose.
//
// Loop nest (outermost first), one implementation for all three variants; only the packing
// routines know whether an operand is transposed:
//   j0 over N in NC columns   | B panel (kb, NC) packed once per (j0, P0) into the caller's
//   P0 over K in KB rows      |   buffer, per K block of KC rows as strips of NR columns:
//                             |   bp[block][strip][p][NR]; packing is split over (block, strip).
//                             |   A row-major B with near rows is read in place instead.
//     parallel_for over tiles of C (row groups of MR rows x strips of NR columns), one job
//     per panel; a thread's chunk is a run of consecutive tiles
//       p0 over K blocks        | in order, so every element sums its blocks in the same order
//         tile over the chunk   |
//           i0 over its rows in MC | A read in place (or packed per block, for a very long lda)
//             strip over NR columns | one B strip (KC, NR) stays in L1
//               group over MR rows  | micro-kernel: MR x NR accumulators in registers, FMA over kc
//   A product with too few row groups to feed the threads and several K blocks (a weight
//   gradient, 64 x 64 summed over K = 2048) is split over K blocks instead, into partial
//   products that are then added to C in block order.
//
// Determinism: an element of C is the float sum over K blocks (in order) of a per-block FMA
// chain over p (in order), in one SIMD lane. Neither the thread count nor the tile an element
// lands in changes that sequence (tiles only differ in which rows and lanes are kept), so
// results are bit-identical for any number of threads. (They may differ between ISAs: SSE2
// has no fused multiply-add.)
#include "attnlab/kernels/matmul.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "attnlab/core/error.hpp"
#include "attnlab/core/flop_counter.hpp"
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
// (A product that reads A transposed takes the table's K block, matmul_kc_trans_a: 128 in the
// WebAssembly kernels, matmul_arch.hpp.)
constexpr std::size_t MC = kMatmulMC;  // row block of gemm_rows (packed A (MC, KC) is 96 KiB, in L2)
constexpr std::size_t NC = 512;        // column panel
// K rows of B packed per panel when several threads share the work: one job packs them and one
// computes, instead of two jobs per K block (at most 4 MiB of packed B). One thread packs one
// K block at a time, which it then multiplies while the block is still in L1/L2 (8 blocks at
// once would have left them for dW = dYᵀ·X).
constexpr std::size_t KB = 8 * KC;
// A tile of C handed to a thread should hold at least this many multiply-adds (~5 µs), so
// small products (attention on short sequences) do not pay for the pool: with 2^17, 64³ on 2
// threads runs at half the speed of 1 thread.
constexpr std::size_t kMinMacsPerChunk = std::size_t{1} << 18;
// Tiles per thread a panel is cut into when there is enough work: more than the pool's chunks
// per thread, so a weight gradient with few row groups still balances over the threads.
constexpr std::size_t kTilesPerThread = 16;

// Floats of B a thread packs per chunk before packing is split across threads.
constexpr std::size_t kMinPackPerChunk = std::size_t{1} << 16;
// Largest partial-product buffer (floats) a K split may use: 4 MiB.
constexpr std::size_t kMaxSplitFloats = std::size_t{1} << 20;

// Tiles to cut a product of `macs` multiply-adds into: as many as the work allows (each at
// least kMinMacsPerChunk), at most kTilesPerThread per thread of `threads`.
std::size_t tile_count(std::size_t macs, std::size_t threads) {
    return std::max<std::size_t>(1, std::min(macs / kMinMacsPerChunk, kTilesPerThread * threads));
}

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

// p rounded up to the next 64-byte boundary (an external B buffer has kAlignPad floats spare).
constexpr std::size_t kAlignPad = 64 / sizeof(float);
float* align64(float* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    return p + ((64 - address % 64) % 64) / sizeof(float);
}

// One product, C (M, N) (+)= op(A) (M, K) · op(B) (K, N), as gemm's steps read it.
struct GemmCall {
    bool trans_a, trans_b;
    const float* a;
    std::size_t lda;
    const float* b;
    std::size_t ldb;
    float* c;
    std::size_t ldc;
    std::size_t m, n, k;
    Accumulate acc;
    const float* bias;
    const Epilogue& epilogue;
};

// The product with K = 0, an empty sum: C = bias or 0, or C itself when accumulating; then the
// epilogue.
void gemm_empty_sum(const GemmCall& g) {
    if (g.acc == Accumulate::yes && g.epilogue.kind == Epilogue::Kind::none) return;
    for (std::size_t i = 0; i < g.m; ++i) {
        for (std::size_t j = 0; j < g.n; ++j) {
            const float* operand = g.epilogue.operand ? g.epilogue.operand + i * g.ldc + j : nullptr;
            const float sum = g.acc == Accumulate::yes ? g.c[i * g.ldc + j] : g.bias ? g.bias[j] : 0.0f;
            g.c[i * g.ldc + j] = epilogue_scalar(sum, g.epilogue.kind, operand);
        }
    }
}

// One B panel: columns [j0, j0 + nc) in `strips` strips of NR, K rows [pb, pb + kb) in `blocks`
// blocks of kc_block. Read in place, its rows are B's rows (row_stride = ldb) and its strips NR
// columns apart; packed, block q (rows pb + q·kc_block ..) starts at q·kc_block·strips·NR, its
// strip s at s·kc_q·NR, rows NR apart.
struct BPanel {
    std::size_t j0, nc, strips, pb, kb, kc_block, blocks, nr;
    bool in_place;
    const float* in_place_rows;  // b + pb·ldb + j0, when in place
    float* packed;               // (blocks, strips, kc_q, NR), when packed
    std::size_t row_stride;      // floats between a strip's rows
    std::size_t block_kc(std::size_t q) const { return std::min(kc_block, kb - q * kc_block); }
    const float* block(std::size_t q, std::size_t ldb) const {
        return in_place ? in_place_rows + q * kc_block * ldb : packed + q * kc_block * strips * nr;
    }
    // floats between the strips of block q
    std::size_t strip(std::size_t q) const { return in_place ? nr : block_kc(q) * nr; }
};

// Packs the panel's B strips. Packing is a plain copy, so splitting it cannot change any result;
// it matters when few rows of C (decoding one token) leave packing as much work as the FMAs.
void pack_b_panel(const GemmCall& g, const KernelTable& isa, const BPanel& p) {
    const std::size_t nr = p.nr;
    parallel_for(
        0, p.blocks * p.strips,
        [&](std::size_t u_begin, std::size_t u_end) {
            for (std::size_t u = u_begin; u < u_end;) {
                const std::size_t q = u / p.strips, s_begin = u % p.strips;
                const std::size_t s_end = std::min(p.strips, s_begin + (u_end - u));
                const std::size_t kc = p.block_kc(q), cols_end = std::min(s_end * nr, p.nc);
                isa.pack_b(g.trans_b, g.b, g.ldb, p.pb + q * p.kc_block, kc, p.j0 + s_begin * nr, cols_end - s_begin * nr,
                           p.packed + q * p.kc_block * p.strips * nr + s_begin * kc * nr);
                u += s_end - s_begin;
            }
        },
        std::max<std::size_t>(1, kMinPackPerChunk / (std::min(p.kc_block, p.kb) * nr)));
}

// Few rows of C and a long K (a weight gradient dW = dYᵀ·X): the panel split over K blocks too.
// Block q's product goes to its own partial P_q (partial: (blocks, M, nc)), then C = (C + P_0) +
// P_1 ... in block order: the same additions, in the same order, as gemm_tiles.
template <class PackedA>
void gemm_split_k(const GemmCall& g, const KernelTable& isa, const BPanel& p, std::size_t row_groups, std::size_t want,
                  float* partial, const PackedA& packed_a) {
    const std::size_t m = g.m, nc = p.nc, blocks = p.blocks;
    const bool add = g.acc == Accumulate::yes;
    const bool last_panel = p.pb + p.kb == g.k;  // the epilogue goes with the last K rows
    const std::size_t row_tiles = std::min(row_groups, (want + blocks - 1) / blocks);
    parallel_for(0, blocks * row_tiles, [&](std::size_t t_begin, std::size_t t_end) {
        float* ap = packed_a();
        for (std::size_t t = t_begin; t < t_end; ++t) {
            const std::size_t q = t / row_tiles, rt = t % row_tiles, kc = p.block_kc(q);
            const std::size_t i_begin = rt * row_groups / row_tiles * MR;
            const std::size_t i_end = std::min((rt + 1) * row_groups / row_tiles * MR, m);
            isa.gemm_rows(g.trans_a, g.a, g.lda, ap, p.block(q, g.ldb), p.row_stride, p.strip(q), partial + q * m * nc,
                          nc, i_begin, i_end, 0, nc, p.pb + q * p.kc_block, kc, false, nullptr, Epilogue{});
        }
    });
    parallel_for(
        0, m,
        [&](std::size_t i_begin, std::size_t i_end) {
            for (std::size_t i = i_begin; i < i_end; ++i) {
                float* ci = g.c + i * g.ldc + p.j0;  // (nc)
                for (std::size_t q = 0; q < blocks; ++q) {
                    const float* pi = partial + (q * m + i) * nc;  // (nc)
                    const bool first = q == 0 && p.pb == 0 && !add;
                    if (first && g.bias) {
                        for (std::size_t j = 0; j < nc; ++j) ci[j] = g.bias[p.j0 + j] + pi[j];
                        continue;
                    }
                    for (std::size_t j = 0; j < nc; ++j) ci[j] = first ? pi[j] : ci[j] + pi[j];
                }
                if (last_panel && g.epilogue.kind != Epilogue::Kind::none) {
                    const float* gi = g.epilogue.operand ? g.epilogue.operand + i * g.ldc + p.j0 : nullptr;
                    for (std::size_t j = 0; j < nc; ++j) {
                        ci[j] = epilogue_scalar(ci[j], g.epilogue.kind, gi ? gi + j : nullptr);
                    }
                }
            }
        },
        std::max<std::size_t>(1, kMinPackPerChunk / (blocks * nc)));
}

// The panel's product as row_tiles x strip_tiles tiles of C, rows first (a tile reads its A rows
// once per K block, for all its strips), strips only when the rows alone are too few.
template <class PackedA>
void gemm_tiles(const GemmCall& g, const KernelTable& isa, const BPanel& p, std::size_t row_groups, std::size_t want,
                const PackedA& packed_a) {
    const std::size_t nr = p.nr;
    const bool add = g.acc == Accumulate::yes;
    const std::size_t row_tiles = std::min(row_groups, want);
    const std::size_t strip_tiles = std::min(p.strips, (want + row_tiles - 1) / row_tiles);
    parallel_for(0, row_tiles * strip_tiles, [&](std::size_t t_begin, std::size_t t_end) {
        float* ap = packed_a();
        // K blocks outermost: a block of packed B is reused by every tile of the chunk while it
        // is in cache (one thread: the whole panel, the textbook order).
        for (std::size_t q = 0; q < p.blocks; ++q) {
            const std::size_t kc = p.block_kc(q), p0 = p.pb + q * p.kc_block;
            for (std::size_t t = t_begin; t < t_end; ++t) {
                const std::size_t rt = t / strip_tiles, st = t % strip_tiles;
                const std::size_t i_begin = rt * row_groups / row_tiles * MR;
                const std::size_t i_end = std::min((rt + 1) * row_groups / row_tiles * MR, g.m);
                const std::size_t s_begin = st * p.strips / strip_tiles, s_end = (st + 1) * p.strips / strip_tiles;
                const std::size_t cols = std::min(s_end * nr, p.nc) - s_begin * nr;
                isa.gemm_rows(g.trans_a, g.a, g.lda, ap, p.block(q, g.ldb) + s_begin * p.strip(q), p.row_stride,
                              p.strip(q), g.c, g.ldc, i_begin, i_end, p.j0 + s_begin * nr, cols, p0, kc,
                              add || p0 > 0, g.bias, p0 + kc == g.k ? g.epilogue : Epilogue{});
            }
        }
    });
}

// C (M, N) (+)= op(A) (M, K) · op(B) (K, N); see the file comment for the loop nest.
template <bool TransA, bool TransB>
void gemm(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc, std::size_t m,
          std::size_t n, std::size_t k, Accumulate acc, const float* bias, float* b_external,
          const Epilogue& epilogue) {
    // A leading dimension only matters when its matrix has a second row.
    ATTNLAB_DEBUG_ASSERT(m <= 1 || ldc >= n);
    ATTNLAB_DEBUG_ASSERT(TransA ? (k <= 1 || lda >= m) : (m <= 1 || lda >= k));
    ATTNLAB_DEBUG_ASSERT(TransB ? (n <= 1 || ldb >= k) : (k <= 1 || ldb >= n));
    if (m == 0 || n == 0) return;
    const GemmCall g{TransA, TransB, a, lda, b, ldb, c, ldc, m, n, k, acc, bias, epilogue};
    if (k == 0) {
        gemm_empty_sum(g);
        return;
    }
    const KernelTable& isa = table();
    const std::size_t NR = isa.nr;
    // K block: KC, or the table's when A is read transposed (matmul_arch.hpp).
    const std::size_t kc_block = TransA ? isa.matmul_kc_trans_a : KC;
    thread_local Scratch b_scratch;  // the calling thread's; workers only read it
    thread_local Scratch p_scratch;  // partial products of a K split, written by every thread
    // Packed A blocks, one slot per pool thread (thread_index()), only when A is too far apart
    // to read in place: owned by the caller so no worker allocates a buffer of its own.
    thread_local Scratch a_scratch;
    const std::size_t a_slot = MC * KC, a_slots = num_threads();
    float* const a_all = lda > kMatmulMaxLdaInPlace ? a_scratch.get(a_slot * a_slots) : nullptr;
    const auto packed_a = [&]() -> float* {
        if (!a_all) return nullptr;  // A is read in place: gemm_rows never touches ap
        const std::size_t i = thread_index();
        if (i < a_slots) return a_all + i * a_slot;
        thread_local Scratch outside;  // a thread outside the default pool
        return outside.get(a_slot);
    };
    const std::size_t row_groups = (m + MR - 1) / MR;
    // 1 inside a pool task (the tiles of flash attention): the product then runs inline.
    const std::size_t threads = available_threads();
    for (std::size_t j0 = 0; j0 < n; j0 += NC) {
        const std::size_t nc = std::min(NC, n - j0);
        const std::size_t strips = (nc + NR - 1) / NR;
        // B is read in place, not packed, when it is row-major (not transposed), its rows are
        // near enough (matmul_max_ldb_in_place) and the micro-kernel reads no column past the
        // panel: whole strips, or (where partial strips are trimmed to their vectors) whole
        // vectors. The micro-kernel does the same operations either way.
        const bool b_in_place = !TransB && ldb <= isa.matmul_max_ldb_in_place &&
                                (nc % NR == 0 || (isa.trims_partial_strips && nc % isa.lanes == 0));
        const std::size_t kb_max = threads > 1 ? KB : kc_block;
        for (std::size_t pb = 0; pb < k; pb += kb_max) {
            const std::size_t kb = std::min(kb_max, k - pb);
            const std::size_t blocks = (kb + kc_block - 1) / kc_block;
            float* const bp = b_in_place ? nullptr
                                         : b_external ? align64(b_external) : b_scratch.get(strips * NR * kb);
            const BPanel panel{j0, nc, strips, pb, kb, kc_block, blocks, NR, b_in_place,
                               b_in_place ? b + pb * ldb + j0 : nullptr, bp, b_in_place ? ldb : NR};
            if (!b_in_place) pack_b_panel(g, isa, panel);
            const std::size_t want = tile_count(m * nc * kb, threads);
            if (blocks > 1 && row_groups < want && threads > 1 && blocks * m * nc <= kMaxSplitFloats) {
                gemm_split_k(g, isa, panel, row_groups, want, p_scratch.get(blocks * m * nc), packed_a);
            } else {
                gemm_tiles(g, isa, panel, row_groups, want, packed_a);
            }
        }
    }
}

}  // namespace

std::size_t matmul_scratch_floats(std::size_t n, std::size_t k) {
    // One B panel: at most NC columns in strips of NR, at most KB rows (the K block of several
    // threads; one thread uses KC), plus the alignment pad.
    const std::size_t nr = table().nr;
    const std::size_t strips = (std::min(n, NC) + nr - 1) / nr;
    return strips * nr * std::min(k, KB) + kAlignPad;
}

namespace {

// bias, relu and gate are for C = A·B + bias; an accumulating call with one is a caller's bug.
// An added matrix may follow either (C = (C + A·B) + R).
void check_store_options(const float* bias, const Epilogue& epilogue, Accumulate acc, const char* where) {
    if (bias && acc == Accumulate::yes) {
        fail<ConfigError>(where, ": a bias row is only added when overwriting C (Accumulate::no)");
    }
    const bool selects = epilogue.kind == Epilogue::Kind::relu || epilogue.kind == Epilogue::Kind::gate;
    if (selects && acc == Accumulate::yes) {
        fail<ConfigError>(where, ": an epilogue (here ", epilogue_name(epilogue.kind),
                          ") is only applied when overwriting C (Accumulate::no)");
    }
    if (epilogue.kind == Epilogue::Kind::gate && !epilogue.operand) {
        fail<ConfigError>(where, ": a gate epilogue needs its gate matrix, got null");
    }
    if (epilogue.kind == Epilogue::Kind::add && !epilogue.operand) {
        fail<ConfigError>(where, ": an add epilogue needs the matrix it adds, got null");
    }
}

}  // namespace

void matmul_nn(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc, const float* bias, float* scratch,
               const Epilogue& epilogue) {
    check_store_options(bias, epilogue, acc, "matmul_nn");
    count_multiply_adds(static_cast<std::uint64_t>(m) * n * k);
    gemm<false, false>(a, lda, b, ldb, c, ldc, m, n, k, acc, bias, scratch, epilogue);
}

void matmul_nt(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc, const float* bias, float* scratch,
               const Epilogue& epilogue) {
    check_store_options(bias, epilogue, acc, "matmul_nt");
    count_multiply_adds(static_cast<std::uint64_t>(m) * n * k);
    gemm<false, true>(a, lda, b, ldb, c, ldc, m, n, k, acc, bias, scratch, epilogue);
}

void matmul_tn(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc, const float* bias, float* scratch,
               const Epilogue& epilogue) {
    check_store_options(bias, epilogue, acc, "matmul_tn");
    count_multiply_adds(static_cast<std::uint64_t>(m) * n * k);
    gemm<true, false>(a, lda, b, ldb, c, ldc, m, n, k, acc, bias, scratch, epilogue);
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
