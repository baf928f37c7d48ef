// attnlab/attention/block_sparse.hpp: the block layout of block-sparse attention (BigBird:
// Zaheer et al. 2020; article §5.3).
//
// What it is for: cutting attention's O(T·S) pairs to the blocks a layout keeps. Queries and
// keys are cut into blocks of b positions; query block i sees
//   * its window: key blocks i − w … i + w (block indices, clipped to the matrix);
//   * the global blocks: key blocks 0 … g − 1, and query blocks 0 … g − 1 see every key block;
//   * r random key blocks, drawn per query block from the blocks the rules above leave dead,
//     never a live one twice. The draw is a seeded hash: block j's priority for query block i
//     is splitmix64 of (seed, i, j) and the r dead blocks of lowest priority are taken, so a
//     query block's draw does not depend on the other rows. With `causal`, only key blocks
//     j <= i are candidates (the later ones would be hidden by the causal mask), which makes a
//     row's draw the same for every sequence length: KV-cached generation and a full forward
//     keep the same blocks. When fewer than r dead candidates remain, all of them become live.
// The layout is a (⌈T/b⌉, ⌈S/b⌉) 0/1 matrix (1 = live). MultiHeadAttention with
// AttentionVariant::block_sparse puts it into AttentionMask::block_layout, where it composes with
// the other components by the mask's OR rule (a key is hidden if the layout OR causal OR padding
// OR the explicit mask hides it), so the output is dense attention under the expanded mask. The
// tiled path with several key tiles (S > kFlashKeyTile) computes, per query tile, only the runs
// of key blocks that a live block of its rows covers, in the forward and in both backward passes
// (one block row per query tile when b is a multiple of the kernels' strip, otherwise the union
// of its rows' live blocks); with one key tile the single-tile paths compute the whole tile.
// Not for: a sliding window of positions (AttentionMask::window), which block_sparse refuses.
//
//   attnlab::BlockSparseOptions opt;
//   opt.block_size = 64; opt.window_blocks = 1; opt.global_blocks = 1; opt.random_blocks = 1;
//   attnlab::Mask2 layout = attnlab::sparse_layout(4096, 4096, opt);   // (64, 64), 1 = live
//   attnlab::Mask2 mask = attnlab::expand_sparse_layout(layout, 64, 4096, 4096);   // (T, S), 1 = hidden
//   double f = attnlab::live_block_fraction(layout);
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

struct BlockSparseOptions {
    std::size_t block_size = 16;    // b: positions per block (> 0)
    std::size_t window_blocks = 1;  // w: query block i sees key blocks i - w .. i + w
    std::size_t global_blocks = 1;  // g: the first g blocks see and are seen by every block
    std::size_t random_blocks = 1;  // r: extra random key blocks per query block
    std::size_t seed = 0;           // of the random blocks' draw (a size_t: JavaScript and the
                                    // checkpoint metadata carry it as a plain integer)

    // Throws ConfigError naming `where` if block_size is 0.
    void validate(const char* where) const;
};

// The (⌈T/b⌉, ⌈S/b⌉) layout, 1 = live (see above). causal: random blocks are drawn only among
// key blocks j <= i. Throws ConfigError for a block size of 0.
Mask2 sparse_layout(std::size_t t, std::size_t s, const BlockSparseOptions& options, bool causal = false);

// layout (⌈T/b⌉, ⌈S/b⌉), 1 = live -> the (T, S) explicit mask it means, 1 = hidden (the
// convention of AttentionMask::explicit_mask). Throws ShapeError if the layout does not fit.
Mask2 expand_sparse_layout(const Mask2& layout, std::size_t block_size, std::size_t t, std::size_t s);

// Live blocks / all blocks of layout (0 for an empty one).
double live_block_fraction(const Mask2& layout);

}  // namespace attnlab
