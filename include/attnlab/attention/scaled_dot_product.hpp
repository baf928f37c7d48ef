// attnlab/attention/scaled_dot_product.hpp: scaled dot-product attention with explicit stages.
//
// What it is for: the core of attention (Vaswani et al. 2017, eq. 1), computed as five named
// steps so each can be observed (article §2.3):
//   scores = Q·Kᵀ, scaled = scores·scale, masked = mask(scaled), weights = softmax(masked),
//   context = weights·V.
// scale is 1/sqrt(D) by default (§2.2: q·k has variance D for unit-variance q, k, so unscaled
// scores saturate the softmax as D grows); it can be switched off or overridden for the
// experiments. Grouped-query attention is built in: Q has H heads, K and V have Hkv heads with
// H % Hkv == 0, and query head h reads key/value head h / (H / Hkv) (MHA: Hkv = H; MQA: Hkv = 1).
// Not for: projections or head splitting (see multi_head_attention.hpp).
//
//   attnlab::AttentionMask mask; mask.causal = true;
//   attnlab::Tensor4 ctx = attnlab::scaled_dot_product_attention(q, k, v, mask);  // (B, H, T, D)
#pragma once

#include <cstddef>
#include <optional>

#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

struct ScaleOptions {
    bool enabled = true;                // false: scaled == scores (the "no scaling" experiment)
    std::optional<float> factor;        // multiply by this instead of 1/sqrt(D) (when enabled)

    // The factor applied to the scores for head dimension d.
    float effective(std::size_t head_dim) const;
};

// What backward needs from the forward pass.
struct AttentionCache {
    Tensor4 weights;  // (B, H, T, S) softmax output: dV = weightsᵀ·dC and the softmax Jacobian need it
};

// q: (B, H, T, D), k: (B, Hkv, S, D), v: (B, Hkv, S, Dv) -> context (B, H, T, Dv)
// Stages scores, scaled, masked, weights, context go to `observer` per (batch, query head).
// Fills `cache` (if non-null) for scaled_dot_product_attention_backward.
// Throws ShapeError / ConfigError naming the shapes if they do not fit, or if H % Hkv != 0.
Tensor4 scaled_dot_product_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                     const AttentionMask& mask = {}, const ScaleOptions& scale = {},
                                     StageObserver* observer = nullptr, AttentionCache* cache = nullptr);

// Backward of scaled_dot_product_attention (mask and scale as in the forward call):
//   dweights = dcontext·vᵀ, dv = weightsᵀ·dcontext, dmasked = softmax'(weights, dweights),
//   dscores = dmasked·scale (masked entries have zero weight, hence zero gradient),
//   dq = dscores·k, dk = dscoresᵀ·q. Grouped heads sum their dk, dv into the shared kv head.
// dcontext: (B, H, T, Dv); q, k, v: forward inputs; cache: from the forward call
//   -> dq: (B, H, T, D), dk: (B, Hkv, S, D), dv: (B, Hkv, S, Dv) (overwritten, resized if needed)
void scaled_dot_product_attention_backward(const Tensor4& dcontext, const Tensor4& q, const Tensor4& k,
                                           const Tensor4& v, const AttentionCache& cache, const ScaleOptions& scale,
                                           Tensor4& dq, Tensor4& dk, Tensor4& dv);

}  // namespace attnlab
