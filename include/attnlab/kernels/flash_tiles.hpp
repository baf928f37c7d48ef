// attnlab/kernels/flash_tiles.hpp: the two products of FlashAttention's forward tile loop, on
// keys and values packed once per head (SIMD, chosen at run time like every kernel).
//
// What it is for: attention/flash_attention.cpp's forward. Per head it packs K into strips of
// flash_strip() keys and V into rows padded to a multiple of flash_strip() columns; per (query
// tile, key tile) it computes the raw scores with flash_scores, runs the online softmax step
// (kernels/softmax.hpp) and adds p·V with flash_accumulate_pv. Not for general matrices: use
// kernels/matmul.hpp.
//
//   std::vector<float> kp(kernels::flash_packed_keys_size(S, D)), qp(kernels::flash_packed_queries_size(T, D));
//   kernels::flash_pack_keys(k, S, D, kp.data());                 // k: (S, D)
//   kernels::flash_pack_queries(q, T, D, c, qp.data());           // q: (T, D), times c
//   kernels::flash_scores(qp.data(), T, D, kp.data(), strips, s, ld);  // s: (T, strips·strip)
#pragma once

#include <cstddef>

namespace attnlab {
namespace kernels {

// Keys per packed key strip, and the multiple packed value rows are padded to (2 vectors).
std::size_t flash_strip();
// Floats of packed keys for (keys, d): ceil(keys / strip) strips of (d, strip).
std::size_t flash_packed_keys_size(std::size_t keys, std::size_t d);
// dv rounded up to a multiple of flash_strip(): the row length of packed values.
std::size_t flash_padded_value_dim(std::size_t dv);

// k: (keys, d) -> kp: (ceil(keys / strip), d, strip), zero past the last key.
void flash_pack_keys(const float* k, std::size_t keys, std::size_t d, float* kp);
// v: (keys, dv) -> vp: (keys, dp), dp = flash_padded_value_dim(dv), zero past column dv.
void flash_pack_values(const float* v, std::size_t keys, std::size_t dv, float* vp);

// Query rows per packed group (the rows of one micro-tile).
std::size_t flash_query_group();
// Floats of packed queries for (rows, d): ceil(rows / group) groups of (d, group).
std::size_t flash_packed_queries_size(std::size_t rows, std::size_t d);
// q: (rows, d) -> qp: (ceil(rows / group), d, group), scale · q, zero past the last row. The
// forward passes scale = log2(e) · the attention scale, for flash_softmax_tile.
void flash_pack_queries(const float* q, std::size_t rows, std::size_t d, float scale, float* qp);

// qp: packed queries (rows, d); kp: `strips` packed key strips -> s: (rows, strips·strip) with
// ld (ld >= strips·strip) = queries · keysᵀ (keys past the end score 0: ignore them).
void flash_scores(const float* qp, std::size_t rows, std::size_t d, const float* kp, std::size_t strips, float* s,
                  std::size_t ld);
// One key tile of the online softmax in base 2: s (rows, cols) with ld holds t = log2(e)·scale·
// q·kᵀ (masked entries -inf). Per row r: m' = max(row_max[r], max t), p = 2^(t - m') written
// over s, row_sum[r] = 2^(row_max[r] - m')·row_sum[r] + Σ p, rescale[r] = 2^(row_max[r] - m'),
// row_max[r] = m' (log2 units). Rows with only masked keys so far: p = 0, rescale 1, max -inf.
void flash_softmax_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float* row_max, float* row_sum,
                        float* rescale);
// p: (rows, cols) with ld; vp: (cols, dp) packed values; o: (rows, dp) with ld dp, o += p · vp.
void flash_accumulate_pv(const float* p, std::size_t ld, std::size_t rows, std::size_t cols, const float* vp,
                         std::size_t dp, float* o);

// The last two steps of one key tile in one call: flash_softmax_tile on s, each output row
// multiplied by its rescale factor, then flash_accumulate_pv, group by group of query rows
// (so each group's probabilities are still in L1 for p·V). s: (rows, cols) with ld,
// overwritten; vp: (cols, dp) packed values of the tile; o: (rows, dp) with ld dp.
void flash_softmax_pv_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, const float* vp,
                           std::size_t dp, float* o, float* row_max, float* row_sum);

}  // namespace kernels
}  // namespace attnlab
