// src/model/token/input_tables.hpp (internal): the first block's input as tables.
//
// In a post-LN model the first block's attention projects x = tok_emb[tokens] + positions
// itself, so its q, k, v products can run over the vocabulary's and the positions' rows instead
// of every row of the batch (nn/linear.hpp TableRows), forward and backward: with V + T rows of
// tables for B·T rows of x (the tiny encoder: 80 for 512 per slice) they are a small part of the
// work. Used in training forwards when the tables have at most a quarter of x's rows
// (kRowsPerTableRow), the block keeps its cache (no checkpointing) and x has no CLS vector; the
// attention uses them on its flash path only. docs/performance.md has the measurements.
#pragma once

#include <cstddef>
#include <vector>

#include "attnlab/model/token/trunk.hpp"

namespace attnlab::detail {

// x has at least this many times the tables' rows for the tables to be used.
constexpr std::size_t kRowsPerTableRow = 4;

// Fills cache.input_tables for x made from cache.tokens (B, T) (the tables point into that copy)
// and points cache.blocks[0]'s attention at them, or clears that pointer.
void set_input_tables(const Trunk& trunk, TrunkCache& cache);
// The first block projects x itself (x has a CLS vector in front).
void clear_input_tables(std::vector<TransformerBlockCache>& caches);
// Before backward: the tables' gradients go to dtok (V, C) and, with learned positions, dpos.
void set_input_table_gradients(TrunkCache& cache, Tensor2& dtok, Tensor2* dpos);

}  // namespace attnlab::detail
