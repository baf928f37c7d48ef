// attnlab/model/token/trunk.hpp: the body both models share — token embedding, CLS vector, positions,
// the stack of Transformer blocks and the final LayerNorm — with its cache, gradients and buffers.
//
// What it is for: EncoderClassifier and DecoderLM each contain one Trunk and add only their head
// (pooling and a classifier; an LM head, tied or not), as nanoGPT's GPT holds `transformer`:
//   tokens (B, T) -> tok_emb -> [cls_token in front: T' = T + 1] -> + positional (sinusoidal,
//   learned; rope acts inside attention) -> N blocks (masks: key padding (B, T'), causal)
//   -> ln_f (pre-LN only) -> h (B, T', C)
// The CLS vector is an input row like a token's (BERT's [CLS] is one), so it lives here; only an
// encoder with CLS pooling has one. Parameter names and order (PyTorch state_dict style):
//   tok_emb.weight (V, C), [pos_emb.weight (max_len, C)], [cls_token (C)],
//   blocks.<i>.{ln1, attn.{q,k,v,out}_proj, ln2, ffn.{fc1,fc2}}.{weight,bias}, [ln_f.{weight,bias}]
// Not for: use without a head (the models validate their inputs and own the training mode).
//
//   attnlab::Trunk trunk(config, rng);
//   attnlab::TrunkCache cache;
//   const attnlab::Tensor3& h = trunk.forward(tokens, {}, /*causal=*/true, {}, cache, /*training=*/true, &rng);
//   ... the head's backward writes dh (B, T', C) ...
//   attnlab::TrunkGrad grads(trunk);
//   trunk.backward(dh, cache, grads);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/transformer_block.hpp"
#include "attnlab/nn/embedding.hpp"
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/parameter.hpp"
#include "attnlab/posenc/learned.hpp"

namespace attnlab {

class Trunk;

// ModelConfig's attention fields (rope, scale, variant, normalizer, window, precision, block
// layout) written into `options`, its mask tensors (and their buffers) left alone: the one place
// where the config's attention switches become AttentionOptions, for every model with blocks.
void set_attention_switches(const ModelConfig& config, AttentionOptions& options);

// What backward needs from the last training forward, and the buffers a forward reuses from step
// to step (a training loop allocates nothing).
struct TrunkCache {
    Index2 tokens;             // (B, T) the embedding backward scatters into these rows (the input
                               // tables point into this copy)
    std::size_t positions = 0; // T' (T + 1 with a CLS vector)
    AttentionOptions options;  // key padding (B, T'), causal, rope, scale: every block's backward needs them
    std::vector<TransformerBlockCache> blocks;
    LayerNormCache ln_f;       // pre-LN only

    // Buffers, not needed by backward.
    Tensor3 embedded;    // (B, T, C) token rows before the CLS vector is put in front
    Tensor3 x;           // (B, T', C) the first block's input
    Tensor3 stream[2];   // (B, T', C) block outputs, alternating: block l writes stream[l % 2] unless
                         // the next block keeps its input in its cache (Trunk::forward)
    Tensor3 normed;      // (B, T', C) ln_f's output (pre-LN)
    Tensor3 out;         // (B, T', C) an inference forward's output (post-LN)
    Tensor3 dh;          // (B, T', C) gradient of the output, written by the head
    Tensor3 dnorm;       // (B, T', C) gradient of the last block's output (pre-LN)
    Tensor3 dstream[2];  // (B, T', C) gradients between blocks, alternating
    Tensor3 dx;          // (B, T', C) gradient of the first block's input
    Tensor3 dtokens;     // (B, T, C) gradient of the token rows (CLS)
    // The first block's input as tables (MultiHeadAttentionCache::input), when it is token
    // embeddings plus positions and its projections pay to run over the tables.
    TableRows input_tables;
    Tensor2 position_rows;  // (T, C) the sinusoidal rows the tables add
};

// Gradients of every trunk parameter, same shapes; backward accumulates into them with +=.
struct TrunkGrad {
    EmbeddingGrad tok_emb;  // with a tied LM head also the head's gradient
    Tensor2 pos_emb;        // (max_len, C) learned positions only, else empty
    Tensor1 cls_token;      // (C) CLS vector only, else empty
    std::vector<TransformerBlockGrad> blocks;
    LayerNormGrad ln_f;     // pre-LN only

    TrunkGrad() = default;
    explicit TrunkGrad(const Trunk& trunk);  // zeros
    void zero();
    void add(const TrunkGrad& other);  // += other, tensor by tensor (same shapes)
    // Views named and ordered as Trunk::parameters, appended to out.
    void views(std::vector<ParameterView>& out);
};

// Sees, and may rewrite, the residual stream of an inference forward: the interpretability
// tools' hook (interp/: the logit lens, residual patching). Called on the calling thread.
class ResidualHook {
public:
    virtual ~ResidualHook() = default;
    // x (B, T', C): the input of block `layer` (0..L-1, after the positions are added), or with
    // layer = L the last block's output (before ln_f).
    virtual void on_residual(std::size_t layer, Tensor3& x) = 0;
};

class Trunk {
public:
    Trunk() = default;
    // Validates config and draws tok_emb, pos_emb (learned positions), cls_token (an encoder with
    // CLS pooling) and the blocks from rng, in that order.
    Trunk(const ModelConfig& config, Rng& rng);

    const ModelConfig& config() const { return config_; }
    void set_gradient_checkpointing(bool on);
    // T' for T tokens: T + 1 with a CLS vector.
    std::size_t positions(std::size_t t) const { return t + (cls_token.size() > 0 ? 1 : 0); }
    // The attention settings of the config (rope, scale, variant, normalizer, window), no masks.
    AttentionOptions attention_options() const;
    // The same settings written into `options`, leaving its mask tensors (and their buffers) alone:
    // the one place where ModelConfig's attention fields become AttentionOptions.
    void set_attention_switches(AttentionOptions& options) const;

    // ShapeError for empty tokens (B, T) or a padding mask (B, T) of another shape; ValueError
    // naming a row that is all padding, or T' beyond a learned position table. Messages start
    // with `where`.
    void check_input(const Index2& tokens, const Mask2& padding, const char* where) const;
    // tokens (B, T) -> h (B, T', C), as at the top of this header; padding (B, T) 1 = padding,
    // or empty; observers: one per block (entries may be null) or empty. Training fills cache
    // for backward, and applies dropout when dropout_rng is non-null; inference uses cache only
    // for its buffers. The result lives in cache until its next forward. Ids are checked by the
    // embedding; the rest by check_input. An inference forward shows its residual stream to
    // `residuals` when given (ConfigError with training: a rewritten forward is not differentiated).
    const Tensor3& forward(const Index2& tokens, const Mask2& padding, bool causal,
                           const std::vector<StageObserver*>& observers, TrunkCache& cache, bool training,
                           Rng* dropout_rng = nullptr, ResidualHook* residuals = nullptr) const;
    // The output of the last training forward that filled cache: h (B, T', C).
    const Tensor3& output(const TrunkCache& cache) const;
    // Backward of the training forward that filled cache: cache.dh (B, T', C), the gradient of
    // its output, -> grads (+=).
    void backward(TrunkCache& cache, TrunkGrad& grads) const;

    // Generation: tokens (1, T_new) at positions offset .. offset + T_new - 1 -> h (1, T_new, C),
    // appending their keys and values to kv (one per block; causality comes from the cache).
    Tensor3 forward_incremental(const Index2& tokens, std::size_t offset, std::vector<KvCache>& kv) const;
    // Attention weights of batch row `batch` in every block of an inference forward:
    // tokens (B, T) -> (L, H, T', T'). ValueError (starting with where) for batch >= B, then the
    // input checked as check_input(tokens, padding, forward_where) does.
    Tensor4 attention_maps(const Index2& tokens, const Mask2& padding, bool causal, std::size_t batch,
                           const char* where, const char* forward_where) const;

    // When on, the models' forwards record attention_stats() (max |score|, entropy per head).
    void set_record_attention_stats(bool on) { record_stats_ = on; }
    bool recording_attention_stats() const { return record_stats_; }
    const AttentionStats& attention_stats() const { return stats_; }
    // One statistics observer per block for forwards over T' positions when recording, else none
    // (the recorders take stages from any thread, so a split step's slices add up); then
    // finish_attention_stats() writes attention_stats().
    const std::vector<StageObserver*>& start_attention_stats(std::size_t positions);
    void finish_attention_stats();

    // Views in the order at the top of this header, appended to out.
    void parameters(std::vector<ParameterView>& out);

    Embedding tok_emb;
    LearnedPositionalEmbedding pos_emb;  // table empty unless positional is learned
    Tensor1 cls_token;                   // (C) empty unless an encoder pools at a CLS vector
    std::vector<TransformerBlock> blocks;
    LayerNorm ln_f;  // empty for post-LN

private:
    // x (B, T', C) through the blocks into the caches (see trunk.cpp); returns the last output.
    const Tensor3& blocks_forward(const Tensor3& x, const std::vector<StageObserver*>& observers, TrunkCache& cache,
                                  Rng* dropout_rng) const;
    // dout (B, T', C) of the last block -> cache.dx (B, T', C) of the first block's input.
    void blocks_backward(const Tensor3& dout, TrunkCache& cache, std::vector<TransformerBlockGrad>& grads) const;

    ModelConfig config_;
    bool record_stats_ = false;
    AttentionStats stats_;
    AttentionStatsCollector stats_collector_;
};

}  // namespace attnlab
