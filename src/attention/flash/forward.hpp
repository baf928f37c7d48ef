// src/attention/flash/forward.hpp (private): FlashAttention's forward as its driver
// (drivers.cpp) sees it: what every task of a call reads (ForwardCall), the keys and values
// packed once per call, and the tasks, one per (batch, head, query tile), each on the call's
// path (path.hpp). The per-task functions, one per path, are in forward.cpp.
#pragma once

#include <cstddef>

#include "attnlab/attention/heads.hpp"
#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/normalizer.hpp"
#include "geometry.hpp"
#include "path.hpp"

namespace attnlab::flash {

// The forward's keys and values of every (batch, kv head), packed once for the online softmax's
// tile kernels (kernels/flash_tiles.hpp): linear in S, shared by all query tiles and query heads.
// The score tiles are stored keys by queries (flash_softmax_pv_columns), so the keys are the
// broadcast operand: each key tile packed as groups of flash_group() keys. Values whose rows are
// already a whole number of strips are read in place (packing would copy them unchanged); else
// padded to dp columns.
struct ForwardPacked {
    const float* data = nullptr;      // head bk's key tiles at bk·(key_floats + value_floats)
    std::size_t key_tile_floats = 0;  // floats per packed key tile
    std::size_t key_floats = 0;       // a head's packed key tiles
    std::size_t value_floats = 0;     // a head's packed values (S, dp); 0 when read in place
    std::size_t dp = 0;               // packed value row length (flash_padded_value_dim)
    bool values_in_place = false;
    std::size_t floats(const Dims& dm) const { return dm.batch * dm.kv_heads * (key_floats + value_floats); }
    const float* keys(std::size_t bk) const { return data + bk * (key_floats + value_floats); }
    const float* values(std::size_t bk) const { return keys(bk) + key_floats; }
};

// Packs K (B, Hkv, S, D) and V (B, Hkv, S, Dv) as ForwardPacked says, one task per (batch, kv
// head, key tile). The buffer is the calling thread's, grow-only; workers only read it.
ForwardPacked pack_forward_keys(const ConstHeadsView& k, const ConstHeadsView& v, const Dims& dm, const char* where);

// What every task of one forward call reads.
struct ForwardCall {
    ConstHeadsView q, k, v;  // (B, H, T, D), (B, Hkv, S, D), (B, Hkv, S, Dv)
    HeadsView context;       // (B, H, T, Dv)
    const AttentionMask& mask;
    Dims dm;
    std::size_t br;               // query rows of a tile (query_tile_rows)
    std::size_t ldq_max;          // br rounded up to whole strips: the queries of a stored score tile
    float factor;                 // the softmax scale
    FlashPath path;
    bool lazy;                    // the table prefers the lazy-reference variant (kernels::flash_lazy_exp())
    float* logsumexp;             // (B, H, T), or null
    float* kept_weights;          // fused_one_tile: (B·H·T, kOneTileLd) weights for the backward, or null
    ForwardPacked packed;         // key_tiles and pointwise_tiles only
    Normalizer normalizer;
    const float* visible;         // pointwise_tiles: (B, T) n_i, each query's visible keys
};

// What the tasks of one call used (FlashAttentionStats): the tile scratch alive at once, and the
// lazy-reference key tiles (FlashAttentionStats::lazy_*).
struct ForwardUse {
    std::size_t peak_scratch_bytes = 0;
    std::size_t lazy_tiles = 0, lazy_rescaled_rows = 0, lazy_recomputed_tiles = 0;
};

// Runs one task per (batch, head, query tile) over the pool, each on c.path; a task owns its
// rows of context and logsumexp (rows that see no key get zeros and -inf there).
ForwardUse run_forward_tasks(const ForwardCall& c);

}  // namespace attnlab::flash
