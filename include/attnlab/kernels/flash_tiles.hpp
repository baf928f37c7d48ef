// attnlab/kernels/flash_tiles.hpp: the tile kernels of FlashAttention, on operands packed once
// per head (SIMD, chosen at run time like every kernel).
//
// What it is for: src/attention/flash/. A score tile is a product of rows packed in
// groups of flash_group() rows (the broadcast operand) with rows packed in strips of
// flash_strip() rows (the vector operand). The forward stores its tiles keys by queries: keys in
// groups, queries in strips, then flash_softmax_pv_columns runs the online softmax down the
// columns and adds p·V. The backward's tiles are queries by keys: queries (and output
// gradients) in groups, keys (and values) in strips. Not for general matrices: use
// kernels/matmul.hpp.
//
//   std::vector<float> kg(kernels::flash_groups_size(S, D)), qs(kernels::flash_strips_size(T, D));
//   kernels::flash_pack_groups(k, S, D, D, 1.0f, kg.data());     // k: (S, D), rows D apart
//   kernels::flash_pack_strips(q, T, D, D, c, qs.data());         // q: (T, D), times c
//   kernels::flash_scores(kg.data(), S, D, qs.data(), strips, st, ld);  // st: (S, strips·strip) = c·k·qᵀ
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlab {
namespace kernels {

// Rows per packed strip (4 vectors with AVX-512, else 2), and per packed group (the rows of one
// micro-tile). Packed value rows are padded to a multiple of 2 vectors (flash_padded_value_dim).
std::size_t flash_strip();
std::size_t flash_group();
// Floats of (rows, d) packed as strips: ceil(rows / strip) strips of (d, strip); as groups:
// ceil(rows / group) groups of (d, group).
std::size_t flash_strips_size(std::size_t rows, std::size_t d);
std::size_t flash_groups_size(std::size_t rows, std::size_t d);
// x: (rows, d) with rows ld (>= d) floats apart -> (ceil(rows / strip), d, strip), scale · x, zero
// past the last row. ld = d for a dense matrix; a head read in place from the rows of a
// projection (B, T, H·D) has ld = H·D.
void flash_pack_strips(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float scale, float* xs);
// x: (rows, d) with ld -> (ceil(rows / group), d, group), scale · x, zero past the last row.
void flash_pack_groups(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float scale, float* xg);

// dv rounded up to a multiple of flash_strip(): the row length of packed values.
std::size_t flash_padded_value_dim(std::size_t dv);
// v: (keys, dv) with ld -> vp: (keys, dp), dp = flash_padded_value_dim(dv), zero past column dv.
void flash_pack_values(const float* v, std::size_t keys, std::size_t dv, std::size_t ld, float* vp);

// xg: `rows` rows packed as groups; ys: `strips` packed strips -> s: (rows, strips·strip) with
// ld (>= strips·strip) = x · yᵀ (strip rows past the end score 0: ignore them).
void flash_scores(const float* xg, std::size_t rows, std::size_t d, const float* ys, std::size_t strips, float* s,
                  std::size_t ld);

// One key tile of the forward with its scores stored keys by queries: st (cols, ldq),
// st[j·ldq + q] = log2(e)·scale·q·kᵀ of query q and key j (masked -inf), ldq a multiple of
// flash_strip() (columns past `rows` are padding, unused). The base-2 online softmax runs down
// the columns; then o (rows, dp) is rescaled and o += p·V with vp (cols, dp), its rows ldv
// (>= dp) floats apart (values packed by flash_pack_values: ldv = dp; read in place when their
// dv is a whole number of strips: their own row stride). Per query q:
// m' = max(m, max_j t_j), p_j = 2^(t_j - m') written over st, alpha = 2^(m - m'),
// l = alpha·l + Σ_j p_j, o_q = alpha·o_q + Σ_j p_j v_j. A query that has seen only masked keys
// keeps m = -inf, l = 0 and o = 0. row_max (log2 units), row_sum: (ldq), updated; alpha: (ldq),
// left holding each query's rescale factor.
void flash_softmax_pv_columns(float* st, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                              std::size_t ldv, std::size_t dp, float* o, float* row_max, float* row_sum,
                              float* alpha);

// The lazy-reference variant of a key tile (what the forward runs after its first key tile
// where the active table prefers it, flash_lazy_exp()): the exponentials are taken in the score
// product's epilogue, against a reference known before the tile, so no pass over the stored
// scores is needed. kg: `keys` keys packed as groups; qs: `strips` query strips (times
// log2(e)·scale) -> pt (keys, strips·strip) with ld, keys by queries, pt[j·ld + q] =
// 2^(t - ref[q]) (0 where t - ref < -127; exact up to t - ref = 127: ref may lie below the
// tile's scores, the caller checks how far with tile_max); tile_max[q] = max(tile_max[q],
// max_j t), tile_sum[q] += Σ_j pt[j·ld + q]. ref, tile_max, tile_sum: (strips·strip).
bool flash_lazy_exp();
void flash_scores_exp(const float* kg, std::size_t keys, std::size_t d, const float* qs, std::size_t strips,
                      float* pt, std::size_t ld, const float* ref, float* tile_max, float* tile_sum);
// o (rows, dp) = alpha ⊙ o + pt · V: pt (cols, ldq) keys by queries, vp (cols, dp) with ldv;
// alpha (rows) each row's rescale factor, or null for none.
void flash_pv_columns(const float* pt, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                      std::size_t ldv, std::size_t dp, float* o, const float* alpha);

// a: (rows, cols) with lda, b: (rows, cols) with ldb -> out: (rows), out[i] = Σ_c a[i][c]·b[i][c]
// (the backward's delta = rowsum(dO ⊙ O)).
void flash_row_dots(const float* a, std::size_t lda, const float* b, std::size_t ldb, std::size_t rows,
                    std::size_t cols, float* out);

// --- All keys in one tile, no mask but a causal one: fused blocks of query rows ---
// (src/kernels/flash/one_tile_arch.hpp)
// The scores of a block stay in registers from q·kᵀ through the softmax (forward) or the exp and
// score gradient (backward); the tiles they leave, p and ds, are (rows, keys) with rows
// kOneTileLd floats apart, and one_tile_product multiplies them by a head's rows. Bit-identical
// to the general path (matmul_nt, softmax_tile or flash_backward_tile, the matmul products).
inline constexpr std::size_t kOneTileLd = 128;
// Whether the fused kernels take `keys` keys (a whole number of vectors, few enough to keep a
// row's scores in registers) and products of `columns` columns (head dims d and dv).
bool one_tile_fits(std::size_t keys, std::size_t columns);
// x: (rows, d) with ld -> xt: (d, rows), the Kᵀ or Vᵀ of a head.
void one_tile_transpose(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float* xt);
// The causal mask of the fused kernels: row r (of rows) sees keys j < hide_from + r, the rest
// score -inf as mask_tile makes them (hide_from = i0 + S - T + 1 for rows from query i0);
// kOneTileSeesAll: no mask.
inline constexpr std::ptrdiff_t kOneTileSeesAll = PTRDIFF_MAX;
// q: (rows, d) with lq, kt: (d, keys) -> p: (rows, keys) with kOneTileLd = softmax(scale·q·kᵀ),
// row_max[r] = max scale·s, row_sum[r] = Σ exp(scale·s - row_max[r]) (softmax_tile's).
void one_tile_softmax(const float* q, std::size_t lq, std::size_t rows, std::size_t d, const float* kt,
                      std::size_t keys, float scale, std::ptrdiff_t hide_from, float* p, float* row_max,
                      float* row_sum);
// q: (rows, d) with lq, dout: (rows, dv) with ldo, kt: (d, keys), vt: (dv, keys), lse, delta:
// (rows) -> p = exp(scale·q·kᵀ - lse), ds = scale·p⊙(dout·vᵀ - delta), each (rows, keys) with
// kOneTileLd (flash_backward_tile's; zeros for rows with lse = -inf). hide_from: as above.
void one_tile_backward(const float* q, std::size_t lq, const float* dout, std::size_t ldo, std::size_t rows,
                       std::size_t d, std::size_t dv, const float* kt, const float* vt, std::size_t keys, float scale,
                       std::ptrdiff_t hide_from, const float* lse, const float* delta, float* p, float* ds);
// The same backward from the weights p (rows, keys) with kOneTileLd that one_tile_softmax wrote
// in the forward (0 for masked keys): ds = scale·p⊙(dout·vᵀ - delta) only, no q·kᵀ or exp
// (one_tile_backward's ds on that p; zeros for rows with lse = -inf).
void one_tile_backward_from_weights(const float* dout, std::size_t ldo, std::size_t rows, std::size_t dv,
                                    const float* vt, std::size_t keys, float scale, const float* lse,
                                    const float* delta, const float* p, float* ds);
// c: (rows, n) with ldc (+)= op(a) · b, b: (k, n) with ldb; a: (rows, k) with kOneTileLd, or
// trans_a: (k, rows) with kOneTileLd (c = aᵀ·b). add: accumulate into c.
void one_tile_product(bool trans_a, const float* a, std::size_t rows, std::size_t k, const float* b,
                      std::size_t ldb, std::size_t n, float* c, std::size_t ldc, bool add);

}  // namespace kernels
}  // namespace attnlab
