// attnlab/attention/scaled_dot_product.hpp: scaled dot-product attention with explicit stages.
//
// What it is for: the core of attention (Vaswani et al. 2017, eq. 1), computed as five named
// steps so each can be observed (article §2.3):
//   scores = Q·Kᵀ, scaled = scores·scale, masked = mask(scaled), weights = softmax(masked),
//   context = weights·V.
// The softmax can be swapped for sigmoid or ReLU (`normalizer`, attention/normalizer.hpp: the
// weights stage then holds σ(s − ln n_i) or max(s, 0) / n_i).
// scale is 1/sqrt(D) by default (§2.2: q·k has variance D for unit-variance q, k, so unscaled
// scores saturate the softmax as D grows); it can be switched off or overridden for the
// experiments. Grouped-query attention is built in: Q has H heads, K and V have Hkv heads with
// H % Hkv == 0, and query head h reads key/value head h / (H / Hkv) (MHA: Hkv = H; MQA: Hkv = 1).
// Two implementations sit behind the one function, as in PyTorch's SDPA: the recorded "math"
// path above (full (T, S) matrix per head, every stage observable; the reference) and the tiled
// flash path (flash_attention.hpp: O(T) memory, faster), taken whenever can_use_flash says no
// stage or weight of the (T, S) matrix was asked for. With S <= kFlashKeyTile the two agree bit
// for bit; beyond, to ~1e-6.
// Precision emulation (core/numeric_format.hpp): with precision.format fp16 or bf16 every stored
// stage (scores, scaled, weights, context) is rounded to the format, the products accumulating
// in float32; the softmax runs in float32 on the rounded scores or rounds every step
// (precision.softmax), stably or naively (precision.stable_softmax). Any precision other than
// plain float32 with the stable softmax runs on the recorded path (the flash path's tiles do
// not emulate it); the backward then rounds dweights, dscores, dq, dk and dv when stored.
// Not for: projections or head splitting (see multi_head_attention.hpp).
//
//   attnlab::AttentionMask mask; mask.causal = true;
//   attnlab::Tensor4 ctx = attnlab::scaled_dot_product_attention(q, k, v, mask);  // (B, H, T, D)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/normalizer.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/numeric_format.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

struct ScaleOptions {
    bool enabled = true;                // false: scaled == scores (the "no scaling" experiment)
    std::optional<float> factor;        // multiply by this instead of 1/sqrt(D) (when enabled)

    // The factor applied to the scores for head dimension d.
    float effective(std::size_t head_dim) const;
};

// What backward needs from the forward pass, in one of two forms (`flash` says which):
//  * recorded ("math") path: the full softmax weights, O(B·H·T·S);
//  * flash path (flash_attention.hpp): per-row logsumexp, the context and the mask, O(B·H·T·D);
//    the backward recomputes the weights tile by tile.
// need_weights is the caller's request, read by the forward: true (the default) keeps the
// weights (callers that read them), false lets the forward take the flash path when it can.
struct AttentionCache {
    bool need_weights = true;  // request: fill `weights` (forces the recorded path)
    bool flash = false;        // filled by the forward: which of the forms below is present
    Normalizer normalizer = Normalizer::softmax;  // filled by the forward: the backward differentiates it
    Tensor4 weights;           // (B, H, T, S) recorded path: dV = weightsᵀ·dC and the softmax Jacobian
    Tensor3 logsumexp;         // (B, H, T) flash path: weights = exp(scaled - logsumexp), recomputed
    Tensor4 context;           // (B, H, T, Dv) flash path: delta = rowsum(dC ⊙ context)
    // flash path: re-applied to each recomputed tile; recorded path with sigmoid or relu: gives
    // n_i for the backward (softmax's recorded backward needs no mask: it is in the weights)
    AttentionMask mask;
    // MultiHeadAttention's flash path with all keys in one tile (flash_attention_forward's
    // one_tile_weights): the weights (B·H·T, kOneTileLd), so its backward reads them instead of
    // recomputing them; no rows otherwise (and never filled by scaled_dot_product_attention).
    Tensor2 one_tile_weights;

    // Bytes held by the tensors above.
    std::size_t bytes() const;
    // A cache with need_weights = false (what training wants: the smaller form when possible).
    static AttentionCache without_weights() {
        AttentionCache cache;
        cache.need_weights = false;
        return cache;
    }
};

// Which implementation of scaled dot-product attention runs (PyTorch's SDPBackend, in small).
enum class SdpBackend {
    automatic,  // flash when can_use_flash, else the recorded path
    math,       // the recorded path: full (T, S) matrix, every stage observable (the reference)
    flash,      // tiled, O(T) memory; ConfigError with the reasons if can_use_flash says no
};

// Whether the flash path can serve a call with this observer, cache and precision. It cannot
// when the observer wants a (T, S) stage (scores, scaled, masked, weights: the flash path never
// holds them), the cache asks for the full weights, or the precision is not plain float32 with
// the stable softmax (low precision is emulated on the recorded path). Each failed condition
// appends a sentence to `reasons` (if non-null), e.g. "a StageObserver wants the (T, S) stage
// 'weights'".
bool can_use_flash(const StageObserver* observer, const AttentionCache* cache,
                   std::vector<std::string>* reasons = nullptr, const PrecisionOptions& precision = {});

// q: (B, H, T, D), k: (B, Hkv, S, D), v: (B, Hkv, S, Dv) -> context (B, H, T, Dv)
// Stages scores, scaled, masked, weights, context go to `observer` per (batch, query head)
// (only context on the flash path, which runs when no observer wants the others).
// Fills `cache` (if non-null) for scaled_dot_product_attention_backward. `normalizer` picks
// softmax, sigmoid or relu for the weights (attention/normalizer.hpp), on either path.
// Throws ShapeError / ConfigError naming the shapes if they do not fit, or if H % Hkv != 0;
// ConfigError with can_use_flash's reasons if backend is flash and it cannot serve the call.
Tensor4 scaled_dot_product_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                     const AttentionMask& mask = {}, const ScaleOptions& scale = {},
                                     StageObserver* observer = nullptr, AttentionCache* cache = nullptr,
                                     SdpBackend backend = SdpBackend::automatic,
                                     Normalizer normalizer = Normalizer::softmax, const PrecisionOptions& precision = {});
// The same, writing into `context` (resized; its buffer is kept when the shape is unchanged).
// It may be the cache's own `context` tensor: the flash path then keeps it without a copy.
void scaled_dot_product_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                                  const ScaleOptions& scale, StageObserver* observer, AttentionCache* cache,
                                  SdpBackend backend, Tensor4& context,
                                  Normalizer normalizer = Normalizer::softmax, const PrecisionOptions& precision = {});

// Backward of scaled_dot_product_attention (scale as in the forward call; the mask is in the
// weights, or in the cache on the flash path, whose backward is flash_attention_backward; the
// normaliser is the cache's: softmax' below, or sigmoid's w·(1 − w), or relu's 1/n_i where w > 0):
//   dweights = dcontext·vᵀ, dv = weightsᵀ·dcontext, dmasked = softmax'(weights, dweights),
//   dscores = dmasked·scale (masked entries have zero weight, hence zero gradient),
//   dq = dscores·k, dk = dscoresᵀ·q. Grouped heads sum their dk, dv into the shared kv head.
// dcontext: (B, H, T, Dv); q, k, v: forward inputs; cache: from the forward call
//   -> dq: (B, H, T, D), dk: (B, Hkv, S, D), dv: (B, Hkv, S, Dv) (overwritten, resized if needed)
void scaled_dot_product_attention_backward(const Tensor4& dcontext, const Tensor4& q, const Tensor4& k,
                                           const Tensor4& v, const AttentionCache& cache, const ScaleOptions& scale,
                                           Tensor4& dq, Tensor4& dk, Tensor4& dv, const PrecisionOptions& precision = {});

// The softmax of a recorded attention call under `precision` (the named strategy for anything
// but the stable float32 softmax, which is kernels::softmax_rows): w (rows, cols) with leading
// dimension ld holds the masked scores (-inf where hidden) and is overwritten by the weights,
// rounded to precision.format. A row with no visible key gets zeros. Returns the number of
// weights flushed to zero by rounding (any step of them, with softmax 'same'); when `cells` is
// given, their flat indices (row · cols + col) are appended to it too.
std::size_t softmax_rows_emulated(float* w, std::size_t rows, std::size_t cols, std::size_t ld,
                                  const PrecisionOptions& precision, FlushedCells* cells = nullptr);

}  // namespace attnlab
