// attnlab/model/config.hpp: every switch of a tiny Transformer in one commented struct.
//
// What it is for: describing an EncoderClassifier or a DecoderLM completely — each experiment
// the article discusses (positional encoding, norm placement, scaling on/off, heads, key/value
// heads, width, depth, feed-forward width) is a field here, like nanoGPT's GPTConfig. The same
// struct travels as a string map: into the safetensors checkpoint header (io/checkpoint.hpp) and
// across the JavaScript bindings. Not for: optimiser or schedule settings (see train/).
//
//   attnlab::ModelConfig config;
//   config.kind = attnlab::ModelKind::decoder;
//   config.vocab_size = 11; config.d_model = 32; config.num_heads = 4; config.positional = attnlab::PositionalKind::rope;
//   config.validate();                                          // ConfigError naming the numbers
//   auto meta = config.to_metadata();                           // {"d_model": "32", ...}
//   attnlab::ModelConfig same = attnlab::ModelConfig::from_metadata(meta);
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/nn/feed_forward.hpp"
#include "attnlab/posenc/positional_encoding.hpp"

namespace attnlab {

enum class ModelKind { encoder, decoder };
// Where the LayerNorms sit in a block (Xiong et al. 2020, "On Layer Normalization in the
// Transformer Architecture"): pre = x + f(LN(x)) (GPT-2, trains without warm-up);
// post = LN(x + f(x)) (the original Transformer, BERT).
enum class NormPlacement { pre, post };
// How an encoder turns (B, T, C) into one vector per sequence.
enum class Pooling { mean, cls };

std::string_view model_kind_name(ModelKind kind);
ModelKind model_kind_from_name(std::string_view name);  // ConfigError listing the valid names
std::string_view norm_placement_name(NormPlacement norm);
NormPlacement norm_placement_from_name(std::string_view name);
std::string_view pooling_name(Pooling pooling);
Pooling pooling_from_name(std::string_view name);

struct ModelConfig {
    ModelKind kind = ModelKind::decoder;     // encoder: classifier with padding masks; decoder: causal LM
    std::size_t vocab_size = 0;              // V: number of token ids, specials included
    std::size_t max_len = 64;                // rows of the learned position table (with the CLS token, if any);
                                             // sinusoidal, rope and none extrapolate beyond it
    std::size_t d_model = 32;                // C: model width
    std::size_t num_heads = 4;               // H: query heads, head dim D = C / H
    std::size_t num_kv_heads = 0;            // Hkv: key/value heads (GQA; 1 = MQA); 0 means num_heads (MHA)
    std::size_t num_layers = 2;              // number of Transformer blocks
    std::size_t ff_dim = 128;                // F: hidden width of the feed-forward network (usually 4·C)
    Activation activation = Activation::gelu;             // feed-forward non-linearity
    PositionalKind positional = PositionalKind::sinusoidal;  // how position enters (article §4)
    NormPlacement norm = NormPlacement::pre;  // LayerNorm placement; pre-LN models add a final ln_f
    bool scale_attention = true;             // false: no 1/sqrt(D) on the scores (article §2.2 experiment)
    std::optional<float> attention_scale;    // multiply scores by this instead of 1/sqrt(D) (when scaling)
    float dropout = 0.0f;                    // p on the attention and feed-forward outputs, training only
    bool tie_weights = false;                // decoder: the LM head reuses tok_emb.weight (Press & Wolf 2017)
    Pooling pooling = Pooling::mean;         // encoder: mean over non-padding positions, or a CLS token
    std::size_t num_classes = 0;             // encoder: K, width of the classification head
    bool bias = true;                        // biases in the attention/feed-forward projections and encoder head
    bool gradient_checkpointing = false;     // blocks keep only their input and recompute in backward
    bool causal = true;                      // decoder: hide future tokens; false only for the §6.1 experiment
                                             // (the model then sees its answer and cannot generate)
    std::size_t attention_window = 0;        // W: sliding-window attention (Longformer, article §5.3): a token
                                             // sees tokens at most W positions away; 0 = full attention
    std::size_t global_tokens = 0;           // G: the first G positions see and are seen by every token
                                             // (only meaningful with attention_window > 0)

    std::size_t kv_heads() const { return num_kv_heads == 0 ? num_heads : num_kv_heads; }
    std::size_t head_dim() const { return num_heads == 0 ? 0 : d_model / num_heads; }
    // The attention layer of every block.
    MultiHeadAttentionConfig attention_config() const;
    // scale_attention and attention_scale as the attention layer reads them.
    ScaleOptions scale_options() const;

    // Throws ConfigError naming the offending numbers (zero sizes, d_model % num_heads,
    // num_heads % num_kv_heads, odd head dim with rope, dropout outside [0, 1), encoder without
    // classes or with tied weights, non-positive or non-finite attention_scale).
    void validate() const;

    // Every field as a string: sizes in decimal, booleans "true"/"false", enums by name, floats
    // with 9 significant digits (round-trips float32 exactly), attention_scale "none" when unset.
    std::map<std::string, std::string> to_metadata() const;
    // Inverse of to_metadata, then validate(). Throws ConfigError naming unknown keys, missing
    // keys, and any value that does not parse. Keys added later are optional and default for
    // older checkpoints: causal (true), attention_window (0), global_tokens (0).
    static ModelConfig from_metadata(const std::map<std::string, std::string>& metadata);

    bool operator==(const ModelConfig& other) const { return to_metadata() == other.to_metadata(); }
    bool operator!=(const ModelConfig& other) const { return !(*this == other); }
};

}  // namespace attnlab
