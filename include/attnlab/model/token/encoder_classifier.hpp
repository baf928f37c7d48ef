// attnlab/model/token/encoder_classifier.hpp: a tiny Transformer encoder that labels whole sequences.
//
// What it is for: sequence classification with variable-length batches (balanced brackets, ...):
//   tokens (B, T) -> tok_emb -> [prepend cls_token] -> + positional -> N blocks (key padding
//   mask) -> ln_f (pre-LN only) -> pool -> head -> logits (B, K)
// Pooling is the mean over non-padding positions, or the output at a learned CLS vector
// prepended at position 0 (BERT). With CLS the model sees T' = T + 1 positions (the learned
// position table must hold them). Padded positions are computed like the others but no query
// attends to them, and mean pooling ignores them, so they never influence the logits.
// Not for: per-token outputs or causal masks (see decoder_lm.hpp).
//
// Everything up to ln_f is the shared Trunk (trunk.hpp, which holds the CLS vector too); this
// class adds the pooling and the classification head.
// Parameter names (PyTorch state_dict style, in this order; [..] only when configured):
//   the trunk's (tok_emb.weight, [pos_emb.weight], [cls_token], blocks.<i>.*, [ln_f.*]),
//   head.weight (K, C), [head.bias (K)]
//
//   attnlab::ModelConfig config; config.kind = attnlab::ModelKind::encoder;
//   config.vocab_size = 5; config.num_classes = 2;
//   attnlab::Rng rng(1);
//   attnlab::EncoderClassifier model(config, rng);
//   model.zero_grad();
//   attnlab::CrossEntropyResult r = model.loss_and_backward(tokens, padding, labels);  // grads in model.gradients()
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/attention/stage.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/token/split_step.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/model/token/trunk.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab {

class EncoderClassifier;

// Gradients of every parameter, same shapes; backward accumulates into them with +=.
struct EncoderClassifierGrad {
    TrunkGrad trunk;
    LinearGrad head;

    EncoderClassifierGrad() = default;
    explicit EncoderClassifierGrad(const EncoderClassifier& model);  // zeros
    void zero();
    void add(const EncoderClassifierGrad& other);  // += other, tensor by tensor (same shapes)
};

// What backward needs from the last training forward, and the head's buffers.
struct EncoderClassifierCache {
    bool valid = false;              // set by a training-mode forward; backward refuses to run without one
    TrunkCache trunk;                // tokens, key padding mask (B, T'), the blocks' caches and buffers
    std::vector<float> pool_weight;  // (B) 1 / (number of non-padding positions): mean pooling's factor
    Tensor2 pooled;                  // (B, C) head input: dW_head = dlogitsᵀ·pooled

    // Buffers reused from step to step (a training loop allocates nothing), not needed by backward.
    Tensor2 logits;            // (B, K) loss_and_backward's logits
    CrossEntropyCache ce;      // and its loss cache
    Tensor2 dlogits, dpooled;  // (B, K), (B, C)
};

// One slice of a split training step (loss_and_backward; model/token/split_step.hpp).
struct EncoderClassifierSlice {
    Index2 tokens;   // (b, T) consecutive sequences of the batch
    Mask2 padding;   // (b, T) their padding rows, or empty
    Index1 labels;   // (b)
    Rng dropout{0};  // this slice's dropout generator, drawn from the model's each step
    CrossEntropyResult result;
};
using EncoderClassifierSplit = SplitStep<EncoderClassifierSlice, EncoderClassifierCache, EncoderClassifierGrad>;

class EncoderClassifier {
public:
    // Validates config (kind must be encoder) and initialises the parameters from rng.
    EncoderClassifier(const ModelConfig& config, Rng& rng);

    const ModelConfig& config() const { return trunk.config(); }

    // Training mode (the default, as in PyTorch) applies dropout and records the cache backward
    // needs; evaluation mode does neither.
    void train(bool on = true) { training_ = on; }
    void eval() { training_ = false; }
    bool training() const { return training_; }
    // Restarts the dropout generator (it is seeded from the construction rng otherwise).
    void seed_dropout(std::uint64_t seed) { dropout_rng_ = Rng(seed); }
    void set_gradient_checkpointing(bool on);

    // tokens: (B, T) ids in [0, V); padding: (B, T) 1 = padding, or empty -> logits (B, K).
    // Throws ValueError for an out-of-range id or a row that is all padding, ShapeError for a
    // padding mask of another shape, ValueError if T' exceeds a learned table.
    Tensor2 forward(const Index2& tokens, const Mask2& padding = {});
    // Backward of the last training-mode forward: dlogits (B, K); gradients accumulate (+=).
    // Throws ValueError if there was no training-mode forward.
    void backward(const Tensor2& dlogits);
    // forward + cross-entropy against labels (B) (-1 = ignored) + backward of the mean loss.
    // A large batch runs as micro-batches of whole sequences, in parallel on the pool's threads
    // (src/model/token/micro_batches.hpp: why and how many); the gradients equal the whole batch's up to
    // rounding (tests/model/token/test_encoder_classifier.cpp). After a split step backward() has no
    // forward to differentiate.
    CrossEntropyResult loss_and_backward(const Index2& tokens, const Mask2& padding, const Index1& labels);

    // Evaluation forward (no dropout, no cache) reporting every block's stages to
    // observers[l] (one per block; entries may be null). -> logits (B, K)
    Tensor2 forward_observed(const Index2& tokens, const Mask2& padding,
                             const std::vector<StageObserver*>& observers) const;
    // Attention weights of batch row `batch` in every block: (L, H, T', T').
    Tensor4 attention_maps(const Index2& tokens, const Mask2& padding = {}, std::size_t batch = 0) const;

    // When on, every forward also records attention_stats() (max |score|, entropy per head).
    void set_record_attention_stats(bool on) { trunk.set_record_attention_stats(on); }
    // The loss's gradient is multiplied by this before backward (the Trainer's loss scaling: it
    // lifts small gradients above the emulated format's underflow; the Trainer divides it out).
    void set_loss_scale(float scale) { loss_scale_ = scale; }
    // Diagnostics of the last forward that recorded them: (L) and (L, H).
    const AttentionStats& attention_stats() const { return trunk.attention_stats(); }

    // Views in the order listed at the top of this header; gradients() has the same names,
    // shapes and order.
    std::vector<ParameterView> parameters();
    std::vector<ParameterView> gradients();
    void zero_grad();
    EncoderClassifierGrad& grads() { return grads_; }

    Trunk trunk;  // embeddings, CLS vector, positions, blocks, ln_f
    Linear head;  // (K, C)

private:
    float loss_scale_ = 1.0f;  // set_loss_scale
    // The shared forward: training fills cache, inference uses it for buffers only; observers
    // may be empty. logits: (B, K), resized.
    void run(const Index2& tokens, const Mask2& padding, const std::vector<StageObserver*>& observers,
             EncoderClassifierCache& cache, bool training, Rng* dropout_rng, Tensor2& logits) const;
    // forward() into logits (the cache's own buffer in loss_and_backward).
    void forward_to(const Index2& tokens, const Mask2& padding, Tensor2& logits);
    // backward() of the forward that filled cache, into grads. dlogits: (B, K)
    void backward_from(EncoderClassifierCache& cache, const Tensor2& dlogits, EncoderClassifierGrad& grads) const;
    // loss_and_backward as `count` slices on `lanes` lanes (count a multiple of lanes).
    CrossEntropyResult loss_and_backward_split(const Index2& tokens, const Mask2& padding, const Index1& labels,
                                               std::size_t count, std::size_t lanes);

    EncoderClassifierGrad grads_;
    EncoderClassifierCache cache_;
    EncoderClassifierSplit split_;  // a split step's slices and lanes, kept from step to step
    bool training_ = true;
    Rng dropout_rng_;
};

}  // namespace attnlab
