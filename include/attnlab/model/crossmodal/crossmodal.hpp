// attnlab/model/crossmodal/crossmodal.hpp: the cross-modal model — a text encoder and an image encoder
// joined by cross-attention from the words to the patches, with a match/no-match head
// (ModelConfig::architecture = crossmodal; article §7.3).
//
// What it is for: deciding whether a caption describes an image (train/caption_match.hpp), and
// showing which patches each word looks at. The flow (E = ModelConfig::common_width()):
//   tokens (B, T) -> text encoder (a Trunk: tok_emb, positions, num_layers blocks, ln_f)
//                 -> text_h (B, T, C) -> text_proj -> tq (B, T, E)
//   pixels (B, S, S) -> image encoder (patch_emb with learned positions, num_layers ViT blocks,
//                 ln_f) -> image_h (B, N, C) -> image_proj -> im (B, N, E)
//   cross block (pre-LN): h = tq + attn(ln1(tq), memory = im)     queries: words, keys/values: patches
//                         out = h + ffn(ln2(h))                     (B, T, E)
//   pooled = mean of out over the non-padding words (B, E) -> head -> logits (B, K), K = 2
// Both encoders have the config's width C, heads H, feed-forward F and depth; the cross block has
// width E, H heads and feed-forward F. The loss is the head's cross-entropy (loss = match) or that
// plus the CLIP-style symmetric InfoNCE (nn/contrastive_loss.hpp, temperature clip_temperature)
// over the matched pairs of the batch (label 1): text embedding the mean of tq over its words,
// image embedding the mean of im over the patches, both before the cross block, as CLIP embeds
// each modality on its own (loss = clip).
// The attention layers in order (num_attention_layers(), the rows of attention_stats()): the text
// blocks, the image blocks, then the cross-attention.
// Not for: generation (no decoder), dropout, CLS pooling, the Swin image encoder.
//
// Parameter names (PyTorch state_dict style, in this order; [..] only when configured):
//   text.{tok_emb.weight, [pos_emb.weight], blocks.<i>.*, [ln_f.*]},
//   image.{patch_emb.{proj.weight, proj.bias, pos_emb.weight}, blocks.<i>.*, [ln_f.*]},
//   text_proj.{weight, [bias]}, image_proj.{weight, [bias]},
//   cross.{ln1.*, attn.{q,k,v,out}_proj.*, ln2.*, ffn.{fc1,fc2}.*}, head.{weight, [bias]}
//
//   attnlab::ModelConfig config; config.kind = attnlab::ModelKind::encoder;
//   config.architecture = attnlab::Architecture::crossmodal; config.vocab_size = 12;
//   config.num_classes = 2; config.image_size = 16; config.patch_size = 4;
//   attnlab::Rng rng(1);
//   attnlab::CrossModalModel model(config, rng);
//   attnlab::CrossEntropyResult r = model.loss_and_backward(tokens, {}, pixels, labels);  // (B, T), (B, S, S), (B)
//   attnlab::Tensor3 maps = model.cross_attention_maps(tokens, pixels, /*batch=*/0);    // (H, T, N)
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/transformer_block.hpp"
#include "attnlab/model/token/trunk.hpp"
#include "attnlab/nn/contrastive_loss.hpp"
#include "attnlab/nn/feed_forward.hpp"
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/parameter.hpp"
#include "attnlab/nn/patch_embedding.hpp"

namespace attnlab {

class CrossModalModel;

// Gradients of every parameter, same shapes; backward accumulates into them with +=.
struct CrossModalGrad {
    TrunkGrad text;
    PatchEmbeddingGrad patch_emb;
    std::vector<TransformerBlockGrad> image_blocks;
    LayerNormGrad image_ln_f;
    LinearGrad text_proj, image_proj;
    LayerNormGrad cross_ln1;
    MultiHeadAttentionGrad cross_attn;
    LayerNormGrad cross_ln2;
    FeedForwardGrad cross_ffn;
    LinearGrad head;

    CrossModalGrad() = default;
    explicit CrossModalGrad(const CrossModalModel& model);  // zeros
    void zero();
    // Named and ordered as CrossModalModel::parameters().
    std::vector<ParameterView> views();
};

// What backward needs from the last training forward, and the buffers a forward reuses.
struct CrossModalCache {
    bool valid = false;                           // set by a training-mode forward
    TrunkCache text;                              // the text encoder; its dh is written by backward
    PatchEmbeddingCache patch_emb;
    Tensor3 embedded;                             // (B, N, C) the first image block's input
    std::vector<TransformerBlockCache> image_blocks;
    std::vector<Tensor3> image_stream;            // (B, N, C) each image block's output
    LayerNormCache image_ln_f;                    // pre-LN only
    Tensor3 image_h;                              // (B, N, C) the image encoder's output: dW_image_proj
    Tensor3 text_h;                               // (B, T, C) the text encoder's output: dW_text_proj
    Tensor3 tq;                                   // (B, T, E) projected words: the cross block's input
    Tensor3 im;                                   // (B, N, E) projected patches: the cross-attention's memory
    LayerNormCache ln1;
    Tensor3 q_in;                                 // (B, T, E) ln1(tq)
    MultiHeadAttentionCache attn;
    Tensor3 h;                                    // (B, T, E) tq + attn
    LayerNormCache ln2;
    Tensor3 f_in;                                 // (B, T, E) ln2(h)
    FeedForwardCache ffn;
    Tensor3 out;                                  // (B, T, E) the cross block's output
    std::vector<float> pool_weight;               // (B) 1 / the words counted in each row's mean
    Tensor2 pooled, logits, dlogits;              // (B, E), (B, K), (B, K)
    CrossEntropyCache ce;
    // loss = clip: the matched rows, their pooled embeddings (M, E) and the loss's cache.
    std::vector<std::size_t> matched;
    Tensor2 text_pooled, image_pooled;
    ContrastiveCache clip;
    // Backward buffers.
    Tensor2 dpooled, dtext_pooled, dimage_pooled;
    Tensor3 dout, dtmp, dh, dq_in, dtq, dim, dimage_h, da, db;
};

class CrossModalModel {
public:
    // Validates config (kind encoder, architecture crossmodal) and draws the parameters from rng in
    // the order of the names above.
    CrossModalModel(const ModelConfig& config, Rng& rng);

    const ModelConfig& config() const { return config_; }
    void train(bool on = true) { training_ = on; }
    void eval() { training_ = false; }
    bool training() const { return training_; }

    // tokens (B, T), padding (B, T) or empty, pixels (B, S, S) -> logits (B, K); a training-mode
    // forward keeps what backward needs. ShapeError naming the shapes (the batch sizes must agree),
    // ValueError for a bad id or a non-finite pixel.
    Tensor2 forward(const Index2& tokens, const Mask2& padding, const Tensor3& pixels);
    // An evaluation forward that leaves the model untouched -> logits (B, K).
    Tensor2 logits(const Index2& tokens, const Mask2& padding, const Tensor3& pixels) const;
    // The loss of the config (match, or match + clip) of an evaluation forward, no gradients:
    // loss, count and correct as loss_and_backward reports them.
    CrossEntropyResult evaluate(const Index2& tokens, const Mask2& padding, const Tensor3& pixels,
                                const Index1& labels) const;
    // forward + the loss + backward; gradients accumulate (+=). loss is the total (with clip, the
    // cross-entropy plus the InfoNCE); count and correct are the match head's.
    CrossEntropyResult loss_and_backward(const Index2& tokens, const Mask2& padding, const Tensor3& pixels,
                                         const Index1& labels);

    // The attention layers: num_layers text blocks, num_layers image blocks, the cross-attention.
    std::size_t num_attention_layers() const { return 2 * config_.num_layers + 1; }
    std::size_t cross_attention_layer() const { return 2 * config_.num_layers; }
    // Every stage of attention layer `layer` in an evaluation forward (the order above; the
    // cross-attention's q comes from the words, k and v from the patches). ConfigError naming the
    // layer and the count when out of range.
    std::unique_ptr<TraceRecorder> trace_layer(const Index2& tokens, const Mask2& padding, const Tensor3& pixels,
                                               std::size_t layer) const;
    // The cross-attention weights of pair `batch`: (H, T, N), row t the distribution of word t over
    // the N patches (row-major over the patch grid). ValueError for batch >= B.
    Tensor3 cross_attention_maps(const Index2& tokens, const Mask2& padding, const Tensor3& pixels,
                                 std::size_t batch = 0) const;

    // When on, the forwards record attention_stats(): per attention layer (the order above) the
    // largest |scaled score| and the mean entropy per head.
    void set_record_attention_stats(bool on) { record_stats_ = on; }
    const AttentionStats& attention_stats() const { return stats_; }
    void set_loss_scale(float scale) { loss_scale_ = scale; }

    std::vector<ParameterView> parameters();
    std::vector<ParameterView> gradients() { return grads_.views(); }
    void zero_grad() { grads_.zero(); }

    Trunk text;
    PatchEmbedding patch_emb;
    std::vector<TransformerBlock> image_blocks;
    LayerNorm image_ln_f;  // pre-LN only
    Linear text_proj;      // (E, C)
    Linear image_proj;     // (E, C)
    LayerNorm cross_ln1;   // (E)
    MultiHeadAttention cross_attn;  // width E, memory width E
    LayerNorm cross_ln2;   // (E)
    FeedForward cross_ffn; // E -> F -> E
    Linear head;           // (K, E)

private:
    void check_input(const Index2& tokens, const Mask2& padding, const Tensor3& pixels, const char* where) const;
    // The forward into cache (training keeps what backward needs); observers: one per attention
    // layer (entries may be null) or empty. logits: (B, K), resized.
    void run(const Index2& tokens, const Mask2& padding, const Tensor3& pixels, CrossModalCache& cache, bool training,
             const std::vector<StageObserver*>& observers, Tensor2& logits) const;
    // The loss of cache's logits against labels (and with clip the InfoNCE of its matched rows).
    CrossEntropyResult loss(CrossModalCache& cache, const Index1& labels) const;
    // Backward of the loss() of the training forward in cache_, scaled by loss_scale_.
    void backward(CrossModalCache& cache);
    const std::vector<StageObserver*>& start_stats(std::size_t t, std::size_t n);

    ModelConfig config_;
    CrossModalCache cache_;
    CrossModalGrad grads_;
    bool training_ = true;
    bool record_stats_ = false;
    float loss_scale_ = 1.0f;
    AttentionStats stats_;
    AttentionStatsCollector stats_collector_;
};

}  // namespace attnlab
