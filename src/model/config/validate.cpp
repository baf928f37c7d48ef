// ModelConfig::validate (model/config.hpp): what the fields must satisfy, each check a
// ConfigError naming the numbers. Token models (a Transformer or an LSTM, an encoder, decoder or
// forecaster) here; the image architectures and the crossmodal model have their own checks.
#include <cmath>
#include <string>

#include "attnlab/model/config.hpp"

namespace attnlab {

void ModelConfig::validate() const {
    constexpr const char* where = "ModelConfig";
    if (!(layer_norm_eps > 0.0f) || !std::isfinite(layer_norm_eps)) {
        fail<ConfigError>(where, ": layer_norm_eps must be a positive finite number, got ", layer_norm_eps);
    }
    if (attention_only && architecture != Architecture::transformer) {
        fail<ConfigError>(where, ": attention_only removes a transformer block's feed-forward; architecture ",
                          architecture_name(architecture), " has no such blocks");
    }
    if (is_image()) {
        validate_image();
        return;
    }
    if (is_crossmodal()) {
        validate_crossmodal();
        return;
    }
    if (is_forecaster()) {
        validate_forecaster();
    } else {
        if (vocab_size == 0) {
            fail<ConfigError>(where, ": vocab_size must be positive, got 0 (", architecture_name(architecture),
                              " reads tokens; an image task needs architecture vit or swin)");
        }
        if (positional == PositionalKind::time) {
            fail<ConfigError>(where, ": pe time reads timestamps, which only a forecaster (the series task) has; this "
                              "model is a ", model_kind_name(kind));
        }
        if (num_features != 0 || horizon != 0) {
            fail<ConfigError>(where, ": num_features and horizon belong to forecasters; a ", model_kind_name(kind),
                              " needs 0, got num_features ", num_features, ", horizon ", horizon);
        }
    }
    if (max_len == 0) fail<ConfigError>(where, ": max_len must be positive, got 0");
    if (d_model == 0) fail<ConfigError>(where, ": d_model must be positive, got 0");
    if (num_layers == 0) fail<ConfigError>(where, ": num_layers must be positive, got 0");
    if (!(dropout >= 0.0f && dropout < 1.0f)) fail<ConfigError>(where, ": dropout must be in [0, 1), got ", dropout);
    if (kind == ModelKind::encoder) {
        if (num_classes == 0) fail<ConfigError>(where, ": an encoder needs num_classes > 0, got 0");
        if (tie_weights) fail<ConfigError>(where, ": tie_weights applies to decoders only (kind is encoder)");
    }
    if (sparse_block_size == 0) fail<ConfigError>(where, ": sparse_block_size must be positive, got 0");
    if (variant == AttentionVariant::block_sparse && (attention_window != 0 || global_tokens != 0)) {
        fail<ConfigError>(where, ": variant block_sparse with attention_window ", attention_window, " and global_tokens ",
                          global_tokens, " is not defined: the block layout's window and global blocks replace them");
    }
    if (architecture == Architecture::lstm) {
        validate_lstm();
        return;
    }
    if (num_heads == 0) fail<ConfigError>(where, ": num_heads must be positive, got 0");
    if (ff_dim == 0) fail<ConfigError>(where, ": ff_dim must be positive, got 0");
    if (d_model % num_heads != 0) {
        fail<ConfigError>(where, ": d_model (", d_model, ") must be divisible by num_heads (", num_heads, ")");
    }
    if (num_heads % kv_heads() != 0) {
        fail<ConfigError>(where, ": num_heads (", num_heads, ") must be divisible by num_kv_heads (", kv_heads(), ")");
    }
    if (tie_qk && kv_heads() != num_heads) {
        fail<ConfigError>(where, ": tie_qk needs num_kv_heads = num_heads (W_K = W_Q projects to all C features), got ",
                          num_heads, " query heads and ", kv_heads(), " key/value heads");
    }
    if (positional == PositionalKind::rope && head_dim() % 2 != 0) {
        fail<ConfigError>(where, ": rope needs an even head dimension, got d_model ", d_model, " / num_heads ",
                          num_heads, " = ", head_dim());
    }
    if (attention_scale && !(std::isfinite(*attention_scale) && *attention_scale > 0.0f)) {
        fail<ConfigError>(where, ": attention_scale must be a positive finite number, got ", *attention_scale);
    }
    if (variant == AttentionVariant::linear && attention_window != 0) {
        fail<ConfigError>(where, ": variant linear cannot use attention_window ", attention_window,
                          ": its running sums hold every earlier key and cannot drop those that leave the window");
    }
    if (variant == AttentionVariant::linear && (normalizer != Normalizer::softmax || !precision_options().is_plain())) {
        fail<ConfigError>(where, ": variant linear has no normaliser and no precision emulation (got normalizer ",
                          normalizer_name(normalizer), ", precision ", precision_name(precision),
                          stable_softmax ? "" : ", stable_softmax false", ")");
    }
}

void ModelConfig::validate_lstm() const {
    constexpr const char* where = "ModelConfig";
    // The attention and feed-forward fields do not exist in an LSTM and are ignored; these
    // would change what a Transformer computes and an LSTM cannot honour them, so a run
    // asking for them is refused rather than silently trained without.
    if (dropout != 0.0f) fail<ConfigError>(where, ": an lstm has no dropout, got dropout ", dropout);
    if (layer_norm_eps != ModelConfig{}.layer_norm_eps) {
        fail<ConfigError>(where, ": an lstm has no LayerNorm, got layer_norm_eps ", layer_norm_eps);
    }
    if (attention_window != 0 || global_tokens != 0) {
        fail<ConfigError>(where, ": an lstm has no attention window, got attention_window ", attention_window,
                          " and global_tokens ", global_tokens);
    }
    if (!causal) fail<ConfigError>(where, ": an lstm reads left to right; causal = false does not apply to it");
    if (variant != AttentionVariant::full) {
        fail<ConfigError>(where, ": an lstm has no attention; variant ", attention_variant_name(variant),
                          " does not apply to it");
    }
    if (!precision_options().is_plain()) {
        fail<ConfigError>(where, ": precision emulation is an attention option; an lstm has no attention (got precision ",
                          precision_name(precision), stable_softmax ? "" : " with stable_softmax false", ")");
    }
    if (kind == ModelKind::encoder && pooling == Pooling::cls) {
        fail<ConfigError>(where, ": an lstm classifier reads its last non-padding step; pooling cls does not apply");
    }
    if (normalizer != Normalizer::softmax || tie_qk) {
        fail<ConfigError>(where, ": an lstm has no attention, got normalizer ", normalizer_name(normalizer),
                          " and tie_qk ", tie_qk ? "true" : "false");
    }
}

void ModelConfig::validate_forecaster() const {
    constexpr const char* where = "ModelConfig";
    if (architecture != Architecture::transformer && architecture != Architecture::lstm) {
        fail<ConfigError>(where, ": a forecaster is a transformer or an lstm, got architecture ",
                          architecture_name(architecture));
    }
    if (num_features == 0) fail<ConfigError>(where, ": a forecaster needs num_features > 0 (values per step), got 0");
    if (horizon == 0) fail<ConfigError>(where, ": a forecaster needs horizon > 0 (steps to forecast), got 0");
    if (positional == PositionalKind::time) {
        if (time_periods.empty()) fail<ConfigError>(where, ": pe time needs at least one time period, got none");
        for (std::size_t k = 0; k < time_periods.size(); ++k) {
            if (time_periods[k] == 0) fail<ConfigError>(where, ": time period ", k, " must be positive, got 0");
        }
    }
    if (positional == PositionalKind::time && architecture == Architecture::transformer && d_model % 2 != 0) {
        fail<ConfigError>(where, ": pe time adds the sinusoidal table, which needs an even d_model, got ", d_model);
    }
    // The forecaster's blocks run without dropout and its head has no tied weights or CLS token:
    // asking for them is refused rather than ignored.
    if (dropout != 0.0f) fail<ConfigError>(where, ": a forecaster has no dropout, got dropout ", dropout);
    if (tie_weights || pooling == Pooling::cls) {
        fail<ConfigError>(where, ": a forecaster reads its last step; tie_weights and pooling cls do not apply");
    }
}

void ModelConfig::validate_image() const {
    constexpr const char* where = "ModelConfig";
    const std::string arch(architecture_name(architecture));
    if (kind != ModelKind::encoder) fail<ConfigError>(where, ": a ", arch, " model classifies images; kind must be encoder");
    if (num_classes == 0) fail<ConfigError>(where, ": an encoder needs num_classes > 0, got 0");
    if (image_size == 0 || patch_size == 0) {
        fail<ConfigError>(where, ": a ", arch, " model needs image_size and patch_size > 0, got image_size ", image_size,
                          ", patch_size ", patch_size);
    }
    if (image_size % patch_size != 0) {
        fail<ConfigError>(where, ": patch_size (", patch_size, ") must divide image_size (", image_size, ")");
    }
    if (d_model == 0 || num_layers == 0 || num_heads == 0 || ff_dim == 0) {
        fail<ConfigError>(where, ": d_model, num_layers, num_heads and ff_dim must be positive, got ", d_model, ", ",
                          num_layers, ", ", num_heads, ", ", ff_dim);
    }
    if (d_model % num_heads != 0) {
        fail<ConfigError>(where, ": d_model (", d_model, ") must be divisible by num_heads (", num_heads, ")");
    }
    if (num_kv_heads != 0 && num_kv_heads != num_heads) {
        fail<ConfigError>(where, ": a ", arch, " model has plain multi-head attention; num_kv_heads must be 0, got ",
                          num_kv_heads);
    }
    if (positional == PositionalKind::rope) {
        fail<ConfigError>(where, ": a ", arch, " model adds its positions to the patches; pe must be none, sinusoidal "
                          "or learned, got rope");
    }
    if (positional == PositionalKind::sinusoidal && d_model % 4 != 0) {
        fail<ConfigError>(where, ": the 2-D sinusoidal positions need d_model % 4 == 0, got d_model ", d_model);
    }
    if (dropout != 0.0f) fail<ConfigError>(where, ": a ", arch, " model has no dropout, got dropout ", dropout);
    if (tie_weights) fail<ConfigError>(where, ": tie_weights applies to decoders only");
    if (attention_window != 0 || global_tokens != 0 || !causal) {
        fail<ConfigError>(where, ": a ", arch, " model sees every patch (of its window); attention_window, "
                          "global_tokens and no-causal do not apply, got window ", attention_window,
                          ", global_tokens ", global_tokens);
    }
    if (attention_scale && !(std::isfinite(*attention_scale) && *attention_scale > 0.0f)) {
        fail<ConfigError>(where, ": attention_scale must be a positive finite number, got ", *attention_scale);
    }
    // The image models run softmax attention in fp32 with separate projections: the variants,
    // normalisers, tied projections and precision emulation are not wired through their blocks,
    // so asking for them is refused rather than silently ignored.
    if (variant != AttentionVariant::full || normalizer != Normalizer::softmax || tie_qk ||
        !precision_options().is_plain()) {
        fail<ConfigError>(where, ": a ", arch, " model runs full softmax attention in fp32; got variant ",
                          attention_variant_name(variant), ", normalizer ", normalizer_name(normalizer), ", tie_qk ",
                          tie_qk ? "true" : "false", ", precision ", precision_name(precision),
                          stable_softmax ? "" : " (unstable softmax)");
    }
    if (architecture == Architecture::vit) return;
    if (pooling == Pooling::cls) fail<ConfigError>(where, ": a swin model pools by the mean; pooling cls does not apply");
    if (swin_window == 0) fail<ConfigError>(where, ": swin_window must be positive, got 0");
    for (const SwinStage& stage : swin_stages()) {
        if (stage.grid % stage.window != 0) {
            fail<ConfigError>(where, ": swin_window (", swin_window, ") must divide the patch grid at every stage, "
                              "got a grid of ", stage.grid, " patches per side");
        }
        if (stage.shifted && stage.window % 2 != 0) {
            fail<ConfigError>(where, ": a shifted window moves by M/2; swin_window must be even, got ", stage.window);
        }
    }
}

void ModelConfig::validate_crossmodal() const {
    constexpr const char* where = "ModelConfig";
    if (vocab_size == 0) {
        fail<ConfigError>(where, ": a crossmodal model reads captions; vocab_size must be positive, got 0 (a paired "
                          "task such as caption_match sets it)");
    }
    // Each encoder is checked as the model it is (the text encoder as a transformer encoder, the
    // image encoder as a vit), then what joins them.
    crossmodal_text_config().validate();
    crossmodal_image_config().validate();
    if (pooling != Pooling::mean) {
        fail<ConfigError>(where, ": a crossmodal model pools its words by the mean; pooling cls does not apply");
    }
    if (dropout != 0.0f) fail<ConfigError>(where, ": a crossmodal model has no dropout, got dropout ", dropout);
    if (common_width() % num_heads != 0) {
        fail<ConfigError>(where, ": the common width E (embed_dim ", embed_dim, ", 0 = d_model ", d_model,
                          ") must be divisible by num_heads (", num_heads, ")");
    }
    if (!(std::isfinite(clip_temperature) && clip_temperature > 0.0f)) {
        fail<ConfigError>(where, ": clip_temperature must be a positive finite number, got ", clip_temperature);
    }
}

}  // namespace attnlab
