// src/attention/flash/backward.hpp (private): FlashAttention's backward as its driver
// (drivers.cpp) sees it: delta = rowsum(dO ⊙ O), what every task of a call reads
// (BackwardCall), the keys and values packed once per call, and the two passes of tasks: dk/dv
// per (batch, kv head, key tile), then dq per (batch, head, query tile) when there are several
// key tiles. The per-task functions, one per path (path.hpp), are in backward.cpp.
#pragma once

#include <cstddef>

#include "attnlab/attention/heads.hpp"
#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/normalizer.hpp"
#include "geometry.hpp"
#include "path.hpp"

namespace attnlab::flash {

// delta = rowsum(dO ⊙ O) (B, H, T): Σ_j p_j·dp_j of the softmax Jacobian, since
// Σ_j p_j (dO · v_j) = dO · Σ_j p_j v_j = dO · O. dcontext, context: (B, H, T, Dv).
void output_gradient_dots(const ConstHeadsView& dcontext, const ConstHeadsView& context, const Dims& dm,
                          float* delta);

// The backward's K (B, Hkv, S, D) and V (B, Hkv, S, Dv) of every (batch, kv head), packed once
// as strips for the key_tiles path (s = q·kᵀ and dp = dO·vᵀ are both flash_scores products, each
// packed operand used by many tiles).
struct BackwardPacked {
    const float* data = nullptr;  // head bk's keys at bk·(key_floats + value_floats), then its values
    std::size_t key_floats = 0, value_floats = 0;
    std::size_t floats(const Dims& dm) const { return dm.batch * dm.kv_heads * (key_floats + value_floats); }
    const float* keys(std::size_t bk) const { return data + bk * (key_floats + value_floats); }
    const float* values(std::size_t bk) const { return keys(bk) + key_floats; }
};

// Packs as BackwardPacked says, in parallel. The buffer is the calling thread's, grow-only;
// workers only read it.
BackwardPacked pack_backward_keys(const ConstHeadsView& k, const ConstHeadsView& v, const Dims& dm,
                                  const char* where);

// What every task of one backward call reads.
struct BackwardCall {
    ConstHeadsView dout, q, k, v;  // (B, H, T, Dv), (B, H, T, D), (B, Hkv, S, D), (B, Hkv, S, Dv)
    HeadsView dq, dk, dv;          // (B, H, T, D), (B, Hkv, S, D), (B, Hkv, S, Dv)
    const AttentionMask& mask;
    Dims dm;
    std::size_t br;             // query rows of a tile (query_tile_rows)
    float factor;               // the softmax scale
    FlashPath path;
    const float* lse;           // (B, H, T) logsumexp from the forward
    const float* delta;         // (B, H, T) rowsum(dO ⊙ O)
    const float* kept_weights;  // fused_one_tile: (B·H·T, kOneTileLd) the forward's weights, or null
    BackwardPacked packed;      // key_tiles only
    Normalizer normalizer;
    const float* visible;       // sigmoid, relu: (B, T) n_i, each query's visible keys
    float* dscores = nullptr;   // (B, H, T, S) dL/d(biased scores) when the mask wants the score bias's gradient
};

// Runs the dk/dv pass (one task per (batch, kv head, key tile), which owns those rows of dk and
// dv; with one key tile it also writes dq), then, with several key tiles, the dq pass (one task
// per (batch, head, query tile), which owns those rows of dq). Every row of dq, dk, dv is written
// (rows no tile reaches get zeros). Returns the tile scratch alive at once, in bytes.
std::size_t run_backward_tasks(const BackwardCall& c);

}  // namespace attnlab::flash
