// attnlab/interp/direct_logit_attribution.hpp: each head's direct contribution to one logit.
//
// What it is for: asking which heads write a token's logit straight into the residual stream.
// In a pre-LN decoder the final stream at a position is a sum of parts (interp/run.hpp):
//   x = embed + Σ_l (Σ_h head_{l,h} + b_O,l) + Σ_l mlp_l,
//   head_{l,h} = z_{l,h} · W_O,l[:, h·D : (h+1)·D]ᵀ   (z: the head's output before W_O)
//   mlp_l = residual[l+1] - residual[l] - attention output_l
// and logit = W_U[token] · ln_f(x), ln_f(x) = γ ⊙ (x - mean(x)) / σ + β, σ = sqrt(var(x) + eps).
// With σ frozen at the value of the actual x (TransformerLens' apply_ln_to_stack with the cached
// scale), ln_f is linear in x's parts, so the logit splits exactly:
//   part p contributes W_U[token] · (γ ⊙ (p - mean(p)) / σ), and β adds W_U[token] · β;
// the contributions sum to the logit. TransformerLens folds γ into W_U first (fold_ln); the
// numbers are the same. Not for: post-LN models, whose stream is normalised inside every block
// (not a sum of the heads' outputs): refused with a ConfigError.
//
//   attnlab::interp::Attribution a = attnlab::interp::direct_logit_attribution(gpt, tokens, t - 1, id);
//   float head_1_0 = a.heads(1, 0);   // a.total() == a.logit up to rounding
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/core/tensor.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace attnlab::interp {

struct Attribution {
    double logit = 0.0;             // the model's logit of the token at the position
    Tensor2 heads;                  // (L, H) each head's direct contribution
    std::vector<double> attn_bias;  // (L) each layer's b_O
    std::vector<double> mlp;        // (L) each layer's feed-forward
    double embed = 0.0;             // token (and learned position) embedding
    double ln_bias = 0.0;           // ln_f's β
    double total() const;           // the sum of every part: equals logit
};

// tokens (T), position < T, token < V. ConfigError for a post-LN model; ValueError naming a
// position or token out of range.
Attribution direct_logit_attribution(const DecoderLM& model, const std::vector<std::int32_t>& tokens,
                                     std::size_t position, std::int32_t token);

}  // namespace attnlab::interp
