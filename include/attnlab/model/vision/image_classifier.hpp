// attnlab/model/image_classifier.hpp: the image models — a ViT and a Swin Transformer that label
// (S, S) grayscale images (ModelConfig::architecture = vit | swin; article §7.1).
//
// What it is for: classifying the `shapes` task's images (train/shapes.hpp) with the same
// Transformer blocks, Trainer, checkpoints and traces as the token models.
//   vit:  pixels (B, S, S) -> patch_emb (P x P patches, [CLS], positions) -> num_layers blocks
//         over all N' patches -> ln_f (pre-LN) -> pool (mean over patches, or the CLS row)
//         -> head -> logits (B, K)
//   swin: pixels -> patch_emb (no CLS) -> stages (ModelConfig::swin_stages()): num_layers
//         SwinBlocks each, a PatchMerging between stages -> ln_f (pre-LN) -> mean -> head
// A SwinBlock is a TransformerBlock run on windows (Liu et al. 2021): the (B, G·G, C) patch map
// is cut into nW = (G/M)² windows of M x M patches, after a cyclic shift by M/2 on odd blocks,
// and the block runs on (B·nW, M², C) — a batch of short sequences on the tiled attention path
// (one key tile per window). Its LayerNorms and feed-forward act per patch, so only attention
// sees the windows. Attention inside a window adds an additive score bias (AttentionMask::
// score_bias, (nW, H, M², M²), batch row b·nW + w using bias[w]): the learned relative position
// bias, table[(dy + M-1)·(2M-1) + (dx + M-1)][h] for the offset (dy, dx) between two patches of
// a window, plus -inf between patches that the shift brought together from opposite edges of
// the map (shifted_window_mask). The backward sums the bias's gradient over images and
// scatters it into the table.
// A PatchMerging concatenates each 2x2 group [x(2i,2j), x(2i+1,2j), x(2i,2j+1), x(2i+1,2j+1)]
// into 4C channels, normalises them (LayerNorm 4C) and projects them to 2C (Linear, no bias).
// Not for: token input (see encoder_classifier.hpp), colour images, dropout on windows.
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
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/parameter.hpp"
#include "attnlab/nn/patch_embedding.hpp"

namespace attnlab {

// The mask of a shifted window layer: (nW, M², M²), 1 where patch i of window w may not see
// patch j. The map is G x G patches rolled by -shift on both axes before the windows are cut;
// along each axis the rolled coordinates [0, G - M), [G - M, G - shift), [G - shift, G) are three
// regions (the last holds patches rolled in from the opposite edge), and two patches of one
// window see each other only if they share their region on both axes. shift = 0: no masking.
Mask3 shifted_window_mask(std::size_t grid, std::size_t window, std::size_t shift);

// The relative position index of an M x M window: (M², M²), entry (i, j) =
// (yi - yj + M - 1)·(2M - 1) + (xi - xj + M - 1), the row of the bias table the pair reads.
Index2 relative_position_index(std::size_t window);

struct SwinBlockGrad;
struct SwinBlockCache;

// One Swin block: a TransformerBlock on (shifted) windows with a relative position bias.
struct SwinBlock {
    TransformerBlock block;  // width C_k, H_k heads
    Tensor2 rel_pos_table;   // ((2M-1)², H_k) learned relative position bias, N(0, 0.02²)
    std::size_t grid = 0, window = 0, shift = 0;  // G, M, shift (0 or M/2)

    SwinBlock() = default;
    SwinBlock(const ModelConfig& stage_config, std::size_t grid, std::size_t window, std::size_t shift, Rng& rng);
    std::size_t windows() const { return (grid / window) * (grid / window); }  // nW
    // (nW, H, M², M²): table gathered by relative_position_index, -inf where the shift mask hides.
    void score_bias(Tensor4& bias) const;
    // The permutation from window order to the map: row r = (b·nW + w)·M² + i of the windowed
    // (B·nW, M², C) tensor holds row map_row[w·M² + i] of each image's (G·G) patch map. (M²·nW = G².)
    std::vector<std::size_t> window_rows() const;

    // x: (B, G·G, C) patch map -> y (B, G·G, C) (resized; not x): the block on the windows of the
    // map rolled by -shift, rolled back. options: the scale (its mask gets the score bias);
    // observer sees the attention stages with batch row b·nW + w. cache (optional) is filled for
    // backward.
    void forward(const Tensor3& x, const AttentionOptions& options, StageObserver* observer, SwinBlockCache* cache,
                 Tensor3& y) const;
    // dy: (B, G·G, C) -> dx (B, G·G, C) (resized, overwritten; not dy); grads += ..., the bias
    // table's gradient the sum over windows and images of the score bias's. options as in forward.
    void backward(const Tensor3& dy, SwinBlockCache& cache, const AttentionOptions& options, SwinBlockGrad& grads,
                  Tensor3& dx) const;
};

struct SwinBlockGrad {
    TransformerBlockGrad block;
    Tensor2 rel_pos_table;  // ((2M-1)², H)
};

// Per block: what backward needs, and buffers.
struct SwinBlockCache {
    Tensor3 windows;             // (B·nW, M², C) the block's input, windowed
    Tensor3 out;                 // (B·nW, M², C) its output
    Tensor4 bias;                // (nW, H, M², M²) the score bias the forward used
    Tensor4 dbias;               // (nW, H, M², M²) its gradient (backward)
    TransformerBlockCache block;
    Tensor3 dwindows, dx;        // backward buffers
};

struct PatchMerging {
    LayerNorm norm;    // (4C)
    Linear reduction;  // (2C, 4C), no bias
};
struct PatchMergingGrad {
    LayerNormGrad norm;
    LinearGrad reduction;
};
struct PatchMergingCache {
    LayerNormCache norm;
    Tensor3 gathered, normed;  // (B, G²/4, 4C)
    Tensor3 dnormed, dgathered;
};

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
