// attnlab/model/config.hpp: every switch of a tiny Transformer, written once in a field table.
//
// What it is for: describing an EncoderClassifier or a DecoderLM completely — each experiment
// the article discusses (positional encoding, norm placement, scaling on/off, heads, key/value
// heads, width, depth, feed-forward width) is a field here, like nanoGPT's GPTConfig. The table
// (ATTNLAB_MODEL_CONFIG_FIELDS) declares the struct's members and names each field for the
// checkpoint metadata (io/checkpoint.hpp), the JavaScript bindings and the CLI flags, which all
// derive from it. Not for: optimiser or schedule settings (see train/).
//
//   attnlab::ModelConfig config;
//   config.kind = attnlab::ModelKind::decoder;
//   config.vocab_size = 11; config.d_model = 32; config.num_heads = 4; config.positional = attnlab::PositionalKind::rope;
//   config.validate();                                          // ConfigError naming the numbers
//   auto meta = config.to_metadata();                           // {"d_model": "32", ...}
//   attnlab::ModelConfig same = attnlab::ModelConfig::from_metadata(meta);
//   std::uint64_t n = config.parameter_count();                 // without building the model
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/nn/feed_forward.hpp"
#include "attnlab/posenc/positional_encoding.hpp"

namespace attnlab {

// forecaster: reads a window of real values (B, T, F) with their timestamps and regresses the next
// `horizon` values of feature 0 (model/series/series_models.hpp, article §7.2).
enum class ModelKind { encoder, decoder, forecaster };
// What computes the hidden states between the embedding and the head: Transformer blocks, or
// LSTM layers (model/lstm/lstm_models.hpp), the recurrent baseline the article compares with (§1.1);
// or, for images (model/vision/image_classifier.hpp, article §7.1), a ViT (patches -> Transformer
// blocks over all patches) or a Swin Transformer (blocks over M x M windows, shifted on
// alternate blocks, patch merging between stages); or, for paired image/text tasks
// (model/crossmodal/crossmodal.hpp, article §7.3), a text encoder and a ViT image encoder joined by
// cross-attention from the words to the patches.
enum class Architecture { transformer, lstm, vit, swin, crossmodal };
// The loss of a crossmodal model: match (cross-entropy of its match/no-match head), or clip (the
// same plus a CLIP-style symmetric InfoNCE over the matched pairs' pooled embeddings,
// nn/contrastive_loss.hpp).
enum class PairLoss { match, clip };
// Where the LayerNorms sit in a block (Xiong et al. 2020, "On Layer Normalization in the
// Transformer Architecture"): pre = x + f(LN(x)) (GPT-2, trains without warm-up);
// post = LN(x + f(x)) (the original Transformer, BERT).
enum class NormPlacement { pre, post };
// How an encoder turns (B, T, C) into one vector per sequence.
enum class Pooling { mean, cls };

std::string_view model_kind_name(ModelKind kind);
ModelKind model_kind_from_name(std::string_view name);  // ConfigError listing the valid names
std::string_view architecture_name(Architecture architecture);
Architecture architecture_from_name(std::string_view name);
std::string_view norm_placement_name(NormPlacement norm);
NormPlacement norm_placement_from_name(std::string_view name);
std::string_view pooling_name(Pooling pooling);
Pooling pooling_from_name(std::string_view name);
std::string_view pair_loss_name(PairLoss loss);
PairLoss pair_loss_from_name(std::string_view name);

// ---- The field table ----
// Every ModelConfig field, once: X(type, name, default, JS option, CLI flag, flags, doc).
//   name       the C++ member and the checkpoint metadata key (to_metadata / from_metadata)
//   JS option  the camelCase key of the JavaScript Model's options and config()
//              (web/bindings/model.cpp; web/attnlab.d.ts's ModelConfig is checked against the
//              table by tests/wasm/model_config.test.mjs); nullptr: JavaScript keeps the default
//   CLI flag   the flag of `attnlab train / eval / generate` (src/cli/model_flags.cpp); a bool's
//              flag is a switch that sets the opposite of its default; nullptr: the task decides
//              the value (kind, vocab_size, num_classes) or another flag does (--scale)
//   flags      kOptionalKey: checkpoints written before the field lack its key, and load with
//              the default; kTrainingOnly: does not change what the weights mean, so a checkpoint
//              may differ in it (io/checkpoint.hpp)
//   doc        what the field means: the comment of the member, the help of the flag
// Metadata, checkpoint checks, the JavaScript conversion and the CLI flags all come from these
// lines (ModelConfig::for_each_field). A new field is one more line, with a default that keeps
// older checkpoints' meaning and kOptionalKey, e.g.
//   X(bool, causal, true, nullptr, "no-causal", kOptionalKey, "decoder: hide future tokens")
// plus its checks in validate() and its use in the model; a field of a new type also needs
// format_field / parse_field overloads (config.cpp) and a JavaScript conversion (bindings).
#define ATTNLAB_MODEL_CONFIG_FIELDS(X)                                                                                  \
    X(ModelKind, kind, ModelKind::decoder, "kind", nullptr, 0,                                                           \
      "encoder (classifier with padding masks), decoder (causal LM) or forecaster (regression of a series)")                                                     \
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
    X(Activation, activation, Activation::gelu, "activation", "activation", 0, "feed-forward non-linearity: gelu or relu")           \
    X(PositionalKind, positional, PositionalKind::sinusoidal, "positional", "pe", 0,                                    \
      "how position enters: none, sinusoidal, learned or rope (article section 4); forecasters also time (the "        \
      "sinusoidal table plus sin/cos of each timestamp at time_periods, article section 7.2)")                                                                        \
    X(NormPlacement, norm, NormPlacement::pre, "norm", "norm", 0,                                                       \
      "LayerNorm placement, pre or post; pre-LN models add a final ln_f")                                                            \
    X(bool, scale_attention, true, "scale", nullptr, 0,                                                                 \
      "false: no 1/sqrt(D) on the scores (article section 2.2 experiment)")                                             \
    X(std::optional<float>, attention_scale, std::nullopt, "attentionScale", nullptr, 0,                                \
      "multiply scores by this instead of 1/sqrt(D) (when scaling)")                                                    \
    X(float, dropout, 0.0f, "dropout", "dropout", kTrainingOnly, "p on the attention and feed-forward outputs, training only") \
    X(bool, tie_weights, false, "tieWeights", "tie", 0, "decoder: the LM head reuses tok_emb.weight (Press & Wolf 2017)") \
    X(Pooling, pooling, Pooling::mean, "pooling", "pooling", 0,                                                         \
      "encoder: mean over non-padding positions, or cls (a CLS token)")                                                       \
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
    X(Architecture, architecture, Architecture::transformer, "architecture", "architecture", kOptionalKey,          \
      "transformer or lstm (embedding -> num_layers LSTM layers of width d_model -> head; ignores heads, "         \
      "kv-heads, ff, activation, pe, norm, scale; refuses dropout, window, global-tokens, no-causal, cls pooling, "  \
      "normalizer other than softmax, tie-qk, variant other than full, precision other than fp32); vit or swin for " \
      "image tasks (encoders over patches of pixels); crossmodal for paired image/text tasks (caption_match)")                                                                 \
    X(AttentionVariant, variant, AttentionVariant::full, "variant", "variant", kOptionalKey,                           \
      "attention mechanism (article section 5.3): full, linear (kernelised, O(T)) or block_sparse (BigBird layout)")  \
    X(Normalizer, normalizer, Normalizer::softmax, "normalizer", "normalizer", kOptionalKey,                            \
      "attention weights from the scaled, masked scores s (n_i = keys query i may see): softmax, sigmoid "              \
      "(sigma(s - ln n_i)) or relu (max(s, 0) / n_i); masked keys weigh 0 (article section 9.1)")                    \
    X(bool, tie_qk, false, "tieQK", "tie-qk", kOptionalKey,                                                           \
      "one weight and bias serve as W_Q and W_K (article section 2.1: symmetric scores); needs num_kv_heads = "        \
      "num_heads")                                                                                                     \
    X(Precision, precision, Precision::fp32, "precision", "precision", kOptionalKey,                                    \
      "number format the attention layers emulate, forward and backward: fp32, fp16 or bf16 (round-to-nearest-even, " \
      "overflow to inf; weights and optimiser state stay fp32; article section 6.3)")                                   \
    X(SoftmaxPrecision, softmax_precision, SoftmaxPrecision::fp32, "softmaxPrecision", "softmax-precision",              \
      kOptionalKey, "with fp16/bf16: fp32 (softmax of the rounded scores in fp32, weights rounded) or same (every step " \
      "of the softmax rounded to the format)")                                                                           \
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
    X(PairLoss, loss, PairLoss::match, "loss", "loss", kOptionalKey,                                                   \
      "crossmodal: match (cross-entropy of the match head) or clip (plus a symmetric InfoNCE over the matched pairs' " \
      "pooled, normalised embeddings)")                                                                                \
    X(float, clip_temperature, 0.1f, "clipTemperature", "clip-temperature", kOptionalKey,                              \
      "crossmodal with loss clip: tau, the InfoNCE logits are cosine similarities / tau (> 0)")                          \
    X(std::size_t, num_features, 0, "numFeatures", nullptr, kOptionalKey,                                              \
      "forecaster: F, values per step the value projection reads (the task decides it); 0 for other models")          \
    X(std::size_t, horizon, 0, "horizon", nullptr, kOptionalKey,                                                       \
      "forecaster: steps forecast by the regression head (the task decides it); 0 for other models")                  \
    X(std::vector<std::size_t>, time_periods, {}, "timePeriods", nullptr, kOptionalKey,                                \
      "forecaster with pe time: the periods P_k whose sin/cos of the timestamp join the values (the task's periods)")

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

// One stage of a Swin model (ModelConfig::swin_stages()): num_layers blocks over a grid x grid
// map of patches of the given width, in windows of window x window patches; stage k has width
// C·2^k, H·2^k heads and feed-forward F·2^k (Liu et al. 2021 double them at each merge).
struct SwinStage {
    std::size_t grid;    // patches per side
    std::size_t width;   // channels C_k
    std::size_t heads;   // H_k
    std::size_t ff_dim;  // F_k
    std::size_t window;  // M_k = min(swin_window, grid); grid % M_k == 0
    bool shifted;        // odd blocks shift by M_k / 2 (false when one window covers the grid)
};

// Every switch of the model, one member per line of the table above (the doc there says what
// each means). Like nanoGPT's GPTConfig.
struct ModelConfig {
#define ATTNLAB_MODEL_CONFIG_MEMBER(type, name, init, js, cli, flags, doc) type name = init;
    ATTNLAB_MODEL_CONFIG_FIELDS(ATTNLAB_MODEL_CONFIG_MEMBER)
#undef ATTNLAB_MODEL_CONFIG_MEMBER

    std::size_t kv_heads() const { return num_kv_heads == 0 ? num_heads : num_kv_heads; }
    std::size_t head_dim() const { return num_heads == 0 ? 0 : d_model / num_heads; }
    // True for the image architectures (vit, swin): their input is pixels, not tokens.
    bool is_image() const { return architecture == Architecture::vit || architecture == Architecture::swin; }
    // True for the crossmodal architecture: its input is pixels and tokens (model/crossmodal/crossmodal.hpp).
    bool is_crossmodal() const { return architecture == Architecture::crossmodal; }
    // E of a crossmodal model: embed_dim, or d_model when it is 0.
    std::size_t common_width() const { return embed_dim == 0 ? d_model : embed_dim; }
    // A crossmodal model's encoders as configs of their own: the text encoder (a transformer
    // encoder) and the image encoder (a vit with learned positions, mean pooling).
    ModelConfig crossmodal_text_config() const;
    ModelConfig crossmodal_image_config() const;
    // True for a forecaster: its input is real values with timestamps, its output `horizon` values.
    bool is_forecaster() const { return kind == ModelKind::forecaster; }
    // Width of the value projection's input: F, plus 2 per time period with pe time.
    std::size_t forecast_input_width() const {
        return num_features + (positional == PositionalKind::time ? 2 * time_periods.size() : 0);
    }
    // Patches per side of the image: image_size / patch_size (0 when either is 0).
    std::size_t patch_grid() const { return patch_size == 0 ? 0 : image_size / patch_size; }
    // Swin's stages: the first over the patch grid; a 2x2 patch merging halves the grid (and
    // doubles the width) while the grid is larger than swin_window. Empty unless architecture is
    // swin and the sizes are valid (validate() names the problem).
    std::vector<SwinStage> swin_stages() const;
    // The attention layer of every block.
    MultiHeadAttentionConfig attention_config() const;
    // scale_attention and attention_scale as the attention layer reads them.
    ScaleOptions scale_options() const;
    // precision, softmax_precision and stable_softmax as the attention layer reads them.
    PrecisionOptions precision_options() const;

    // The number of parameters a model of this config has (the sum of its parameters()' sizes,
    // tested), counted without building it: embeddings, positions, CLS vector, blocks, ln_f, head
    // (an LSTM: tok_emb, its layers, head).
    // 64-bit even in WebAssembly; ConfigError if it does not fit in 64 bits.
    std::uint64_t parameter_count() const;

    // Throws ConfigError naming the offending numbers (zero sizes, and for a Transformer d_model % num_heads,
    // num_heads % num_kv_heads, odd head dim with rope, dropout outside [0, 1), encoder without
    // classes or with tied weights, non-positive or non-finite attention_scale, tie_qk with
    // num_kv_heads != num_heads; for an LSTM the Transformer-only switches it would silently not
    // honour: dropout, attention_window, global_tokens, causal = false, cls pooling, normalizer,
    // tie_qk).
    void validate() const;

    // Calls f(const ModelConfigField&, member) for every field in the table's order; the member
    // is const for a const config.
    template <class F>
    void for_each_field(F&& f) { for_each_field_of(*this, f); }
    template <class F>
    void for_each_field(F&& f) const { for_each_field_of(*this, f); }

    // Every field as a string (format_field): sizes in decimal, booleans "true"/"false", enums
    // by name, floats with 9 significant digits (round-trips float32 exactly), attention_scale
    // "none" when unset.
    std::map<std::string, std::string> to_metadata() const;
    // Inverse of to_metadata, then validate(). Throws ConfigError naming unknown keys, missing
    // keys, and any value that does not parse. Keys of kOptionalKey fields may be missing (older
    // checkpoints) and take their defaults.
    static ModelConfig from_metadata(const std::map<std::string, std::string>& metadata);

    bool operator==(const ModelConfig& other) const { return to_metadata() == other.to_metadata(); }
    bool operator!=(const ModelConfig& other) const { return !(*this == other); }

private:
    // validate() and parameter_count() of the image architectures (vit, swin).
    void validate_image() const;
    std::uint64_t image_parameter_count() const;
    // validate() and parameter_count() of the crossmodal architecture.
    void validate_crossmodal() const;
    std::uint64_t crossmodal_parameter_count() const;
    // The checks of a forecaster that the token models' checks do not cover.
    void validate_forecaster() const;

    template <class Config, class F>
    static void for_each_field_of(Config& config, F& f) {
        std::size_t i = 0;
#define ATTNLAB_MODEL_CONFIG_VISIT(type, name, init, js, cli, flags, doc) f(kModelConfigFields[i++], config.name);
        ATTNLAB_MODEL_CONFIG_FIELDS(ATTNLAB_MODEL_CONFIG_VISIT)
#undef ATTNLAB_MODEL_CONFIG_VISIT
    }
};

// One field's value as text (the metadata form; the CLI's flag values take the same form) and
// back. parse_field throws ConfigError "<where>: <key> must be ..., got '<text>'".
std::string format_field(std::size_t value);
std::string format_field(bool value);
std::string format_field(float value);
std::string format_field(const std::optional<float>& value);  // "none" when unset
std::string format_field(ModelKind value);
std::string format_field(Activation value);
std::string format_field(PositionalKind value);
std::string format_field(NormPlacement value);
std::string format_field(Pooling value);
std::string format_field(AttentionVariant value);
std::string format_field(Architecture value);
std::string format_field(Normalizer value);
std::string format_field(Precision value);
std::string format_field(SoftmaxPrecision value);
std::string format_field(PairLoss value);
std::string format_field(const std::vector<std::size_t>& value);  // "12,24"; "" when empty
void parse_field(const char* where, const char* key, const std::string& text, std::size_t& out);
void parse_field(const char* where, const char* key, const std::string& text, bool& out);
void parse_field(const char* where, const char* key, const std::string& text, float& out);
void parse_field(const char* where, const char* key, const std::string& text, std::optional<float>& out);
void parse_field(const char* where, const char* key, const std::string& text, ModelKind& out);
void parse_field(const char* where, const char* key, const std::string& text, Activation& out);
void parse_field(const char* where, const char* key, const std::string& text, PositionalKind& out);
void parse_field(const char* where, const char* key, const std::string& text, NormPlacement& out);
void parse_field(const char* where, const char* key, const std::string& text, Pooling& out);
void parse_field(const char* where, const char* key, const std::string& text, Architecture& out);
void parse_field(const char* where, const char* key, const std::string& text, AttentionVariant& out);
void parse_field(const char* where, const char* key, const std::string& text, Normalizer& out);
void parse_field(const char* where, const char* key, const std::string& text, Precision& out);
void parse_field(const char* where, const char* key, const std::string& text, SoftmaxPrecision& out);
void parse_field(const char* where, const char* key, const std::string& text, PairLoss& out);
void parse_field(const char* where, const char* key, const std::string& text, std::vector<std::size_t>& out);

}  // namespace attnlab
