// attnlab/model/transformer_block.hpp: one Transformer block (attention + feed-forward, each
// with a residual connection and a LayerNorm), Pre-LN or Post-LN, with optional dropout and
// gradient checkpointing; and an observer that gathers attention diagnostics per block.
//
// What it is for: the repeated unit of EncoderClassifier and DecoderLM (nanoGPT's Block):
//   pre-LN  (GPT-2):        h = x + drop(attn(ln1(x)));   y = h + drop(ffn(ln2(h)))
//   post-LN (Vaswani, BERT): h = ln1(x + drop(attn(x)));  y = ln2(h + drop(ffn(h)))
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
#include <deque>
#include <mutex>
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

// Buffers a model reuses from step to step around its stack of blocks (the embedded input,
// the block outputs and the gradients between blocks), so a training loop allocates nothing.
struct TrunkBuffers {
    Tensor3 x;           // (B, T, C) the first block's input
    Tensor3 stream[2];   // (B, T, C) block outputs, alternating: block l writes stream[l % 2]
                         // (unless the next block takes it into its cache, see blocks_forward)
    Tensor3 normed;      // (B, T, C) the final LayerNorm's output (pre-LN)
    Tensor3 dh, dnorm;   // (B, T, C) gradient of the last block's output, before/after the final LayerNorm
    Tensor3 dstream[2];  // (B, T, C) gradients between blocks, alternating
    Tensor3 dx;          // (B, T, C) gradient of the first block's input
    // The first block's input as tables (MultiHeadAttentionCache::input), when it is
    // token embeddings plus positions and its projections pay to run over the tables.
    TableRows input_tables;
    Tensor2 positions;   // (T, C) the sinusoidal rows the tables add
};

// Gradients of a block; backward accumulates into them with +=.
struct TransformerBlockGrad {
    LayerNormGrad ln1;
    MultiHeadAttentionGrad attn;
    LayerNormGrad ln2;
    FeedForwardGrad ffn;

    TransformerBlockGrad() = default;
    explicit TransformerBlockGrad(const TransformerBlock& block);  // zeros
    void zero();
    // Same names and order as TransformerBlock::parameters(prefix).
    std::vector<ParameterView> views(const std::string& prefix = "");
};

class TransformerBlock {
public:
    TransformerBlock() = default;
    // Reads d_model, num_heads, num_kv_heads, bias, ff_dim, activation, norm, dropout and
    // gradient_checkpointing from config (validated first).
    TransformerBlock(const ModelConfig& config, Rng& rng);

    NormPlacement norm() const { return norm_; }
    float dropout() const { return dropout_; }
    bool gradient_checkpointing() const { return checkpointing_; }
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

    // ln1.*, attn.*, ln2.*, ffn.* after `prefix`.
    std::vector<ParameterView> parameters(const std::string& prefix = "");

    LayerNorm ln1;
    MultiHeadAttention attn;
    LayerNorm ln2;
    FeedForward ffn;

private:
    // The forward with every sub-layer cache filled, into y. A null cache means a temporary one.
    void forward_full(const Tensor3& x, const AttentionOptions& options, StageObserver* observer,
                      TransformerBlockCache* cache, Rng* dropout_rng, Tensor3& y) const;

    NormPlacement norm_ = NormPlacement::pre;
    float dropout_ = 0.0f;
    bool checkpointing_ = false;
};

// Attention diagnostics the trainer reports each step (when asked): the largest |scaled score|
// (the article's fp16 warning sign: scores beyond ~65504 overflow half precision) and the mean
// entropy of the attention rows per head (near 0: each query looks at one key; near log S:
// uniform attention). Attach one per block as its StageObserver; it wants Stage::scaled, masked
// and weights, the (T, S) tiles the SDPA kernel computes anyway.
//
// The entropy needs no logarithm per weight: the weights of a row are softmax(x) of its masked
// scores x, so ln w_j = x_j - lse and -Σ_j w_j ln w_j = lse - Σ_j w_j x_j, with lse = x_k - ln w_k
// for the row's largest weight w_k (one log per row). The masked tile is copied into the
// running thread's slot (reserve_score_slots; one per pool thread, so no worker allocates) to
// have x when the weights arrive; weights seen without their masked tile (no slot, or another
// caller's order) take the direct -Σ w ln w. Measured: the per-weight logarithm took 10-12% of
// a training step with the diagnostics on.
class AttentionStatsRecorder final : public StageObserver {
public:
    explicit AttentionStatsRecorder(std::size_t num_heads = 0);

    bool wants(Stage stage) const override {
        return stage == Stage::scaled || stage == Stage::masked || stage == Stage::weights;
    }
    void on_stage(const StageView& view) override;

    // max |scaled| over every (batch, head, query, key) seen, masked keys included (they are
    // computed before masking); 0 if nothing was recorded.
    float max_abs_score() const;
    // (H) mean over (batch, query rows) of -Σ_j w_j log w_j, in nats; rows with no visible key
    // (all weights 0) are skipped.
    Tensor1 mean_entropy() const;
    // mean_entropy() of one head, without allocating; 0 for a head outside the recorder.
    float mean_entropy(std::size_t head) const;
    void clear();
    // Room for one masked (T, S) tile of tile_floats per default-pool thread (grow-only; not
    // while a forward runs). Without it, or for a larger tile, the entropy takes the direct sum.
    void reserve_score_slots(std::size_t tile_floats);

private:
    struct ScoreSlot {  // the masked tile a thread saw last, and the call it came from
        bool valid = false;
        std::size_t batch = 0;
        std::ptrdiff_t head = -1;
        std::size_t rows = 0, cols = 0;
    };
    std::vector<float> slot_scores_;  // (threads, slot_floats_)
    std::vector<ScoreSlot> slots_;    // (threads)
    std::size_t slot_floats_ = 0;
    mutable std::mutex mutex_;
    float max_abs_ = 0.0f;
    std::vector<double> entropy_sum_;    // (H)
    std::vector<std::size_t> row_count_;  // (H)
};

// One step's diagnostics of a whole model.
struct AttentionStats {
    Tensor1 max_abs_score;  // (L) largest |scaled score| per layer
    Tensor2 entropy;        // (L, H) mean attention entropy per layer and head, nats

    // The largest over all layers.
    float max_abs() const;
};

// A model's per-layer AttentionStatsRecorders, kept from one forward to the next so recording
// the statistics allocates nothing once they exist. Copying a model gives its copy an empty
// collector (the recorders are scratch of one forward, and hold mutexes).
//
//   const std::vector<StageObserver*>& observers = collector.start(layers, heads, t * t);  // one per block
//   ... run the blocks with observers[l] ...
//   collector.finish(stats);
class AttentionStatsCollector {
public:
    AttentionStatsCollector() = default;
    AttentionStatsCollector(const AttentionStatsCollector&) {}
    AttentionStatsCollector& operator=(const AttentionStatsCollector&) { return *this; }

    // Clears the recorders (made on first use, or again if the shape changed), gives them room
    // for (T, S) tiles of tile_floats (AttentionStatsRecorder::reserve_score_slots) and returns
    // one observer per layer, valid until the next start().
    const std::vector<StageObserver*>& start(std::size_t num_layers, std::size_t num_heads, std::size_t tile_floats);
    // The statistics gathered since start(), written into out (its tensors reused when their
    // shapes already fit).
    void finish(AttentionStats& out) const;

private:
    std::deque<AttentionStatsRecorder> recorders_;  // deque: recorders hold a mutex and never move
    std::vector<StageObserver*> observers_;
    std::size_t num_heads_ = 0;
};

}  // namespace attnlab
