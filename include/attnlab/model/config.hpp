// attnlab/model/config.hpp: every switch of a tiny Transformer, written once in a field table.
//
// What it is for: describing an EncoderClassifier or a DecoderLM completely — each experiment
// the article discusses (positional encoding, norm placement, scaling on/off, heads, key/value
// heads, width, depth, feed-forward width) is a field here, like nanoGPT's GPTConfig. The table
// (ATTNLAB_MODEL_CONFIG_FIELDS, model/config_fields.hpp) declares the struct's members and names
// each field for the checkpoint metadata (io/checkpoint.hpp), the JavaScript bindings and the
// CLI flags, which all derive from it. Not for: optimiser or schedule settings (see train/).
//
// The parts, one source each in src/model/config/: the fields and their views (fields.cpp:
// attention_config, swin_stages, to_metadata, ...), what they must satisfy (validate.cpp), what
// they cost (parameter_count.cpp); their text forms are model/field_text.hpp (field_text.cpp).
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
#include "attnlab/model/config_fields.hpp"
#include "attnlab/model/field_text.hpp"

namespace attnlab {

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
    // What an LSTM cannot honour of the Transformer's switches, refused rather than ignored.
    void validate_lstm() const;

    template <class Config, class F>
    static void for_each_field_of(Config& config, F& f) {
        std::size_t i = 0;
#define ATTNLAB_MODEL_CONFIG_VISIT(type, name, init, js, cli, flags, doc) f(kModelConfigFields[i++], config.name);
        ATTNLAB_MODEL_CONFIG_FIELDS(ATTNLAB_MODEL_CONFIG_VISIT)
#undef ATTNLAB_MODEL_CONFIG_VISIT
    }
};

}  // namespace attnlab
