// src/attention/flash/tile_mask.hpp (private): what the mask (attention/mask.hpp) does to one
// score tile of FlashAttention: whether the tile is skipped whole, which runs of its keys a block
// layout leaves live, whether no pair of it is hidden, and the tile's masked scores.
//
// Legend: B batch, H query heads, Hkv key/value heads (group = H / Hkv query heads share one),
// T queries, S keys, D head dim of q and k, Dv head dim of v; br x bc one score tile
// (br <= flash_query_tile() query rows, bc <= kFlashKeyTile keys).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "attnlab/attention/mask.hpp"
#include "geometry.hpp"

namespace attnlab::flash {

// True if the window (AttentionMask::window, global_tokens) hides every (query, key) pair of the
// tile rows [i0, i0 + rows) x keys [j0, j0 + cols): the tile holds no global row or key and lies
// wholly more than W positions before or after the rows' positions. Such a tile would add exactly
// nothing (p = 0, ds = 0), so it is skipped whole: with a window the useful work is O(T·W).
inline bool tile_outside_window(const AttentionMask& mask, const Dims& dm, std::size_t i0, std::size_t rows,
                                std::size_t j0, std::size_t cols) {
    if (mask.window == 0) return false;
    const auto g = static_cast<std::ptrdiff_t>(mask.global_tokens), w = static_cast<std::ptrdiff_t>(mask.window);
    const std::ptrdiff_t first_pos = static_cast<std::ptrdiff_t>(i0) + dm.shift;  // position of row i0
    const std::ptrdiff_t last_pos = first_pos + static_cast<std::ptrdiff_t>(rows) - 1;
    const auto first_key = static_cast<std::ptrdiff_t>(j0), last_key = first_key + static_cast<std::ptrdiff_t>(cols) - 1;
    if (first_pos < g || first_key < g) return false;
    return last_key < first_pos - w || first_key > last_pos + w;
}

// True if every key of [j0, j0 + cols) is padding in batch row b: the tile adds nothing and is
// skipped whole (p = 0, ds = 0), so padded keys cost no score work.
inline bool tile_all_padding(const AttentionMask& mask, const Dims& dm, std::size_t b, std::size_t j0,
                             std::size_t cols) {
    if (mask.key_padding.size() == 0) return false;
    const std::uint8_t* pad = mask.key_padding.data() + b * dm.s + j0;
    for (std::size_t c = 0; c < cols; ++c) {
        if (!pad[c]) return false;
    }
    return true;
}

// True if the block layout (AttentionMask::block_layout) has no live block that meets the tile
// rows [i0, i0 + rows) x keys [j0, j0 + cols): the live tiles are computed from the layout, so
// the skip is exact for any block size b against the fixed tile sizes (a tile that a live block
// only partly covers is computed, its dead part masked by mask_tile). Block-sparse attention's
// work then grows with the live tiles, not T·S.
inline bool tile_outside_layout(const AttentionMask& mask, std::size_t i0, std::size_t rows, std::size_t j0,
                                std::size_t cols) {
    if (mask.block_layout.size() == 0) return false;
    const std::size_t b = mask.block_size, ld = mask.block_layout.shape(1);
    const std::size_t r_first = (i0 + mask.block_row_offset) / b, r_last = (i0 + mask.block_row_offset + rows - 1) / b;
    const std::size_t c_first = j0 / b, c_last = (j0 + cols - 1) / b;
    for (std::size_t r = r_first; r <= r_last; ++r) {
        const std::uint8_t* live = mask.block_layout.data() + r * ld;
        for (std::size_t c = c_first; c <= c_last; ++c) {
            if (live[c]) return false;
        }
    }
    return true;
}

// Calls run(k0, cols) for each run of consecutive key blocks of the tile's keys [j0, j0 + cols)
// that a live block of the rows [i0, i0 + rows) covers (the block-sparse strategy next to the
// dense key loop), in key order, clipped to the tile. Each run's start is moved down to a multiple
// of `align` keys from j0 (packed keys start whole groups or strips there); a run that then
// reaches the one before is merged into it. Dead blocks inside a run are masked by mask_tile.
// When query tiles are block rows and blocks are whole strips and groups (query_tile_rows), every
// live block is computed once and no dead block is: block-sparse work is the live blocks' share
// of the dense work. Without a layout the tile is one run.
template <class Run>
void for_each_live_key_run(const AttentionMask& mask, std::size_t i0, std::size_t rows, std::size_t j0,
                           std::size_t cols, std::size_t align, Run&& run) {
    if (mask.block_layout.size() == 0) {
        run(j0, cols);
        return;
    }
    const std::size_t b = mask.block_size, end = j0 + cols;
    const std::size_t r_first = (i0 + mask.block_row_offset) / b, r_last = (i0 + mask.block_row_offset + rows - 1) / b;
    std::size_t start = 0, stop = 0;  // the open run [start, stop), empty while stop == 0
    for (std::size_t c = j0 / b; c <= (end - 1) / b; ++c) {
        bool live = false;
        for (std::size_t r = r_first; r <= r_last && !live; ++r) live = mask.block_layout(r, c) != 0;
        if (!live) continue;
        const std::size_t first = std::max(j0, c * b), last = std::min(end, (c + 1) * b);
        const std::size_t aligned = j0 + (first - j0) / align * align;
        if (stop > 0 && aligned <= stop) {
            stop = last;
            continue;
        }
        if (stop > 0) run(start, stop - start);
        start = aligned;
        stop = last;
    }
    if (stop > 0) run(start, stop - start);
}

// True if the tile rows [i0, i0 + rows) x keys [j0, j0 + cols) of batch row b would add nothing
// under the mask and is skipped whole: wholly outside the window or the block layout's live
// blocks, or every key padding.
inline bool tile_skipped(const AttentionMask& mask, const Dims& dm, std::size_t b, std::size_t i0,
                         std::size_t rows, std::size_t j0, std::size_t cols) {
    return tile_outside_window(mask, dm, i0, rows, j0, cols) || tile_outside_layout(mask, i0, rows, j0, cols) ||
           tile_all_padding(mask, dm, b, j0, cols);
}

// True if no mask hides any (query, key) pair of the tile rows [i0, ...) x keys [j0, j0 + cols):
// under the causal mask the first row, i0, must see the tile's last key. What the forward's
// lazy-reference kernels need: they take the exponentials before a mask could be applied.
inline bool tile_unmasked(const AttentionMask& mask, const Dims& dm, std::size_t i0, std::size_t j0,
                          std::size_t cols) {
    if (mask.window > 0 || mask.key_padding.size() > 0 || mask.explicit_mask.size() > 0 ||
        mask.block_layout.size() > 0 || mask.score_bias) {
        return false;
    }
    return !mask.causal || static_cast<std::ptrdiff_t>(j0 + cols) <= static_cast<std::ptrdiff_t>(i0) + dm.shift + 1;
}

// How a score tile is stored: queries by keys, tile[r·ld + c] (the backward, and the forward
// when all keys fit one tile), or keys by queries, tile[c·ld + r] (the forward's tiles,
// flash_softmax_pv_columns).
enum class TileLayout { queries_by_keys, keys_by_queries };

// Sets masked entries of the score tile of queries i0 + r (r < rows) and keys j0 + c (c < cols)
// of batch row b, head h to -inf, as AttentionMask::apply does for the whole (T, S) matrix, then
// adds the score bias (if any) times bias_units, the factor that puts the bias in the tile's
// units: 1/scale for raw q·kᵀ that the softmax scales later, log2(e) for the online softmax's
// scaled log2 scores. Layout: see TileLayout (ld is the stride between the tile's stored rows).
template <TileLayout Layout>
void mask_tile(const AttentionMask& mask, const Dims& dm, std::size_t b, std::size_t h, float bias_units,
               std::size_t i0, std::size_t rows, std::size_t j0, std::size_t cols, float* tile, std::size_t ld) {
    // Score of query r, key c (the layout is a compile-time choice, so the queries-by-keys loops
    // below stay contiguous and vectorise).
    const auto at = [&](std::size_t r, std::size_t c) -> float& {
        return Layout == TileLayout::queries_by_keys ? tile[r * ld + c] : tile[c * ld + r];
    };
    const std::uint8_t* pad = mask.key_padding.size() > 0 ? mask.key_padding.data() + b * dm.s + j0 : nullptr;
    const bool explicit_mask = mask.explicit_mask.size() > 0;
    for (std::size_t r = 0; r < rows; ++r) {
        if (mask.causal) {
            // Keys j > i + shift are in the future of query i.
            const std::ptrdiff_t first_hidden = static_cast<std::ptrdiff_t>(i0 + r) + dm.shift + 1;
            const std::ptrdiff_t from = std::max<std::ptrdiff_t>(first_hidden - static_cast<std::ptrdiff_t>(j0), 0);
            for (auto c = static_cast<std::size_t>(from); c < cols; ++c) at(r, c) = kNegInf;
        }
        if (mask.window > 0) {
            // AttentionMask::outside_window as two ranges per row: keys j >= G with
            // j < pos - W or j > pos + W are hidden, unless the row's position is global (< G).
            const std::ptrdiff_t pos = static_cast<std::ptrdiff_t>(i0 + r) + dm.shift;
            const auto g = static_cast<std::ptrdiff_t>(mask.global_tokens), w = static_cast<std::ptrdiff_t>(mask.window);
            if (pos >= g) {
                const auto first = static_cast<std::ptrdiff_t>(j0), end = first + static_cast<std::ptrdiff_t>(cols);
                const auto hide = [&](std::ptrdiff_t lo, std::ptrdiff_t hi) {  // keys [lo, hi)
                    lo = std::max({lo, g, first});
                    hi = std::min(hi, end);
                    for (std::ptrdiff_t j = lo; j < hi; ++j) at(r, static_cast<std::size_t>(j - first)) = kNegInf;
                };
                hide(0, pos - w);
                hide(pos + w + 1, end);
            }
        }
        if (mask.block_layout.size() > 0) {
            // AttentionMask::outside_layout as one range per dead block of the row's layout row.
            const std::size_t bs = mask.block_size, end = j0 + cols;
            const std::uint8_t* live = mask.block_layout.data() + (i0 + r + mask.block_row_offset) / bs *
                                                                       mask.block_layout.shape(1);
            for (std::size_t j = j0; j < end;) {
                const std::size_t next = std::min(end, (j / bs + 1) * bs);
                if (!live[j / bs]) {
                    for (std::size_t k = j; k < next; ++k) at(r, k - j0) = kNegInf;
                }
                j = next;
            }
        }
        // Branch-free selects (the compiler vectorises them): a branch per key mispredicts on
        // every boundary and cost more than the tile's products.
        if (pad) {
            for (std::size_t c = 0; c < cols; ++c) at(r, c) = pad[c] ? kNegInf : at(r, c);
        }
        if (explicit_mask) {
            const std::uint8_t* em = mask.explicit_mask.data() + (i0 + r) * dm.s + j0;
            for (std::size_t c = 0; c < cols; ++c) at(r, c) = em[c] ? kNegInf : at(r, c);
        }
        if (mask.score_bias) {
            const Tensor4& bias = *mask.score_bias;  // (G, H, T, S)
            const float* row = bias.data() + (((b % bias.shape(0)) * dm.heads + h) * dm.t + i0 + r) * dm.s + j0;
            for (std::size_t c = 0; c < cols; ++c) at(r, c) += bias_units * row[c];
        }
    }
}

// The score bias's units in a tile of raw q·kᵀ that the softmax multiplies by factor.
inline float raw_score_units(float factor) { return 1.0f / factor; }

}  // namespace attnlab::flash
