#include "attnlab/model/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace attnlab {

namespace {
template <class Enum, std::size_t N>
Enum enum_from_name(std::string_view name, const Enum (&all)[N], std::string_view (*to_name)(Enum),
                    const char* what) {
    std::string valid;
    for (Enum e : all) {
        if (to_name(e) == name) return e;
        valid += (valid.empty() ? "" : ", ") + std::string(to_name(e));
    }
    fail<ConfigError>("ModelConfig: unknown ", what, " '", name, "'; valid: ", valid);
}

constexpr ModelKind kKinds[] = {ModelKind::encoder, ModelKind::decoder, ModelKind::forecaster};
constexpr NormPlacement kNorms[] = {NormPlacement::pre, NormPlacement::post};
constexpr Pooling kPoolings[] = {Pooling::mean, Pooling::cls};
constexpr Architecture kArchitectures[] = {Architecture::transformer, Architecture::lstm, Architecture::vit,
                                           Architecture::swin, Architecture::crossmodal};
constexpr PairLoss kPairLosses[] = {PairLoss::match, PairLoss::clip};

[[noreturn]] void bad_value(const char* where, const char* key, const char* expected, const std::string& text) {
    fail<ConfigError>(where, ": ", key, " must be ", expected, ", got '", text, "'");
}

}  // namespace

std::string_view model_kind_name(ModelKind kind) {
    switch (kind) {
        case ModelKind::encoder: return "encoder";
        case ModelKind::decoder: return "decoder";
        case ModelKind::forecaster: return "forecaster";
    }
    return "decoder";
}
ModelKind model_kind_from_name(std::string_view name) { return enum_from_name(name, kKinds, model_kind_name, "kind"); }
std::string_view norm_placement_name(NormPlacement norm) { return norm == NormPlacement::pre ? "pre" : "post"; }
NormPlacement norm_placement_from_name(std::string_view name) {
    return enum_from_name(name, kNorms, norm_placement_name, "norm");
}
std::string_view pooling_name(Pooling pooling) { return pooling == Pooling::mean ? "mean" : "cls"; }
Pooling pooling_from_name(std::string_view name) { return enum_from_name(name, kPoolings, pooling_name, "pooling"); }

std::string_view architecture_name(Architecture architecture) {
    switch (architecture) {
        case Architecture::transformer: return "transformer";
        case Architecture::lstm: return "lstm";
        case Architecture::vit: return "vit";
        case Architecture::swin: return "swin";
        case Architecture::crossmodal: return "crossmodal";
    }
    return "transformer";
}
Architecture architecture_from_name(std::string_view name) {
    return enum_from_name(name, kArchitectures, architecture_name, "architecture");
}

std::string_view pair_loss_name(PairLoss loss) { return loss == PairLoss::match ? "match" : "clip"; }
PairLoss pair_loss_from_name(std::string_view name) { return enum_from_name(name, kPairLosses, pair_loss_name, "loss"); }

ModelConfig ModelConfig::crossmodal_text_config() const {
    ModelConfig c = *this;
    c.architecture = Architecture::transformer;
    return c;
}

ModelConfig ModelConfig::crossmodal_image_config() const {
    ModelConfig c = *this;
    c.architecture = Architecture::vit;
    c.positional = PositionalKind::learned;
    return c;
}

MultiHeadAttentionConfig ModelConfig::attention_config() const {
    MultiHeadAttentionConfig c;
    c.d_model = d_model;
    c.num_heads = num_heads;
    c.num_kv_heads = num_kv_heads;
    c.bias = bias;
    c.tie_qk = tie_qk;
    return c;
}

ScaleOptions ModelConfig::scale_options() const {
    ScaleOptions s;
    s.enabled = scale_attention;
    s.factor = attention_scale;
    return s;
}

std::vector<SwinStage> ModelConfig::swin_stages() const {
    std::vector<SwinStage> stages;
    if (architecture != Architecture::swin || swin_window == 0 || patch_grid() == 0 || patch_size == 0 ||
        image_size % patch_size != 0) {
        return stages;
    }
    std::size_t grid = patch_grid(), width = d_model, heads = num_heads, ff = ff_dim;
    for (;;) {
        const std::size_t window = std::min(swin_window, grid);
        stages.push_back({grid, width, heads, ff, window, window < grid});
        if (grid <= swin_window || grid % 2 != 0) break;
        grid /= 2;
        width *= 2;
        heads *= 2;
        ff *= 2;
    }
    return stages;
}

void ModelConfig::validate() const {
    constexpr const char* where = "ModelConfig";
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
        // The attention and feed-forward fields do not exist in an LSTM and are ignored; these
        // would change what a Transformer computes and an LSTM cannot honour them, so a run
        // asking for them is refused rather than silently trained without.
        if (dropout != 0.0f) fail<ConfigError>(where, ": an lstm has no dropout, got dropout ", dropout);
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

std::uint64_t ModelConfig::parameter_count() const {
    // In long double (64-bit mantissa on x86, double in WebAssembly) to detect a count beyond 64 bits.
    const long double v = vocab_size, c = d_model, b = bias ? 1 : 0;
    if (is_image()) return image_parameter_count();
    if (is_crossmodal()) return crossmodal_parameter_count();
    // tok_emb (V, C), or a forecaster's value_proj (C, F_in) and its bias
    long double n = is_forecaster() ? c * forecast_input_width() + b * c : v * c;
    if (architecture == Architecture::lstm) {
        // Layer k: weight_ih (4C, C), weight_hh (4C, C), with bias two (4C): the input width is C
        // at every layer because the embedding is C wide.
        n += num_layers * (2 * (4 * c * c) + b * 2 * (4 * c));
    } else {
        const long double f = ff_dim, kv = kv_heads() * head_dim();
        // q, out: (C, C); k, v: (Hkv·D, C); with tie_qk no k of its own
        const long double attention = (c * c + b * c) * 2 + (c * kv + b * kv) * (tie_qk ? 1 : 2);
        const long double feed_forward = (f * c + b * f) + (c * f + b * c);          // fc1 (F, C), fc2 (C, F)
        n += num_layers * (2 * c + attention + 2 * c + feed_forward);               // ln1, attn, ln2, ffn
        if (positional == PositionalKind::learned) n += static_cast<long double>(max_len) * c;
        if (norm == NormPlacement::pre) n += 2 * c;  // ln_f
        if (kind == ModelKind::encoder && pooling == Pooling::cls) n += c;
    }
    if (is_forecaster()) {
        n += horizon * c + b * horizon;  // head (horizon, C)
    } else if (kind == ModelKind::encoder) {
        n += num_classes * c + b * num_classes;  // head (K, C)
    } else if (!tie_weights) {
        n += v * c;  // head (V, C), no bias
    }
    if (n >= 18446744073709551616.0L) {
        fail<ConfigError>("ModelConfig::parameter_count: ", static_cast<double>(n), " parameters do not fit in 64 bits");
    }
    return static_cast<std::uint64_t>(n);
}

std::uint64_t ModelConfig::image_parameter_count() const {
    const long double b = bias ? 1 : 0, p = static_cast<long double>(patch_size) * patch_size;
    const long double c = d_model, patches = static_cast<long double>(patch_grid()) * patch_grid();
    const bool cls = architecture == Architecture::vit && pooling == Pooling::cls;
    long double n = c * p + c;  // patch_emb.proj (C, P·P), always with its bias (a convolution's)
    if (positional == PositionalKind::learned) n += (patches + (cls ? 1 : 0)) * c;
    if (cls) n += c;
    // A block of width w, h heads, feed-forward f: ln1, q/k/v/out (w, w), ln2, fc1, fc2.
    const auto block = [&](long double w, long double f) {
        return 2 * w + 4 * (w * w + b * w) + 2 * w + (f * w + b * f) + (w * f + b * w);
    };
    long double last = c;
    if (architecture == Architecture::vit) {
        n += num_layers * block(c, ff_dim);
    } else {
        const std::vector<SwinStage> stages = swin_stages();
        for (std::size_t k = 0; k < stages.size(); ++k) {
            const SwinStage& s = stages[k];
            const long double w = s.width, m = 2.0L * s.window - 1;
            n += num_layers * (block(w, s.ff_dim) + m * m * s.heads);  // + rel_pos_table
            if (k + 1 < stages.size()) n += 2 * 4 * w + 4 * w * 2 * w;  // merge: norm (4C), reduction (2C, 4C)
            last = w;
        }
    }
    if (norm == NormPlacement::pre) n += 2 * last;  // ln_f
    n += num_classes * last + b * num_classes;      // head (K, C_last)
    if (n >= 18446744073709551616.0L) {
        fail<ConfigError>("ModelConfig::parameter_count: ", static_cast<double>(n), " parameters do not fit in 64 bits");
    }
    return static_cast<std::uint64_t>(n);
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

std::uint64_t ModelConfig::crossmodal_parameter_count() const {
    const long double b = bias ? 1 : 0, c = d_model, e = common_width(), f = ff_dim, k = num_classes;
    const long double encoder_head = k * c + b * k;  // each encoder's config counts a head it does not have
    long double n = static_cast<long double>(crossmodal_text_config().parameter_count()) - encoder_head;
    n += static_cast<long double>(crossmodal_image_config().parameter_count()) - encoder_head;
    n += 2 * (e * c + b * e);                                                 // text_proj, image_proj (E, C)
    n += 2 * e + 4 * (e * e + b * e) + 2 * e + (f * e + b * f) + (e * f + b * e);  // cross block
    n += k * e + b * k;                                                       // head (K, E)
    if (n >= 18446744073709551616.0L) {
        fail<ConfigError>("ModelConfig::parameter_count: ", static_cast<double>(n), " parameters do not fit in 64 bits");
    }
    return static_cast<std::uint64_t>(n);
}

std::string format_field(std::size_t value) { return std::to_string(value); }
std::string format_field(bool value) { return value ? "true" : "false"; }
std::string format_field(float value) {
    std::ostringstream out;
    out.precision(9);
    out << value;
    return out.str();
}
std::string format_field(const std::optional<float>& value) { return value ? format_field(*value) : "none"; }
std::string format_field(ModelKind value) { return std::string(model_kind_name(value)); }
std::string format_field(Activation value) { return std::string(activation_name(value)); }
std::string format_field(PositionalKind value) { return std::string(positional_name(value)); }
std::string format_field(NormPlacement value) { return std::string(norm_placement_name(value)); }
std::string format_field(Pooling value) { return std::string(pooling_name(value)); }
std::string format_field(Architecture value) { return std::string(architecture_name(value)); }
std::string format_field(AttentionVariant value) { return std::string(attention_variant_name(value)); }
std::string format_field(Normalizer value) { return std::string(normalizer_name(value)); }
std::string format_field(Precision value) { return std::string(precision_name(value)); }
std::string format_field(SoftmaxPrecision value) { return std::string(softmax_precision_name(value)); }
std::string format_field(PairLoss value) { return std::string(pair_loss_name(value)); }
std::string format_field(const std::vector<std::size_t>& value) {
    std::string out;
    for (std::size_t v : value) out += (out.empty() ? "" : ",") + std::to_string(v);
    return out;
}

void parse_field(const char* where, const char* key, const std::string& text, std::size_t& out) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || text[0] == '+' || *end != '\0' || errno == ERANGE ||
        static_cast<std::size_t>(n) != n) {  // beyond a 32-bit size_t (WebAssembly)
        bad_value(where, key, "a non-negative integer", text);
    }
    out = static_cast<std::size_t>(n);
}
void parse_field(const char* where, const char* key, const std::string& text, bool& out) {
    if (text != "true" && text != "false") bad_value(where, key, "'true' or 'false'", text);
    out = text == "true";
}
void parse_field(const char* where, const char* key, const std::string& text, float& out) {
    char* end = nullptr;
    errno = 0;
    const float x = std::strtof(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x)) bad_value(where, key, "a finite number", text);
    out = x;
}
void parse_field(const char* where, const char* key, const std::string& text, std::optional<float>& out) {
    if (text == "none") {
        out.reset();
        return;
    }
    float x = 0.0f;
    parse_field(where, key, text, x);
    out = x;
}
// The enum name functions throw ConfigError listing the valid names.
void parse_field(const char*, const char*, const std::string& text, ModelKind& out) { out = model_kind_from_name(text); }
void parse_field(const char*, const char*, const std::string& text, Activation& out) { out = activation_from_name(text); }
void parse_field(const char*, const char*, const std::string& text, PositionalKind& out) { out = positional_from_name(text); }
void parse_field(const char*, const char*, const std::string& text, NormPlacement& out) { out = norm_placement_from_name(text); }
void parse_field(const char*, const char*, const std::string& text, Pooling& out) { out = pooling_from_name(text); }
void parse_field(const char*, const char*, const std::string& text, Architecture& out) {
    out = architecture_from_name(text);
}
void parse_field(const char*, const char*, const std::string& text, AttentionVariant& out) {
    out = attention_variant_from_name(text);
}
void parse_field(const char*, const char*, const std::string& text, Normalizer& out) { out = normalizer_from_name(text); }
void parse_field(const char*, const char*, const std::string& text, Precision& out) {
    out = precision_from_name(text);
}
void parse_field(const char*, const char*, const std::string& text, PairLoss& out) { out = pair_loss_from_name(text); }
void parse_field(const char*, const char*, const std::string& text, SoftmaxPrecision& out) {
    out = softmax_precision_from_name(text);
}

void parse_field(const char* where, const char* key, const std::string& text, std::vector<std::size_t>& out) {
    std::vector<std::size_t> values;
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        if (comma + 1 == text.size()) bad_value(where, key, "a comma-separated list of non-negative integers", text);
        parse_field(where, key, text.substr(start, comma - start), values.emplace_back());
        start = comma + 1;
    }
    out = std::move(values);
}

PrecisionOptions ModelConfig::precision_options() const {
    PrecisionOptions p;
    p.format = precision;
    p.softmax = softmax_precision;
    p.stable_softmax = stable_softmax;
    return p;
}

std::map<std::string, std::string> ModelConfig::to_metadata() const {
    std::map<std::string, std::string> out;
    for_each_field([&](const ModelConfigField& field, const auto& value) { out[field.name] = format_field(value); });
    return out;
}

ModelConfig ModelConfig::from_metadata(const std::map<std::string, std::string>& metadata) {
    constexpr const char* where = "ModelConfig::from_metadata";
    std::string unknown, missing;
    for (const auto& [key, value] : metadata) {
        bool known = false;
        for (const ModelConfigField& field : kModelConfigFields) known = known || key == field.name;
        if (!known) unknown += (unknown.empty() ? "" : ", ") + key;
    }
    for (const ModelConfigField& field : kModelConfigFields) {
        if (metadata.count(field.name) == 0 && !(field.flags & kOptionalKey)) {
            missing += (missing.empty() ? "" : ", ") + std::string(field.name);
        }
    }
    if (!unknown.empty()) fail<ConfigError>(where, ": unknown keys: ", unknown);
    if (!missing.empty()) fail<ConfigError>(where, ": missing keys: ", missing);

    ModelConfig c;
    c.for_each_field([&](const ModelConfigField& field, auto& value) {
        const auto it = metadata.find(field.name);
        if (it != metadata.end()) parse_field(where, field.name, it->second, value);
    });
    c.validate();
    return c;
}

}  // namespace attnlab
