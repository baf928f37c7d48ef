// attnlab/model/config_fields.hpp: ModelConfig's field table, every field once.
//
// What it is for: the one list of a model's switches (model/config.hpp declares the struct's
// members from it) and what each is called everywhere: the checkpoint metadata key, the
// JavaScript option, the CLI flag, the doc. The CLI flags (src/cli/model_flags.cpp), the
// JavaScript conversion (web/bindings/model.cpp, lab.modelConfigFields()), the checkpoint
// metadata (ModelConfig::to_metadata) and the TypeScript ModelConfig (scripts/gen_types.mjs)
// all derive from these lines.
// Not for: what the fields must satisfy (ModelConfig::validate) or what they cost
// (ModelConfig::parameter_count).
//
//   for (const attnlab::ModelConfigField& f : attnlab::kModelConfigFields) std::puts(f.name);
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "attnlab/attention/block_sparse.hpp"
#include "attnlab/attention/normalizer.hpp"
#include "attnlab/attention/variant.hpp"
#include "attnlab/core/numeric_format.hpp"
#include "attnlab/model/choices.hpp"
#include "attnlab/nn/feed_forward.hpp"
#include "attnlab/posenc/positional_encoding.hpp"

namespace attnlab {

// Every ModelConfig field, once: X(type, name, default, JS option, CLI flag, flags, doc).
//   name       the C++ member and the checkpoint metadata key (to_metadata / from_metadata)
//   JS option  the camelCase key of the JavaScript Model's options and config()
//              (web/bindings/model.cpp; the TypeScript ModelConfig is generated from the table,
//              scripts/gen_types.mjs); nullptr: JavaScript keeps the default
//   CLI flag   the flag of `attnlab train / eval / generate` (src/cli/model_flags.cpp); a bool's
//              flag is a switch that sets the opposite of its default; nullptr: the task decides
//              the value (kind, vocab_size, num_classes) or another flag does (--scale)
//   flags      kOptionalKey: checkpoints written before the field lack its key, and load with
//              the default; kTrainingOnly: does not change what the weights mean, so a checkpoint
//              may differ in it (io/checkpoint.hpp)
//   doc        what the field means: the comment of the member, the help of the flag; a choice's
//              field names no values: its help lists them from the choice (core/choice.hpp)
// Metadata, checkpoint checks, the JavaScript conversion and the CLI flags all come from these
// lines (ModelConfig::for_each_field). A new field is one more line, with a default that keeps
// older checkpoints' meaning and kOptionalKey, e.g.
//   X(bool, causal, true, nullptr, "no-causal", kOptionalKey, "decoder: hide future tokens")
// plus its checks in validate() (src/model/config/validate.cpp), its parameters in
// parameter_count() (src/model/config/parameter_count.cpp) if it adds any, and its use in the
// model. A field of a choice type (core/choice.hpp) needs nothing more: its text form, JavaScript
// conversion, CLI help and TypeScript union come from the choice. A field of another new type
// also needs format_field / parse_field overloads (model/field_text.hpp) and a JavaScript
// conversion with its TypeScript type (web/bindings/fields.hpp).
#define ATTNLAB_MODEL_CONFIG_FIELDS(X)                                                                                  \
    X(ModelKind, kind, ModelKind::decoder, "kind", nullptr, 0, "what the model predicts")                              \
    X(std::size_t, vocab_size, 0, "vocabSize", nullptr, 0, "V: number of token ids, specials included")                 \
    X(std::size_t, max_len, 64, "maxLen", "max-len", 0,                                                                 \
      "rows of the learned position table (with the CLS token, if any); sinusoidal, rope and none extrapolate "         \
      "beyond it")                                                                                                      \
    X(std::size_t, d_model, 32, "dModel", "d-model", 0, "C: model width")                                              \
    X(std::size_t, num_heads, 4, "numHeads", "heads", 0, "H: query heads, head dim D = C / H")                         \
    X(std::size_t, num_kv_heads, 0, "numKvHeads", "kv-heads", 0,                                                        \
      "Hkv: key/value heads (GQA; 1 = MQA); 0 means num_heads (MHA)")                                                   \
    X(std::size_t, num_layers, 2, "numLayers", "layers", 0, "number of Transformer blocks")                            \
    X(std::size_t, ff_dim, 128, "ffDim", "ff", 0, "F: hidden width of the feed-forward network (usually 4 x C)")      \
    X(Activation, activation, Activation::gelu, "activation", "activation", 0, "feed-forward non-linearity")           \
    X(PositionalKind, positional, PositionalKind::sinusoidal, "positional", "pe", 0,                                    \
      "how position enters (article section 4; time for forecasters only)")                                            \
    X(NormPlacement, norm, NormPlacement::pre, "norm", "norm", 0, "LayerNorm placement")                               \
    X(bool, scale_attention, true, "scale", nullptr, 0,                                                                 \
      "false: no 1/sqrt(D) on the scores (article section 2.2 experiment)")                                             \
    X(std::optional<float>, attention_scale, std::nullopt, "attentionScale", nullptr, 0,                                \
      "multiply scores by this instead of 1/sqrt(D) (when scaling)")                                                    \
    X(float, dropout, 0.0f, "dropout", "dropout", kTrainingOnly, "p on the attention and feed-forward outputs, training only") \
    X(bool, tie_weights, false, "tieWeights", "tie", 0, "decoder: the LM head reuses tok_emb.weight (Press & Wolf 2017)") \
    X(Pooling, pooling, Pooling::mean, "pooling", "pooling", 0, "encoder: how a sequence becomes one vector")          \
    X(std::size_t, num_classes, 0, "numClasses", nullptr, 0, "encoder: K, width of the classification head")           \
    X(bool, bias, true, "bias", "no-bias", 0, "biases in the attention/feed-forward projections and encoder head")     \
    X(bool, gradient_checkpointing, false, "gradientCheckpointing", "checkpointing", kTrainingOnly,                     \
      "blocks keep only their input and recompute in backward (less memory)")                                           \
    X(bool, causal, true, nullptr, "no-causal", kOptionalKey,                                                           \
      "decoder: hide future tokens; false only for the article's section 6.1 experiment (the model then sees its "     \
      "answer and cannot generate)")                                                                                    \
    X(std::size_t, attention_window, 0, "attentionWindow", "window", kOptionalKey,                                      \
      "W: sliding-window attention (Longformer, article section 5.3): a token sees tokens at most W positions away; "   \
      "0 = full attention")                                                                                             \
    X(std::size_t, global_tokens, 0, "globalTokens", "global-tokens", kOptionalKey,                                     \
      "G: with attention_window, the first G positions see and are seen by every token")                   \
    X(Architecture, architecture, Architecture::transformer, "architecture", "architecture", kOptionalKey,            \
      "what computes the hidden states")                                                                              \
    X(AttentionVariant, variant, AttentionVariant::full, "variant", "variant", kOptionalKey,                           \
      "attention mechanism (article section 5.3)")                                                                    \
    X(Normalizer, normalizer, Normalizer::softmax, "normalizer", "normalizer", kOptionalKey,                            \
      "attention weights from the scaled, masked scores s (n_i = keys query i may see); masked keys weigh 0 (article " \
      "section 9.1)")                                                                                                 \
    X(bool, tie_qk, false, "tieQK", "tie-qk", kOptionalKey,                                                           \
      "one weight and bias serve as W_Q and W_K (article section 2.1: symmetric scores); needs num_kv_heads = "        \
      "num_heads")                                                                                                     \
    X(Precision, precision, Precision::fp32, "precision", "precision", kOptionalKey,                                    \
      "number format the attention layers emulate, forward and backward (round-to-nearest-even, overflow to inf; "     \
      "weights and optimiser state stay fp32; article section 6.3)")                                                  \
    X(SoftmaxPrecision, softmax_precision, SoftmaxPrecision::fp32, "softmaxPrecision", "softmax-precision",              \
      kOptionalKey, "with fp16/bf16: where the softmax computes")                                                     \
    X(bool, stable_softmax, true, "stableSoftmax", "unstable-softmax", kOptionalKey,                                    \
      "the softmax subtracts each row's max before exp; false is the naive exp(s)/sum exp(s), which overflows fp16 for "  \
      "scores above ln 65520 = 11.09")                                                                                 \
    X(std::size_t, sparse_block_size, BlockSparseOptions{}.block_size, "blockSize", "block-size", kOptionalKey,       \
      "block_sparse: b, positions per block (> 0)")                                                                     \
    X(std::size_t, sparse_window_blocks, BlockSparseOptions{}.window_blocks, "windowBlocks", "window-blocks",          \
      kOptionalKey, "block_sparse: w, query block i sees key blocks i-w .. i+w")                                        \
    X(std::size_t, sparse_global_blocks, BlockSparseOptions{}.global_blocks, "globalBlocks", "global-blocks",          \
      kOptionalKey, "block_sparse: g, the first g blocks see and are seen by every block")                              \
    X(std::size_t, sparse_random_blocks, BlockSparseOptions{}.random_blocks, "randomBlocks", "random-blocks",          \
      kOptionalKey, "block_sparse: r, extra random key blocks per query block (causal: among earlier blocks)")          \
    X(std::size_t, sparse_seed, BlockSparseOptions{}.seed, "sparseSeed", "sparse-seed", kOptionalKey,                  \
      "block_sparse: seed of the random blocks' draw")                                                                \
    X(std::size_t, image_size, 0, "imageSize", nullptr, kOptionalKey,                                                   \
      "vit/swin: S, the side of the (S, S) grayscale images in pixels (the task decides it); 0 for token models")      \
    X(std::size_t, patch_size, 4, "patchSize", "patch", kOptionalKey,                                                   \
      "vit/swin: P, the side of the square patches, each one row of the patch embedding (S % P == 0)")                  \
    X(std::size_t, swin_window, 4, "swinWindow", "swin-window", kOptionalKey,                                           \
      "swin: M, windows of M x M patches (min(M, grid) once the grid is smaller); blocks alternate unshifted and "      \
      "shifted by M/2; stages merge 2x2 patches while the grid is larger than M")                                   \
    X(std::size_t, embed_dim, 0, "embedDim", "embed-dim", kOptionalKey,                                                \
      "crossmodal: E, the common width both encoders project to (text tokens and image patches); 0 means d_model")     \
    X(PairLoss, loss, PairLoss::match, "loss", "loss", kOptionalKey, "crossmodal: the training loss")                  \
    X(float, clip_temperature, 0.1f, "clipTemperature", "clip-temperature", kOptionalKey,                              \
      "crossmodal with loss clip: tau, the InfoNCE logits are cosine similarities / tau (> 0)")                          \
    X(std::size_t, num_features, 0, "numFeatures", nullptr, kOptionalKey,                                              \
      "forecaster: F, values per step the value projection reads (the task decides it); 0 for other models")          \
    X(std::size_t, horizon, 0, "horizon", nullptr, kOptionalKey,                                                       \
      "forecaster: steps forecast by the regression head (the task decides it); 0 for other models")                  \
    X(std::vector<std::size_t>, time_periods, {}, "timePeriods", nullptr, kOptionalKey,                                \
      "forecaster with pe time: the periods P_k whose sin/cos of the timestamp join the values (the task's periods)") \
    X(float, layer_norm_eps, 1e-5f, "layerNormEps", "layer-norm-eps", kOptionalKey,                                 \
      "eps of every LayerNorm, inside the square root: (x - mean) / sqrt(var + eps) (> 0; GPT-2's layer_norm_epsilon)") \
    X(bool, attention_only, false, "attentionOnly", "attention-only", kOptionalKey,                                  \
      "transformer: blocks without the feed-forward sub-layer and its LayerNorm, attention and residual only "          \
      "(Elhage et al. 2021, the induction-head models); ff_dim is then unused")

// ModelConfigField::flags
inline constexpr unsigned kOptionalKey = 1;   // absent from older checkpoints: the default applies
inline constexpr unsigned kTrainingOnly = 2;  // a checkpoint may differ in it

// One row of the table without its type and default (those live in the struct).
struct ModelConfigField {
    const char* name;  // C++ member, metadata key
    const char* js;    // JavaScript option, or nullptr
    const char* cli;   // CLI flag, or nullptr
    unsigned flags;    // kOptionalKey | kTrainingOnly
    const char* doc;
};

// The table's rows, in its order.
inline constexpr ModelConfigField kModelConfigFields[] = {
#define ATTNLAB_MODEL_CONFIG_ROW(type, name, init, js, cli, flags, doc) {#name, js, cli, flags, doc},
    ATTNLAB_MODEL_CONFIG_FIELDS(ATTNLAB_MODEL_CONFIG_ROW)
#undef ATTNLAB_MODEL_CONFIG_ROW
};

}  // namespace attnlab
