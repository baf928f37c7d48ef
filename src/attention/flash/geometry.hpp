// src/attention/flash/geometry.hpp (private): the tile geometry of FlashAttention
// (attention/flash_attention.hpp): a call's dimensions, validated; its query and key tiles; which
// keys the causal mask lets a tile of query rows reach.
//
// Legend: B batch, H query heads, Hkv key/value heads (group = H / Hkv query heads share one),
// T queries, S keys, D head dim of q and k, Dv head dim of v; br x bc one score tile
// (br <= flash_query_tile() query rows, bc <= kFlashKeyTile keys).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/attention/heads.hpp"
#include "attnlab/attention/mask.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/kernels/flash_tiles.hpp"

namespace attnlab::flash {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2 = 0.693147180559945309f;
inline constexpr std::size_t BC = kFlashKeyTile;
static_assert(BC == kernels::kOneTileLd, "the fused one-tile kernels' p and ds are (BR, BC) tiles");

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

struct Dims {
    std::size_t batch, heads, kv_heads, group, t, s, d, dv;
    std::ptrdiff_t shift;  // S - T: query i sees keys j <= i + shift under the causal mask
};

// The shapes of a call, checked: k and v must match q (batch, head dimension) and each other,
// H a multiple of Hkv, the mask fit (B, T, S).
Dims validate(const ConstHeadsView& q, const ConstHeadsView& k, const ConstHeadsView& v, const AttentionMask& mask,
              const char* where);
// validate() on Tensor4s, with require_shape's messages for their shapes first.
Dims validate(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask, const char* where);
// Throws ShapeError unless x has the shape (batch, heads, n, d).
void require_heads(const ConstHeadsView& x, std::size_t batch, std::size_t heads, std::size_t n, std::size_t d,
                   const char* where, const char* what);

// Query rows of a call's tiles: flash_query_tile(), or one block row of a block layout whose
// smaller blocks are whole strips of the tile kernels (so no padded rows are computed) and whose
// rows start at a block boundary. A query tile of one block row meets only that row's live key
// blocks (for_each_live_key_run, tile_mask.hpp), not the union of several rows'.
std::size_t query_tile_rows(const AttentionMask& mask);

// One task's tile of queries: rows [i0, i0 + rows) of head h (kv head hk) of batch row b,
// bh = b·H + h indexing the (B, H, T) row statistics.
struct QueryTile {
    std::size_t b, h, hk, bh, i0, rows;
};

inline QueryTile query_tile(const Dims& dm, std::size_t br, std::size_t b, std::size_t h, std::size_t i0) {
    return QueryTile{b, h, h / dm.group, b * dm.heads + h, i0, std::min(br, dm.t - i0)};
}

// One task's tile of keys: keys [j0, j0 + cols) of kv head hk of batch row b, bk = b·Hkv + hk.
struct KeyTile {
    std::size_t b, hk, bk, j0, cols;
};

// The key tile of dk/dv task `task` (tasks in (batch, kv head, key tile) order).
inline KeyTile key_tile(const Dims& dm, std::size_t task) {
    const std::size_t k_tiles = ceil_div(dm.s, BC);
    const std::size_t bk = task / k_tiles, j0 = (task % k_tiles) * BC;
    return KeyTile{bk / dm.kv_heads, bk % dm.kv_heads, bk, j0, std::min(BC, dm.s - j0)};
}

// Asks for the first cache line of each of `rows` rows ld floats apart (a head's rows of up to
// 16 floats are one line each) to be read into cache; a hint, never a fault. Not in
// WebAssembly, which has no prefetch.
inline void prefetch_rows(const float* x, std::size_t rows, std::size_t ld) {
#if defined(__wasm__)
    (void)x, (void)rows, (void)ld;
#else
    for (std::size_t r = 0; r < rows; ++r) __builtin_prefetch(x + r * ld);
#endif
}

// Zeroes rows [i0, i0 + rows) of head (b, h).
inline void zero_rows(const HeadsView& x, std::size_t b, std::size_t h, std::size_t i0, std::size_t rows) {
    for (std::size_t i = i0; i < i0 + rows; ++i) std::fill_n(x.row(b, h, i), x.d, 0.0f);
}

// Keys [0, key_end) can be visible to query rows [i0, i0 + rows): under the causal mask the
// last row sees keys <= i0 + rows - 1 + shift, so later key tiles are skipped whole.
inline std::size_t key_end(const Dims& dm, bool causal, std::size_t i0, std::size_t rows) {
    if (!causal) return dm.s;
    const std::ptrdiff_t last = static_cast<std::ptrdiff_t>(i0 + rows) + dm.shift;  // one past the last visible
    return static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(last, 0, static_cast<std::ptrdiff_t>(dm.s)));
}

// hide_from of the fused one-tile kernels for the query rows from i0 (kernels/flash_tiles.hpp):
// query i sees keys j <= i + shift under the causal mask.
inline std::ptrdiff_t causal_from(const AttentionMask& mask, const Dims& dm, std::size_t i0) {
    return mask.causal ? static_cast<std::ptrdiff_t>(i0) + dm.shift + 1 : kernels::kOneTileSeesAll;
}

// The first query row that can see key j0 under the causal mask (rows before it see none of the
// keys from j0 on, so their tiles are skipped whole in the dk/dv pass).
inline std::size_t query_begin(const Dims& dm, bool causal, std::size_t j0) {
    if (!causal) return 0;
    const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(j0) - dm.shift;
    return static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(first, 0, static_cast<std::ptrdiff_t>(dm.t)));
}

}  // namespace attnlab::flash
