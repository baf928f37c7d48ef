// src/attention/flash/path.hpp (private): which of its four paths a FlashAttention call takes,
// chosen by named predicates; each path is a per-task function named for what it does
// (forward.cpp, backward.cpp):
//
//   path            chosen when                               forward                 backward (dk/dv; dq)
//   fused_one_tile  fused_one_tile_{forward,backward}_applies forward_fused_one_tile  backward_fused_one_tile
//                   (all keys in one tile, at most causal,
//                   sizes the fused kernels take)
//   single_tile     all_keys_in_one_tile                      forward_single_tile     backward_single_tile
//   key_tiles       otherwise                                 forward_online_softmax  backward_key_tile;
//                                                                                     backward_query_tile
//   pointwise_tiles sigmoid or relu (forward only; their      forward_pointwise_tiles (single_tile or key_tiles)
//                   backward takes single_tile or key_tiles)
#pragma once

#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/normalizer.hpp"
#include "attnlab/kernels/flash_tiles.hpp"
#include "geometry.hpp"

namespace attnlab::flash {

// All keys fit one key tile (S <= kFlashKeyTile): each query tile meets exactly one key tile,
// so no online softmax is needed and the backward's dk/dv pass can also write dq.
inline bool all_keys_in_one_tile(const Dims& dm) { return dm.s <= BC; }

// The fused one-tile kernels (kernels/flash_tiles.hpp) apply: one key tile, no mask but a causal
// one, a key count and head dims the kernels take (the tiny models' training). The forward's
// kernel takes any D; the backward's products need D to fit too.
inline bool fused_one_tile_forward_applies(const Dims& dm, const AttentionMask& mask) {
    return all_keys_in_one_tile(dm) && mask.at_most_causal() && kernels::one_tile_fits(dm.s, dm.dv);
}
inline bool fused_one_tile_backward_applies(const Dims& dm, const AttentionMask& mask) {
    return all_keys_in_one_tile(dm) && mask.at_most_causal() && kernels::one_tile_fits(dm.s, dm.d) &&
           kernels::one_tile_fits(dm.s, dm.dv);
}

// The paths. single_tile runs the recorded path's operations in the same order, so it equals
// that path bit for bit; fused_one_tile equals single_tile bit for bit; key_tiles (an online
// softmax) equals them to rounding.
enum class FlashPath {
    fused_one_tile,  // one key tile, at most causal: scores in registers (kernels::one_tile_*)
    single_tile,     // one key tile: plain softmax with matmul products, any mask
    key_tiles,       // several key tiles: online softmax over packed key tiles (forward); a dk/dv
                     // pass and a dq pass over packed keys and values (backward)
    pointwise_tiles,  // forward with sigmoid or relu: w = f(s) per packed key tile, o += w·v_j
};

// sigmoid and relu weigh each score alone (attention/normalizer.hpp): no row statistics.
inline bool pointwise(Normalizer normalizer) { return normalizer != Normalizer::softmax; }

inline FlashPath forward_path(const Dims& dm, const AttentionMask& mask, Normalizer normalizer) {
    if (pointwise(normalizer)) return FlashPath::pointwise_tiles;
    if (fused_one_tile_forward_applies(dm, mask)) return FlashPath::fused_one_tile;
    return all_keys_in_one_tile(dm) ? FlashPath::single_tile : FlashPath::key_tiles;
}
// The fused kernels differentiate the softmax: sigmoid and relu take the other two paths, whose
// tile step is the normaliser's (tile_step).
inline FlashPath backward_path(const Dims& dm, const AttentionMask& mask, Normalizer normalizer) {
    if (!pointwise(normalizer) && fused_one_tile_backward_applies(dm, mask)) return FlashPath::fused_one_tile;
    return all_keys_in_one_tile(dm) ? FlashPath::single_tile : FlashPath::key_tiles;
}

}  // namespace attnlab::flash
