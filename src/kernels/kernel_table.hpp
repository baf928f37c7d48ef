// src/kernels/kernel_table.hpp (private to src/kernels): the ISA-specific pieces of every hot
// kernel, as one table of function pointers per instruction set, chosen once at run time.
//
// The public kernels (matmul.cpp, softmax.cpp, elementwise.cpp, attention) keep validation,
// scratch buffers and threading; the table holds the serial inner loops, each instantiated from
// one template (src/kernels/*_arch.hpp) per ISA in arch_<isa>.cpp. Ranges are serial: callers
// split work with parallel_for and call the table per chunk.
#pragma once

#include <cstddef>

#include "attnlab/attention/normalizer.hpp"
#include "attnlab/kernels/adamw.hpp"
#include "attnlab/kernels/epilogue.hpp"
#include "attnlab/kernels/flash_tiles.hpp"

namespace attnlab {
namespace kernels {

// The epilogue of one element of C (attnlab/kernels/epilogue.hpp), for the micro-kernel's edge
// columns and for matmul.cpp's stores outside it (an empty K, a K split's sums), which must
// round alike. static: every translation unit, each compiled with its own ISA flags, keeps its
// own copy (an inline function would be one weak symbol, maybe the AVX-512 file's; simd.hpp).
static inline float epilogue_scalar(float x, Epilogue::Kind kind, const float* operand) {
    if (kind == Epilogue::Kind::relu) return x < 0.0f ? 0.0f : x;
    if (kind == Epilogue::Kind::gate) return *operand > 0.0f ? x : 0.0f;
    if (kind == Epilogue::Kind::add) return x + *operand;
    return x;
}

// Rows of a matmul micro-tile (the same for every ISA; the columns, nr, depend on the ISA).
constexpr std::size_t kMatmulMR = 6;

struct KernelTable {
    const char* isa;    // "avx512", "avx2+fma", "sse2", "wasm", "scalar", ... (active_isa())
    std::size_t lanes;  // floats per vector
    std::size_t nr;     // columns of a matmul micro-tile (a whole number of vectors)
    std::size_t flash_nr;  // rows per packed strip of the flash tile kernels' score products
    std::size_t flash_vr;  // columns a value row of the forward's p·V is padded to
    std::size_t flash_mr;  // rows per packed group of the flash tile kernels
    bool flash_lazy_exp;   // whether the forward prefers flash_scores_exp (FlashShape::kLazyExp)
    // Whether a partial matmul strip computes only the vectors that hold its columns (else the
    // whole strip of nr columns is read from B).
    bool trims_partial_strips;
    // matmul's K block when A is read transposed (its other K blocks are 256 floats), and the
    // widest ldb of a row-major B it reads in place, unpacked (0: it packs every B).
    std::size_t matmul_kc_trans_a;
    std::size_t matmul_max_ldb_in_place;

    // --- matmul (matmul_arch.hpp) ---
    // Packs op(B) rows [p0, p0 + kc) x columns [j0, j0 + nc) into strips of nr columns.
    void (*pack_b)(bool trans_b, const float* b, std::size_t ldb, std::size_t p0, std::size_t kc, std::size_t j0,
                   std::size_t nc, float* bp);
    // C rows [i_begin, i_end) x [j0, j0 + nc) (+)= op(A) rows x [p0, p0 + kc) · B panel (packed:
    // bs = nr, b_strip = kc·nr; in place: bs = ldb, b_strip = nr); ap: scratch of kMatmulMC · kc
    // floats (64-byte aligned) for the packed A block; bias (indexed by C's column, or null) is
    // added when not accumulating (add false).
    // epilogue: applied by this call's store (the caller passes it with the last K block only);
    // an operand (a gate, an added matrix) is indexed like c (ldc).
    void (*gemm_rows)(bool trans_a, const float* a, std::size_t lda, float* ap, const float* bp, std::size_t bs,
                      std::size_t b_strip, float* c, std::size_t ldc, std::size_t i_begin, std::size_t i_end,
                      std::size_t j0, std::size_t nc, std::size_t p0, std::size_t kc, bool add, const float* bias,
                      const Epilogue& epilogue);

    // --- softmax (softmax_arch.hpp) ---
    void (*softmax_rows)(float* x, std::size_t rows, std::size_t cols, std::size_t ld);
    void (*softmax_rows_backward)(const float* y, const float* dy, float* dx, std::size_t rows, std::size_t cols,
                                  std::size_t ld);
    // Flash attention forward when all keys fit one score tile: see softmax_arch.hpp.
    void (*softmax_tile)(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float scale, float* row_max,
                         float* row_sum);
    // Flash attention backward, one tile: see softmax_arch.hpp.
    void (*flash_backward_tile)(float* s, float* dp, std::size_t rows, std::size_t cols, std::size_t ld, float scale,
                                const float* lse, const float* delta);
    // The pointwise normalisers of attention (sigmoid, relu), rows and keys-by-queries tiles: see
    // softmax_arch.hpp.
    void (*pointwise_weight_rows)(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                                  const float* visible);
    void (*pointwise_weight_columns)(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                                     const float* visible);

    // --- flash attention tiles (flash/flash_arch.hpp): strips of nr rows, groups of flash_mr rows ---
    void (*flash_pack_strips)(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float scale, float* xs);
    void (*flash_pack_groups)(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float scale, float* xg);
    void (*flash_pack_values)(const float* v, std::size_t keys, std::size_t dv, std::size_t ld, std::size_t dp,
                              float* vp);
    void (*flash_scores)(const float* xg, std::size_t rows, std::size_t d, const float* ys, std::size_t strips,
                         float* s, std::size_t ld);
    void (*flash_softmax_pv_columns)(float* st, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                                     std::size_t ldv, std::size_t dp, float* o, float* row_max, float* row_sum,
                                     float* alpha);
    void (*flash_scores_exp)(const float* kg, std::size_t keys, std::size_t d, const float* qs, std::size_t strips,
                             float* pt, std::size_t ld, const float* ref, float* tile_max, float* tile_sum);
    void (*flash_pv_columns)(const float* st, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                             std::size_t ldv, std::size_t dp, float* o, const float* alpha);
    void (*flash_row_dots)(const float* a, std::size_t lda, const float* b, std::size_t ldb, std::size_t rows,
                           std::size_t cols, float* out);

    // --- FlashAttention with all keys in one tile and no mask, fused (flash/one_tile_arch.hpp) ---
    // Keys (and product columns) a fused call takes: a whole number of vectors, at most these.
    std::size_t one_tile_max_keys;
    std::size_t one_tile_max_columns;
    void (*one_tile_transpose)(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float* xt);
    void (*one_tile_softmax)(const float* q, std::size_t lq, std::size_t rows, std::size_t d, const float* kt,
                             std::size_t keys, float scale, std::ptrdiff_t hide_from, float* p, float* row_max,
                             float* row_sum);
    void (*one_tile_backward)(const float* q, std::size_t lq, const float* dout, std::size_t ldo, std::size_t rows,
                              std::size_t d, std::size_t dv, const float* kt, const float* vt, std::size_t keys,
                              float scale, std::ptrdiff_t hide_from, const float* lse, const float* delta, float* p,
                              float* ds);
    void (*one_tile_backward_from_weights)(const float* dout, std::size_t ldo, std::size_t rows, std::size_t dv,
                                           const float* vt, std::size_t keys, float scale, const float* lse,
                                           const float* delta, const float* p, float* ds);
    void (*one_tile_product)(bool trans_a, const float* a, std::size_t rows, std::size_t k, const float* b,
                             std::size_t ldb, std::size_t n, float* c, std::size_t ldc, bool add);

    // --- elementwise (elementwise_arch.hpp), each over [0, n) or rows [0, rows) ---
    void (*relu_forward)(const float* x, float* y, std::size_t n);
    void (*relu_backward)(const float* x, const float* dy, float* dx, std::size_t n, bool add);
    void (*gelu_forward)(const float* x, float* y, std::size_t n);
    void (*gelu_backward)(const float* x, const float* dy, float* dx, std::size_t n, bool add);
    void (*gelu_tanh_forward)(const float* x, float* y, std::size_t n);
    void (*gelu_tanh_backward)(const float* x, const float* dy, float* dx, std::size_t n, bool add);
    void (*layer_norm_forward)(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                               float* rstd, std::size_t rows, std::size_t cols, float eps);
    // dx rows of the layer-norm backward (dgamma, dbeta are summed by the caller).
    void (*layer_norm_backward_rows)(const float* x, const float* gamma, const float* mean, const float* rstd,
                                     const float* dy, float* dx, std::size_t rows, std::size_t cols);
    // The LSTM cell over rows of one time step (attnlab/kernels/elementwise.hpp).
    void (*lstm_cell_forward)(float* gates, const float* c_prev, float* c, float* tanh_c, float* h, std::size_t rows,
                              std::size_t hidden);
    void (*lstm_cell_backward)(const float* gates, const float* c_prev, const float* tanh_c, const float* dh, float* dc,
                               float* dgates, std::size_t rows, std::size_t hidden);

    // --- the optimizer (elementwise_arch.hpp) ---
    void (*adamw_update)(float* p, const float* g, float* m, float* v, std::size_t n, const AdamWStep& step);

    // --- the FMA roofline for benchmarks (matmul_arch.hpp) ---
    float (*fma_peak)(std::size_t rounds);
    std::size_t fma_peak_flops_per_round;
};

// Row block of matmul's packed A (MC rows, a multiple of kMatmulMR), for sizing gemm_rows' ap.
constexpr std::size_t kMatmulMC = 16 * kMatmulMR;
// gemm_rows reads A in place, without packing it (and without ap), when lda is at most this
// (see matmul_arch.hpp for the measurements).
constexpr std::size_t kMatmulMaxLdaInPlace = 1024;
// The table in use: chosen on first call (the best ISA the CPU supports, or ATTNLAB_ISA from
// the environment), replaced by set_isa (kernels/isa.hpp).
const KernelTable& table();

// Tables compiled into this build, one function per arch_<isa>.cpp; nullptr when that file was
// compiled without its ISA (non-x86, WebAssembly, ATTNLAB_NO_SIMD).
const KernelTable* table_avx512();
const KernelTable* table_avx2();
const KernelTable* table_sse2();
// The WebAssembly kernels: the one table of the WebAssembly SIMD build, and natively on x86 the
// same kernels on SSE4.1 ("wasm"), which compute the WebAssembly build's results bit for bit.
const KernelTable* table_wasm();
const KernelTable* table_portable();  // non-x86 native builds (xsimd::default_arch) and the scalar flavour

}  // namespace kernels
}  // namespace attnlab
