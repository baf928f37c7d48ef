// attnlab/attention/multi_head_attention.hpp: multi-head attention with MHA / GQA / MQA,
// self- and cross-attention, RoPE, masks and stage recording.
//
// What it is for: the attention layer of a Transformer (article §3). Projections W_Q, W_K, W_V,
// W_O are separate Linear layers with PyTorch's (out_features, in_features) layout, so the
// weights of torch.nn.MultiheadAttention (in_proj_weight split in three) load directly.
// The flow, with stages in brackets:
//   [x] -> q = x·W_Qᵀ, k = m·W_Kᵀ, v = m·W_Vᵀ (m = memory for cross-attention, else x)
//       -> split_heads: [q] (B, H, T, D), [k] [v] (B, Hkv, S, D) -> RoPE: [q_rot] [k_rot]
//       -> scaled_dot_product_attention: [scores] [scaled] [masked] [weights] [context]
//       -> merge_heads: [concat] (B, T, C) -> ·W_Oᵀ: [output]
// num_kv_heads = num_heads is MHA, 1 is MQA, any other divisor of num_heads is GQA (Ainslie et
// al. 2023): W_K and W_V then project to Hkv·D, fewer than C, features.
// tie_qk makes one weight (and bias) serve as W_Q and W_K (article §2.1 asks why they are not
// shared: with W_Q = W_K the score matrix x·W·Wᵀ·xᵀ is symmetric, so token i attends to j as
// much as j to i); k_proj is then unused and empty, q_proj's gradient is the sum of both uses.
// The normaliser of the weights (softmax, sigmoid, relu) is a per-call option (normalizer.hpp).
// With options.precision fp16 or bf16 the layer emulates that number format: every stored
// activation (and in backward every stored gradient) is rounded to it; the weights stay float32.
// Not for: additive positional encodings (applied to the embeddings before this layer).
//
//   attnlab::Rng rng(1);
//   attnlab::MultiHeadAttention mha({/*d_model=*/64, /*num_heads=*/4}, rng);
//   attnlab::AttentionOptions opt; opt.mask.causal = true; opt.rope = true;
//   attnlab::TraceRecorder trace;
//   attnlab::Tensor3 y = mha.forward(x, nullptr, opt, &trace);   // (B, T, 64) -> (B, T, 64)
#pragma once

#include <cstddef>
#include <vector>

#include "attnlab/attention/attention_options.hpp"
#include "attnlab/attention/linear_attention.hpp"
#include "attnlab/attention/block_sparse.hpp"
#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/attention/variant.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/parameter.hpp"
#include "attnlab/posenc/rope.hpp"

namespace attnlab {

struct MultiHeadAttentionConfig {
    std::size_t d_model = 0;       // C: width of x and of the output
    std::size_t num_heads = 1;     // H: query heads, D = C / H
    std::size_t num_kv_heads = 0;  // Hkv: key/value heads; 0 means num_heads (plain MHA)
    bool bias = true;              // biases on all four projections
    std::size_t kv_dim = 0;        // width of `memory` for cross-attention; 0 means d_model
    bool tie_qk = false;           // W_K is W_Q (and b_K is b_Q): k_proj unused; needs Hkv = H and Ckv = C

    std::size_t kv_heads() const { return num_kv_heads == 0 ? num_heads : num_kv_heads; }
    std::size_t head_dim() const { return num_heads == 0 ? 0 : d_model / num_heads; }
    std::size_t memory_dim() const { return kv_dim == 0 ? d_model : kv_dim; }
    // Throws ConfigError naming the numbers: d_model % num_heads, num_heads % num_kv_heads, zeros,
    // and tie_qk with fewer key heads than query heads or a memory width other than d_model.
    void validate() const;
};

// What backward needs from the forward pass.
struct MultiHeadAttentionCache {
    Tensor3 x;                 // (B, T, C) input: dW_Q = dqᵀ·x
    Tensor3 memory;            // (B, S, Ckv) key/value source for cross-attention (empty for self)
    // The heads of q, k, v, in one of two layouts (heads_in_rows says which):
    // split by split_heads (RoPE, or the recorded path an observer or need_weights asked for):
    Tensor4 q;                 // (B, H, T, D) after RoPE: dK = dscoresᵀ·q
    Tensor4 k;                 // (B, Hkv, S, D) after RoPE: dQ = dscores·k
    Tensor4 v;                 // (B, Hkv, S, D): dweights = dcontext·vᵀ
    // or left in the projections' rows, read in place by the flash path (attention/heads.hpp
    // HeadsView): no split before attention or merge after it, forward or backward.
    bool heads_in_rows = false;
    Tensor3 q_rows;            // (B, T, H·D)
    Tensor3 k_rows, v_rows;    // (B, S, Hkv·D)
    // logsumexp and context (flash path; with heads in rows the context is `concat` itself), or
    // the softmax weights when an observer forced the recorded path (see AttentionCache)
    AttentionCache attention = AttentionCache::without_weights();
    // variant linear (attention/linear_attention.hpp) instead of `attention`: φ(q), φ(k), the
    // denominators and the context, with q, k, v split into heads above
    LinearAttentionCache linear;
    Tensor3 concat;            // (B, T, C): dW_O = doutᵀ·concat
    // Set by the caller before a training forward whose x is rows of tables (nn/linear.hpp
    // TableRows: a model's first block, x = token embedding + positions; rows = B·T, width C):
    // the q, k, v projections then multiply the tables instead of x (self-attention on the flash
    // path; otherwise x as usual), and backward sends the input gradient through the
    // projections to tables->da / ->db (set before backward) instead of dx, which then holds
    // only the residual. `used` records which the forward did. The tables belong to the
    // caller's buffers, so a copied (or moved) cache holds neither: its backward takes x.
    struct InputTables {
        const TableRows* tables = nullptr;
        bool used = false;
        InputTables() = default;
        InputTables(const InputTables&) {}
        InputTables& operator=(const InputTables&) {
            tables = nullptr;
            used = false;
            return *this;
        }
    };
    InputTables input;

    // Scratch kept from call to call so a training loop allocates nothing: a projection's rows
    // before the head split, the context when the cache does not keep it, and the backward's
    // intermediate gradients. Not part of what backward needs from the forward.
    struct Scratch {
        Tensor3 proj;                        // (B, N, W) one projection before split_heads
        Tensor2 tables;                      // (a_rows + b_rows, out) a projection's table products (input)
        Tensor4 context;                     // (B, H, T, D) recorded path
        Tensor3 dconcat, dq_rows, dk_rows, dv_rows;
        Tensor4 dcontext, dq, dk, dv;
    };
    mutable Scratch scratch;
};

// Gradients of the four projections; backward accumulates into them with +=.
struct MultiHeadAttentionGrad {
    LinearGrad q_proj, k_proj, v_proj, out_proj;  // with tie_qk, k_proj is empty (q_proj holds both uses)
    bool tie_qk = false;

    // Zero tensors shaped like mha's parameters.
    explicit MultiHeadAttentionGrad(const class MultiHeadAttention& mha);
    MultiHeadAttentionGrad() = default;
    void zero();
    // Same names and order as MultiHeadAttention::parameters(prefix).
    std::vector<ParameterView> views(const std::string& prefix = "");
};

// What incremental decoding keeps of the tokens generated so far. Softmax attention (variants
// full): their keys and values after RoPE, growing by one row per token. Linear attention: the
// recurrent state Σ φ(k_j) v_jᵀ and Σ φ(k_j) per key/value head, of constant size (linear
// attention is an RNN; attention/linear_attention.hpp); k and v then stay empty.
struct KvCache {
    Tensor4 k;  // (B, Hkv, S_past, D)
    Tensor4 v;  // (B, Hkv, S_past, D)
    LinearAttentionState linear;  // variant linear: (B, Hkv, D, Dv) and (B, Hkv, D)
    std::size_t length() const { return k.size() == 0 ? linear.length : k.shape(2); }
    void clear() {
        k = Tensor4();
        v = Tensor4();
        linear.clear();
    }
};

class MultiHeadAttention {
public:
    MultiHeadAttention() = default;
    // W_Q, W_K, W_V ~ Xavier-uniform and zero biases, W_O like torch.nn.Linear with zero bias —
    // torch.nn.MultiheadAttention's initialisation.
    MultiHeadAttention(const MultiHeadAttentionConfig& config, Rng& rng);

    const MultiHeadAttentionConfig& config() const { return config_; }

    // x: (B, T, C), memory: (B, S, Ckv) or nullptr for self-attention -> (B, T, C)
    Tensor3 forward(const Tensor3& x, const Tensor3* memory = nullptr, const AttentionOptions& options = {},
                    StageObserver* observer = nullptr, MultiHeadAttentionCache* cache = nullptr) const;
    // The same into `out` (resized; not x or memory). With a cache reused from call to call
    // (its buffers, scratch included, keep their shapes), this allocates nothing. With a
    // residual (B, T, C) (not out), out = residual + attention(x): a residual connection, the
    // sum made in W_O's store (the output stage still shows attention(x) alone).
    void forward(const Tensor3& x, const Tensor3* memory, const AttentionOptions& options, StageObserver* observer,
                 MultiHeadAttentionCache* cache, Tensor3& out, const Tensor3* residual = nullptr) const;
    // Unbatched: x: (T, C), memory: (S, Ckv) or nullptr -> (T, C); stages use batch 0.
    Tensor2 forward(const Tensor2& x, const Tensor2* memory = nullptr, const AttentionOptions& options = {},
                    StageObserver* observer = nullptr) const;

    // Backward of the batched forward that filled `cache` (with the same options).
    // dout: (B, T, C) -> dx: (B, T, C), and dmemory: (B, S, Ckv) for cross-attention (required
    // then); parameter gradients accumulate into grads. With a residual (B, T, C) (not dx), dx =
    // residual + the gradient through attention, summed in the last product's store.
    void backward(const Tensor3& dout, const MultiHeadAttentionCache& cache, const AttentionOptions& options,
                  MultiHeadAttentionGrad& grads, Tensor3& dx, Tensor3* dmemory = nullptr,
                  const Tensor3* residual = nullptr) const;

    // Incremental causal self-attention for generation: x holds the T newest tokens at positions
    // kv.length() .. kv.length()+T-1; their keys and values (after RoPE) are appended to kv and
    // attention runs over all cached keys. Equal to the uncached forward on the whole sequence.
    // options.mask.causal is implied; options.position_offset is ignored (kv.length() is used).
    // With variant linear, kv holds the recurrent state instead (kv.linear) and the stages are
    // phi_q, phi_k and context (no (T, S) weights: the past keys are not kept).
    // x: (B, T, C) -> (B, T, C)
    Tensor3 forward_incremental(const Tensor3& x, KvCache& kv, const AttentionOptions& options = {},
                                StageObserver* observer = nullptr) const;

    // q_proj.weight, q_proj.bias, k_proj..., v_proj..., out_proj... (biases only when present),
    // each with `prefix` prepended; with tie_qk no k_proj (q_proj is listed once).
    std::vector<ParameterView> parameters(const std::string& prefix = "");

    Linear q_proj;    // (C, C)
    Linear k_proj;    // (Hkv·D, Ckv); empty with tie_qk
    // The projection of the keys: q_proj with tie_qk, else k_proj.
    const Linear& key_proj() const { return config_.tie_qk ? q_proj : k_proj; }
    Linear v_proj;    // (Hkv·D, Ckv)
    Linear out_proj;  // (C, C)

private:
    // forward's two ways to buffers.concat (B, T, C), and their backwards from
    // cache.scratch.dconcat to the projections' output gradients cache.scratch.dq_rows, .dk_rows,
    // .dv_rows. split_heads_attention: q, k, v split into buffers.q, .k, .v (RoPE, or the
    // recorded path); heads_in_rows_attention: the flash path on the heads read in place from
    // the projections' rows (attention/heads.hpp heads_in_rows).
    void split_heads_attention(const Tensor3& x, const Tensor3* memory, const AttentionOptions& options,
                               StageObserver* observer, MultiHeadAttentionCache& buffers,
                               AttentionCache* attention) const;
    void split_heads_attention_backward(const MultiHeadAttentionCache& cache, const AttentionOptions& options) const;
    void heads_in_rows_attention(const Tensor3& x, const Tensor3* memory, const AttentionOptions& options,
                                 StageObserver* observer, MultiHeadAttentionCache& buffers,
                                 MultiHeadAttentionCache* cache) const;
    void heads_in_rows_attention_backward(const MultiHeadAttentionCache& cache, const AttentionOptions& options) const;
    // out (B, T, C) = concat·W_Oᵀ + b_O (+ residual), rounded and reported as the output stage.
    void output_projection(const Tensor3& concat, const AttentionOptions& options, StageObserver* observer,
                           const Tensor3* residual, Tensor3& out) const;
    // The projections' backward from cache.scratch.dq_rows, .dk_rows, .dv_rows: into dx (and
    // dmemory), or into the input tables when the forward projected them.
    void projections_backward(const MultiHeadAttentionCache& cache, const AttentionOptions& options,
                              MultiHeadAttentionGrad& grads, Tensor3& dx, Tensor3* dmemory,
                              const Tensor3* residual) const;
    void input_tables_backward(const MultiHeadAttentionCache& cache, MultiHeadAttentionGrad& grads,
                               const Tensor3* residual, Tensor3& dx) const;

    MultiHeadAttentionConfig config_;
};

}  // namespace attnlab
