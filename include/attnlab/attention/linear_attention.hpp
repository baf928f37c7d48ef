// attnlab/attention/linear_attention.hpp: linear attention (Katharopoulos et al. 2020), the
// `linear` AttentionVariant.
//
// What it is for: the article's §5.3 answer to O(n²) attention. Softmax's similarity
// exp(q·k/√D) is replaced by a kernel φ(q)·φ(k) with the feature map φ(x) = elu(x) + 1
// (positive, so every weight is >= 0), applied to each head's q and k (after RoPE when RoPE is
// on; there is no 1/√D scale):
//   out_i = Σ_j φ(q_i)·φ(k_j) v_j / (Σ_j φ(q_i)·φ(k_j) + 1e-6)     over the keys j query i may see.
// Because φ(q_i) factors out of both sums, out_i = φ(q_i)ᵀ·KV / (φ(q_i)·Z + 1e-6) with the
// (D × Dv) state KV = Σ_j φ(k_j) v_jᵀ and the D-vector Z = Σ_j φ(k_j): formed once per head,
// the whole call costs O(T·D·Dv) instead of O(T·S·D) and never holds a (T, S) matrix. With the
// causal mask the sums run over the keys seen so far, so generation keeps only KV and Z per
// head, a state of constant size: linear attention is an RNN (LinearAttentionState).
//
// Two implementations, as for softmax attention (scaled_dot_product.hpp):
//  * recorded: the implied (T, S) weights w_ij = φ(q_i)·φ(k_j) / (Σ_j' φ(q_i)·φ(k_j') + 1e-6)
//    per head, with the stages phi_q, phi_k, weights and context observable (the reference);
//  * fast: the running sums above, O(T·D·Dv) time and O(D·Dv) memory per head beyond the
//    output; stages phi_q, phi_k and context observable.
// They agree to ~1e-6 (the sums are the same, added in another order).
//
// Masks: causal (bottom-right aligned, as in mask.hpp) and key padding (a padded key adds
// nothing to either sum). An explicit (T, S) mask or a sliding window is refused with a
// ConfigError: the sums cannot leave out an arbitrary set of keys per query. A query that sees
// no key gets 0 (numerator 0, denominator 1e-6), never NaN. Grouped-query attention as in
// scaled_dot_product.hpp: query head h reads key/value head h / (H / Hkv).
// Not for: the softmax variants (scaled_dot_product.hpp, flash_attention.hpp).
//
//   attnlab::AttentionMask mask; mask.causal = true;
//   attnlab::LinearAttentionCache cache;
//   attnlab::Tensor4 ctx = attnlab::linear_attention(q, k, v, mask, nullptr, &cache);  // (B, H, T, Dv)
//   attnlab::linear_attention_backward(dctx, v, cache, dq, dk, dv);
#pragma once

#include <cstddef>

#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

// The 1e-6 added to every denominator (Katharopoulos et al.'s eps): keeps a query that sees no
// key at 0 / 1e-6 = 0.
inline constexpr float kLinearAttentionEps = 1e-6f;

// φ(x) = elu(x) + 1: x + 1 for x > 0, exp(x) otherwise.
float linear_attention_phi(float x);

// Which implementation runs.
enum class LinearBackend {
    automatic,  // recorded when an observer wants Stage::weights, else fast
    recorded,   // the (T, S) weights per head, every stage observable (the reference)
    fast,       // running sums, no (T, S) matrix
};

// What backward needs from the forward pass.
struct LinearAttentionCache {
    bool recorded = false;  // filled by the forward: which path ran (weights present or not)
    Tensor4 phi_q;          // (B, H, T, D) φ(q): dKV = φ(q)ᵀ·dnum, and φ'(q) (= 1 where φ > 1, else φ)
    Tensor4 phi_k;          // (B, Hkv, S, D) φ(k): dv = dKVᵀ·φ(k), and φ'(k)
    Tensor3 denominator;    // (B, H, T) Σ_j φ(q_i)·φ(k_j) + 1e-6: dnum = dout / denominator
    Tensor4 context;        // (B, H, T, Dv) out: ddenominator = -dout·out / denominator
    Tensor4 weights;        // (B, H, T, S) recorded path only: dv = weightsᵀ·dout
    AttentionMask mask;     // causal and key padding, re-applied by the backward

    // Bytes held by the tensors above.
    std::size_t bytes() const;
};

// Throws ConfigError naming `where` if mask has a component linear attention cannot apply (an
// explicit (T, S) mask, a window) and saying why.
void require_linear_attention_mask(const AttentionMask& mask, const char* where);

// True if the observer wants a stage only the recorded path has (weights).
bool linear_attention_needs_recorded(const StageObserver* observer);

// q: (B, H, T, D), k: (B, Hkv, S, D), v: (B, Hkv, S, Dv) -> context (B, H, T, Dv)
// Stages phi_q, phi_k (per key/value head), weights (recorded path) and context go to
// `observer`. Fills `cache` (if non-null) for linear_attention_backward.
// Throws ShapeError / ConfigError naming the shapes if they do not fit or H % Hkv != 0, and
// ConfigError (require_linear_attention_mask) for a mask component it cannot apply.
Tensor4 linear_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask = {},
                         StageObserver* observer = nullptr, LinearAttentionCache* cache = nullptr,
                         LinearBackend backend = LinearBackend::automatic);
// The same, writing into `context` (resized; its buffer is kept when the shape is unchanged).
void linear_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                      StageObserver* observer, LinearAttentionCache* cache, LinearBackend backend, Tensor4& context);

// Backward of linear_attention, by the path the forward took (cache.recorded):
//   out_i = num_i / den_i, num_i = Σ_j (φq_i·φk_j) v_j, den_i = Σ_j φq_i·φk_j + 1e-6
//   dnum_i = dout_i / den_i, dden_i = -dout_i·out_i / den_i
//   dφq_i = Σ_j φk_j (v_j·dnum_i + dden_i), dφk_j = Σ_i φq_i (v_j·dnum_i + dden_i),
//   dv_j = Σ_i (φq_i·φk_j) dnum_i      (sums over the visible pairs)
//   dq = dφq ⊙ φ'(q), dk = dφk ⊙ φ'(k). Grouped heads sum their dk, dv into the shared kv head.
// dcontext: (B, H, T, Dv); v: the forward's v (B, Hkv, S, Dv); cache: from the forward call
//   -> dq: (B, H, T, D), dk: (B, Hkv, S, D), dv: (B, Hkv, S, Dv) (overwritten, resized if needed)
void linear_attention_backward(const Tensor4& dcontext, const Tensor4& v, const LinearAttentionCache& cache,
                               Tensor4& dq, Tensor4& dk, Tensor4& dv);

// The recurrent state of causal linear attention for generation: what the keys and values of
// all tokens so far contribute, in a size that does not grow with their number.
struct LinearAttentionState {
    Tensor4 kv;              // (B, Hkv, D, Dv) Σ_j φ(k_j) v_jᵀ
    Tensor3 k_sum;           // (B, Hkv, D) Σ_j φ(k_j)
    std::size_t length = 0;  // tokens folded in so far

    void clear() { *this = LinearAttentionState(); }
};

// One incremental step of causal linear attention: the T new tokens at positions
// state.length .. state.length+T-1 fold their keys and values into the state one at a time,
// and each query reads the state that holds every key up to its own position. Equal to
// linear_attention with the causal mask on the whole sequence.
// q: (B, H, T, D), k_new: (B, Hkv, T, D), v_new: (B, Hkv, T, Dv),
// key_padding: (B, state.length + T) or empty (only the new columns are read)
//   -> context (B, H, T, Dv). Stages phi_q, phi_k, context go to `observer`.
Tensor4 linear_attention_step(const Tensor4& q, const Tensor4& k_new, const Tensor4& v_new, const Mask2& key_padding,
                              LinearAttentionState& state, StageObserver* observer = nullptr);

}  // namespace attnlab
