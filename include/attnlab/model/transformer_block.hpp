// attnlab/model/transformer_block.hpp: one Transformer block (attention + feed-forward, each
// with a residual connection and a LayerNorm), Pre-LN or Post-LN, with optional dropout and
// gradient checkpointing. (The attention diagnostics observers are in attention_stats.hpp.)
//
// What it is for: the repeated unit of EncoderClassifier and DecoderLM (nanoGPT's Block):
//   pre-LN  (GPT-2):        h = x + drop(attn(ln1(x)));   y = h + drop(ffn(ln2(h)))
//   post-LN (Vaswani, BERT): h = ln1(x + drop(attn(x)));  y = ln2(h + drop(ffn(h)))
// With config.attention_only the block stops at h (y = h: no ln2, no feed-forward), the
// attention-only Transformer of Elhage et al. 2021 ("A Mathematical Framework for Transformer
// Circuits"), where every path through the model is a product of attention heads.
// The residual adds are plain sums, so in backward the upstream gradient reaches x twice: once
// straight through the skip connection and once through the sub-layer (tested in
// tests/model/test_transformer_block.cpp). Names follow PyTorch: "ln1.weight",
// "attn.q_proj.weight", "ffn.fc1.weight", ...
//
// Gradient checkpointing (Chen et al. 2016): with it on, forward keeps only the block input and
// a copy of the dropout generator; backward first recomputes the forward (drawing the same
// dropout masks from the copy) and then differentiates. The gradients are bit-identical; the
// cache shrinks from ~(8 + 2·F/C)·B·T·C + B·H·T² floats (plus 2·B·T·C mask bytes with dropout)
// to B·T·C, at the cost of a second forward (B=4, T=32, C=32, F=128: 338 KB -> 16 KB per block).
// Not for: cross-attention (encoder-decoder) blocks.
//
//   attnlab::Rng rng(1);
//   attnlab::TransformerBlock block(config, rng);               // config: ModelConfig
//   attnlab::AttentionOptions opt; opt.mask.causal = true;
//   attnlab::TransformerBlockCache cache;
//   attnlab::Tensor3 y = block.forward(x, opt, nullptr, &cache);   // (B, T, C)
//   attnlab::TransformerBlockGrad g(block);
//   attnlab::Tensor3 dx;
//   block.backward(dy, cache, opt, g, dx);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/nn/dropout.hpp"
#include "attnlab/nn/feed_forward.hpp"
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab {

class TransformerBlock;

// What backward needs from the forward pass. With checkpointing only x and dropout_rng are kept.
struct TransformerBlockCache {
    bool checkpointed = false;  // true: the sub-layer caches are empty; backward recomputes them from x
    Tensor3 x;                  // (B, T, C) block input: the recomputation's starting point (checkpointing only)
    bool dropout = false;       // whether the forward applied dropout (it had a generator and p > 0)
    Rng dropout_rng{0};         // generator state before the forward: replays the same masks on recomputation
    LayerNormCache ln1;         // pre: input x; post: x + attn output
    MultiHeadAttentionCache attn;  // q, k, v, weights, concat of the attention layer
    DropoutCache attn_drop;     // mask on the attention output
    LayerNormCache ln2;         // pre: h; post: h + ffn output
    FeedForwardCache ffn;       // fc1 input, pre-activation, activation
    DropoutCache ffn_drop;      // mask on the feed-forward output

    // Buffers reused from step to step so a training loop allocates nothing; not part of what
    // backward needs (cache_bytes leaves them out).
    struct Scratch {
        // (A LayerNorm's output, a sub-layer's input, is written straight into the sub-layer's
        // cache: attn.x, ffn.x.)
        Tensor3 sub;                      // with dropout: a sub-layer's output before its residual add
        Tensor3 tmp, dsub, dh, dr1, dr2;  // backward
    };
    mutable Scratch scratch;

    // Bytes held by the tensors above (what checkpointing saves is the difference).
    std::size_t cache_bytes() const;
};

// Gradients of a block; backward accumulates into them with +=.
struct TransformerBlockGrad {
    LayerNormGrad ln1;
    MultiHeadAttentionGrad attn;
    LayerNormGrad ln2;
    FeedForwardGrad ffn;
    bool attention_only = false;  // the block has no ln2 and ffn: views() leaves them out

    TransformerBlockGrad() = default;
    explicit TransformerBlockGrad(const TransformerBlock& block);  // zeros
    void zero();
    // Same names and order as TransformerBlock::parameters(prefix).
    std::vector<ParameterView> views(const std::string& prefix = "");
};

class TransformerBlock {
public:
    TransformerBlock() = default;
    // Reads d_model, num_heads, num_kv_heads, bias, tie_qk, ff_dim, activation, norm, dropout and
    // gradient_checkpointing from config (validated first); the normaliser comes with each
    // call's AttentionOptions (Trunk sets it from config.normalizer).
    TransformerBlock(const ModelConfig& config, Rng& rng);

    NormPlacement norm() const { return norm_; }
    float dropout() const { return dropout_; }
    bool gradient_checkpointing() const { return checkpointing_; }
    bool attention_only() const { return attention_only_; }
    void set_gradient_checkpointing(bool on) { checkpointing_ = on; }

    // x: (B, T, C) -> (B, T, C). options go to the attention layer (masks, rope, scale), observer
    // sees its stages. cache (optional) is filled for backward. Dropout is applied iff
    // dropout_rng is non-null and p > 0 (training); the generator advances by one draw per element.
    Tensor3 forward(const Tensor3& x, const AttentionOptions& options, StageObserver* observer = nullptr,
                    TransformerBlockCache* cache = nullptr, Rng* dropout_rng = nullptr) const;
    // The same into y (resized; not x). With a cache reused from step to step (and no
    // checkpointing) nothing is allocated.
    void forward(const Tensor3& x, const AttentionOptions& options, StageObserver* observer,
                 TransformerBlockCache* cache, Rng* dropout_rng, Tensor3& y) const;
    // dout: (B, T, C) -> dx: (B, T, C) (overwritten); grads += ... `options` must be the forward's.
    void backward(const Tensor3& dout, const TransformerBlockCache& cache, const AttentionOptions& options,
                  TransformerBlockGrad& grads, Tensor3& dx) const;

    // Generation: x holds the T newest positions; their keys and values are appended to kv and
    // the LayerNorms and feed-forward run on the new rows only (they are position-wise). No
    // dropout. Equal to the causal forward over the whole sequence, restricted to the new rows.
    // x: (B, T, C) -> (B, T, C)
    Tensor3 forward_incremental(const Tensor3& x, KvCache& kv, const AttentionOptions& options,
                                StageObserver* observer = nullptr) const;

    // ln1.*, attn.*, ln2.*, ffn.* after `prefix` (attention_only: ln1.*, attn.*).
    std::vector<ParameterView> parameters(const std::string& prefix = "");

    LayerNorm ln1;
    MultiHeadAttention attn;
    LayerNorm ln2;
    FeedForward ffn;

private:
    // The forward with every sub-layer cache filled, into y. A null cache means a temporary one.
    void forward_full(const Tensor3& x, const AttentionOptions& options, StageObserver* observer,
                      TransformerBlockCache* cache, Rng* dropout_rng, Tensor3& y) const;
    // backward of a block without ln2 and ffn (attention_only).
    void backward_attention_only(const Tensor3& dout, const TransformerBlockCache& cache,
                                 const AttentionOptions& options, TransformerBlockGrad& grads, Tensor3& dx) const;

    NormPlacement norm_ = NormPlacement::pre;
    float dropout_ = 0.0f;
    bool checkpointing_ = false;
    bool attention_only_ = false;  // y = h: ln2 and ffn stay empty
};

}  // namespace attnlab
