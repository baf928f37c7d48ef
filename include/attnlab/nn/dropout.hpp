// attnlab/nn/dropout.hpp: inverted dropout (Srivastava et al. 2014) with a seeded generator.
//
// What it is for: regularising the attention and feed-forward outputs of a block during
// training. Each element is kept with probability 1 - p and scaled by 1 / (1 - p) ("inverted"
// dropout), so evaluation is the identity and needs no rescaling. The mask comes from an
// attnlab::Rng, so a run is reproducible natively and in WebAssembly, and a block with gradient
// checkpointing can redraw exactly the same mask from a copy of the generator.
// Not for: evaluation (pass p = 0 or skip the call), or dropout on attention weights.
//
//   attnlab::Rng rng(7);
//   attnlab::DropoutCache cache;
//   attnlab::Tensor3 y = attnlab::dropout_forward(x, 0.1f, rng, &cache);   // (B, T, C)
//   attnlab::Tensor3 dx;
//   attnlab::dropout_backward(dy, cache, dx);                               // dx = dy ⊙ mask / (1 - p)
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

// What backward needs from the forward pass.
struct DropoutCache {
    Array<std::uint8_t, 3> keep;  // (B, T, C) 1 = kept: the gradient flows only through kept elements;
                                        // empty when p = 0 (identity)
    float scale = 1.0f;                 // 1 / (1 - p), applied to kept elements in both directions

    std::size_t bytes() const { return keep.size() * sizeof(std::uint8_t); }
};

// x: (B, T, C) -> (B, T, C). Draws one rng.uniform() per element in row-major order and keeps
// the element iff the draw is >= p. p = 0 returns x unchanged and draws nothing.
// Throws ValueError naming p unless 0 <= p < 1.
Tensor3 dropout_forward(const Tensor3& x, float p, Rng& rng, DropoutCache* cache = nullptr);
// The same into y (resized; may be x itself: the mask is applied in place). With a cache whose
// mask keeps its shape, nothing is allocated.
void dropout_forward(const Tensor3& x, float p, Rng& rng, DropoutCache* cache, Tensor3& y);
// dout: (B, T, C) -> dx: (B, T, C) (resized and overwritten): dx = dout ⊙ keep · scale.
void dropout_backward(const Tensor3& dout, const DropoutCache& cache, Tensor3& dx);

}  // namespace attnlab
