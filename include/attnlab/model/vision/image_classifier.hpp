// attnlab/model/vision/image_classifier.hpp: the image models — a ViT and a Swin Transformer that label
// (S, S) grayscale images (ModelConfig::architecture = vit | swin; article §7.1).
//
// What it is for: classifying the `shapes` task's images (train/shapes.hpp) with the same
// Transformer blocks, Trainer, checkpoints and traces as the token models.
//   vit:  pixels (B, S, S) -> patch_emb (P x P patches, [CLS], positions) -> num_layers blocks
//         over all N' patches -> ln_f (pre-LN) -> pool (mean over patches, or the CLS row)
//         -> head -> logits (B, K)
//   swin: pixels -> patch_emb (no CLS) -> stages (ModelConfig::swin_stages()): num_layers
//         SwinBlocks each, a PatchMerging between stages -> ln_f (pre-LN) -> mean -> head
// A SwinBlock (a TransformerBlock on shifted windows) and a PatchMerging are in swin_block.hpp.
// Not for: token input (see model/token/encoder_classifier.hpp), colour images, dropout on windows.
//
// Parameter names (PyTorch state_dict style, in this order; [..] only when configured):
//   vit:  patch_emb.{proj.weight, proj.bias, [pos_emb.weight], [cls_token]},
//         blocks.<i>.{ln1, attn.{q,k,v,out}_proj, ln2, ffn.{fc1,fc2}}.*, [ln_f.*], head.weight, [head.bias]
//   swin: patch_emb.*, stages.<k>.blocks.<i>.{the block's names, rel_pos_table ((2M-1)², H)},
//         stages.<k>.merge.{norm.weight, norm.bias, reduction.weight} (all but the last stage),
//         [ln_f.*], head.*
//
//   attnlab::ModelConfig config; config.kind = attnlab::ModelKind::encoder;
//   config.architecture = attnlab::Architecture::swin; config.image_size = 16; config.patch_size = 2;
//   config.num_classes = 6;
//   attnlab::Rng rng(1);
//   attnlab::ImageClassifier model(config, rng);
//   model.zero_grad();
//   attnlab::CrossEntropyResult r = model.loss_and_backward(pixels, labels);   // (B, S, S), (B)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/attention/stage.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/transformer_block.hpp"
#include "attnlab/model/vision/swin_block.hpp"
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/parameter.hpp"
#include "attnlab/nn/patch_embedding.hpp"

namespace attnlab {

struct SwinStageLayers {
    std::vector<SwinBlock> blocks;
    bool merges = false;  // false for the last stage
    PatchMerging merge;   // when merges: (G, G, C) -> (G/2, G/2, 2C)
};

// Gradients of every parameter, same shapes; backward accumulates into them with +=.
struct ImageClassifierGrad {
    PatchEmbeddingGrad patch_emb;
    std::vector<TransformerBlockGrad> blocks;  // vit
    struct Stage {
        std::vector<SwinBlockGrad> blocks;
        PatchMergingGrad merge;
    };
    std::vector<Stage> stages;  // swin
    LayerNormGrad ln_f;
    LinearGrad head;
};

// What backward needs from the last training forward, and the buffers a forward reuses.
struct ImageClassifierCache {
    bool valid = false;                        // set by a training-mode forward
    PatchEmbeddingCache patch_emb;
    Tensor3 embedded;                          // (B, N', C) the first block's input
    std::vector<TransformerBlockCache> blocks; // vit
    std::vector<Tensor3> stream;               // vit: (B, N', C) each block's output
    struct Stage {
        std::vector<SwinBlockCache> blocks;
        std::vector<Tensor3> maps;             // (B, G·G, C_k) each block's output (the next one's input)
        PatchMergingCache merge;
        Tensor3 merged;                        // (B, G²/4, 2C_k) the next stage's input
    };
    std::vector<Stage> stages;                 // swin
    LayerNormCache ln_f;
    Tensor3 normed;                            // (B, N', C_last) after ln_f (pre-LN), else a copy of the last output
    Tensor2 pooled;                            // (B, C_last) the head's input
    Tensor2 logits, dlogits, dpooled;          // (B, K), (B, K), (B, C_last)
    CrossEntropyCache ce;
    Tensor3 dh, dtmp;                          // backward buffers
};

class ImageClassifier {
public:
    // Validates config (kind encoder, architecture vit or swin) and initialises the parameters
    // from rng: the patch embedding, the blocks (and their bias tables), merges, ln_f, head.
    ImageClassifier(const ModelConfig& config, Rng& rng);

    const ModelConfig& config() const { return config_; }
    void train(bool on = true) { training_ = on; }
    void eval() { training_ = false; }
    bool training() const { return training_; }

    // pixels: (B, S, S) -> logits (B, K); a training-mode forward keeps what backward needs.
    // ShapeError naming the shapes for another image size; ValueError for a non-finite pixel.
    Tensor2 forward(const Tensor3& pixels);
    // An evaluation forward that leaves the model untouched -> logits (B, K).
    Tensor2 logits(const Tensor3& pixels) const;
    // Backward of the last training-mode forward: dlogits (B, K); gradients accumulate (+=).
    void backward(const Tensor2& dlogits);
    // forward + cross-entropy against labels (B) + backward of the mean loss.
    CrossEntropyResult loss_and_backward(const Tensor3& pixels, const Index1& labels);

    // The attention blocks in order (vit: num_layers; swin: num_layers per stage).
    std::size_t num_attention_layers() const;
    // Every stage of attention block `layer` in an evaluation forward of pixels (B, S, S), keyed
    // by batch row: the image b for a ViT, the window b·nW + w of image b for Swin (windows
    // row-major over the shifted map). ConfigError naming the layer and the count when out of range.
    std::unique_ptr<TraceRecorder> trace_layer(const Tensor3& pixels, std::size_t layer) const;
    // Attention weights of block `layer` for image `batch`: (nW, H, M², M²) (a ViT: nW = 1, M² = N').
    Tensor4 attention_maps(const Tensor3& pixels, std::size_t layer, std::size_t batch = 0) const;
    // Windows per side of block `layer`'s map (1 for a ViT) and patches per window side (G for a ViT).
    std::size_t windows_per_side(std::size_t layer) const;

    // When on, forward and loss_and_backward record attention_stats(): per attention block (the
    // order of num_attention_layers()) the largest |scaled score| and the mean entropy per head.
    // A ViT's rows are the N' query patches of every image; a Swin block's windows are batch rows
    // of its attention, so its maximum is over every window of every image and its entropy the mean
    // over every (image, window, query patch) row (rows a shift mask empties of keys are skipped,
    // as in AttentionStatsRecorder). The entropy tensor is (L, H_max), H_max the heads of the widest
    // stage (Swin doubles them per stage); a block with fewer heads leaves its other columns 0.
    void set_record_attention_stats(bool on) { record_stats_ = on; }
    // Multiplies the loss gradient by `scale` (the Trainer's loss scaling; the Trainer divides the
    // parameter gradients by it again).
    void set_loss_scale(float scale) { loss_scale_ = scale; }
    const AttentionStats& attention_stats() const { return stats_; }

    std::vector<ParameterView> parameters();
    std::vector<ParameterView> gradients();
    void zero_grad();

    PatchEmbedding patch_emb;
    std::vector<TransformerBlock> blocks;  // vit
    std::vector<SwinStageLayers> stages;   // swin
    LayerNorm ln_f;                        // pre-LN only
    Linear head;                           // (K, C_last)

private:
    // The forward into cache (training keeps what backward needs); observer sees attention block
    // `observed_layer`'s stages. logits: (B, K), resized.
    // stats: one observer per attention block (entries may be null) or empty.
    void run(const Tensor3& pixels, ImageClassifierCache& cache, bool training, StageObserver* observer,
             std::size_t observed_layer, Tensor2& logits, const std::vector<StageObserver*>& stats = {}) const;
    // The statistics observers of a forward when recording, else none (finish with finish_stats()).
    const std::vector<StageObserver*>& start_stats();
    void finish_stats();
    void check_pixels(const Tensor3& pixels, const char* where) const;
    const SwinBlock& swin_block(std::size_t layer) const;

    ModelConfig config_;
    ImageClassifierCache cache_;
    ImageClassifierGrad grads_;
    bool record_stats_ = false;
    AttentionStats stats_;
    AttentionStatsCollector stats_collector_;
    bool training_ = true;
    float loss_scale_ = 1.0f;  // set_loss_scale
};

}  // namespace attnlab
