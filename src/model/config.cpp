#include "attnlab/model/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

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

constexpr ModelKind kKinds[] = {ModelKind::encoder, ModelKind::decoder};
constexpr NormPlacement kNorms[] = {NormPlacement::pre, NormPlacement::post};
constexpr Pooling kPoolings[] = {Pooling::mean, Pooling::cls};

std::string format_float(float x) {
    std::ostringstream out;
    out.precision(9);
    out << x;
    return out.str();
}
const char* format_bool(bool b) { return b ? "true" : "false"; }

// The field names in to_metadata order (also the set from_metadata requires).
const std::vector<std::string>& metadata_keys() {
    static const std::vector<std::string> keys = {
        "kind",    "vocab_size", "max_len",   "d_model", "num_heads",       "num_kv_heads",    "num_layers",
        "ff_dim",  "activation", "positional", "norm",   "scale_attention", "attention_scale", "dropout",
        "tie_weights", "pooling", "num_classes", "bias", "gradient_checkpointing", "causal",
        "attention_window", "global_tokens"};
    return keys;
}

std::size_t parse_size(const std::string& key, const std::string& value) {
    const char* begin = value.c_str();
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(begin, &end, 10);
    if (value.empty() || value[0] == '-' || value[0] == '+' || *end != '\0' || errno == ERANGE) {
        fail<ConfigError>("ModelConfig::from_metadata: ", key, " must be a non-negative integer, got '", value, "'");
    }
    return static_cast<std::size_t>(n);
}

float parse_float(const std::string& key, const std::string& value) {
    const char* begin = value.c_str();
    char* end = nullptr;
    errno = 0;
    const float x = std::strtof(begin, &end);
    if (value.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x)) {
        fail<ConfigError>("ModelConfig::from_metadata: ", key, " must be a finite number, got '", value, "'");
    }
    return x;
}

bool parse_bool(const std::string& key, const std::string& value) {
    if (value == "true") return true;
    if (value == "false") return false;
    fail<ConfigError>("ModelConfig::from_metadata: ", key, " must be 'true' or 'false', got '", value, "'");
}
}  // namespace

std::string_view model_kind_name(ModelKind kind) { return kind == ModelKind::encoder ? "encoder" : "decoder"; }
ModelKind model_kind_from_name(std::string_view name) { return enum_from_name(name, kKinds, model_kind_name, "kind"); }
std::string_view norm_placement_name(NormPlacement norm) { return norm == NormPlacement::pre ? "pre" : "post"; }
NormPlacement norm_placement_from_name(std::string_view name) {
    return enum_from_name(name, kNorms, norm_placement_name, "norm");
}
std::string_view pooling_name(Pooling pooling) { return pooling == Pooling::mean ? "mean" : "cls"; }
Pooling pooling_from_name(std::string_view name) { return enum_from_name(name, kPoolings, pooling_name, "pooling"); }

MultiHeadAttentionConfig ModelConfig::attention_config() const {
    MultiHeadAttentionConfig c;
    c.d_model = d_model;
    c.num_heads = num_heads;
    c.num_kv_heads = num_kv_heads;
    c.bias = bias;
    return c;
}

ScaleOptions ModelConfig::scale_options() const {
    ScaleOptions s;
    s.enabled = scale_attention;
    s.factor = attention_scale;
    return s;
}

void ModelConfig::validate() const {
    constexpr const char* where = "ModelConfig";
    if (vocab_size == 0) fail<ConfigError>(where, ": vocab_size must be positive, got 0");
    if (max_len == 0) fail<ConfigError>(where, ": max_len must be positive, got 0");
    if (d_model == 0) fail<ConfigError>(where, ": d_model must be positive, got 0");
    if (num_heads == 0) fail<ConfigError>(where, ": num_heads must be positive, got 0");
    if (num_layers == 0) fail<ConfigError>(where, ": num_layers must be positive, got 0");
    if (ff_dim == 0) fail<ConfigError>(where, ": ff_dim must be positive, got 0");
    if (d_model % num_heads != 0) {
        fail<ConfigError>(where, ": d_model (", d_model, ") must be divisible by num_heads (", num_heads, ")");
    }
    if (num_heads % kv_heads() != 0) {
        fail<ConfigError>(where, ": num_heads (", num_heads, ") must be divisible by num_kv_heads (", kv_heads(), ")");
    }
    if (positional == PositionalKind::rope && head_dim() % 2 != 0) {
        fail<ConfigError>(where, ": rope needs an even head dimension, got d_model ", d_model, " / num_heads ",
                          num_heads, " = ", head_dim());
    }
    if (!(dropout >= 0.0f && dropout < 1.0f)) fail<ConfigError>(where, ": dropout must be in [0, 1), got ", dropout);
    if (attention_scale && !(std::isfinite(*attention_scale) && *attention_scale > 0.0f)) {
        fail<ConfigError>(where, ": attention_scale must be a positive finite number, got ", *attention_scale);
    }
    if (kind == ModelKind::encoder) {
        if (num_classes == 0) fail<ConfigError>(where, ": an encoder needs num_classes > 0, got 0");
        if (tie_weights) fail<ConfigError>(where, ": tie_weights applies to decoders only (kind is encoder)");
    }
}

std::map<std::string, std::string> ModelConfig::to_metadata() const {
    return {
        {"kind", std::string(model_kind_name(kind))},
        {"vocab_size", std::to_string(vocab_size)},
        {"max_len", std::to_string(max_len)},
        {"d_model", std::to_string(d_model)},
        {"num_heads", std::to_string(num_heads)},
        {"num_kv_heads", std::to_string(num_kv_heads)},
        {"num_layers", std::to_string(num_layers)},
        {"ff_dim", std::to_string(ff_dim)},
        {"activation", std::string(activation_name(activation))},
        {"positional", std::string(positional_name(positional))},
        {"norm", std::string(norm_placement_name(norm))},
        {"scale_attention", format_bool(scale_attention)},
        {"attention_scale", attention_scale ? format_float(*attention_scale) : "none"},
        {"dropout", format_float(dropout)},
        {"tie_weights", format_bool(tie_weights)},
        {"pooling", std::string(pooling_name(pooling))},
        {"num_classes", std::to_string(num_classes)},
        {"bias", format_bool(bias)},
        {"gradient_checkpointing", format_bool(gradient_checkpointing)},
        {"causal", format_bool(causal)},
        {"attention_window", std::to_string(attention_window)},
        {"global_tokens", std::to_string(global_tokens)},
    };
}

ModelConfig ModelConfig::from_metadata(const std::map<std::string, std::string>& metadata) {
    constexpr const char* where = "ModelConfig::from_metadata";
    const auto& keys = metadata_keys();
    std::string unknown, missing;
    for (const auto& [key, value] : metadata) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) unknown += (unknown.empty() ? "" : ", ") + key;
    }
    for (const auto& key : keys) {
        // These keys came later; checkpoints written before them are causal decoders with full
        // attention.
        const bool optional = key == "causal" || key == "attention_window" || key == "global_tokens";
        if (metadata.count(key) == 0 && !optional) missing += (missing.empty() ? "" : ", ") + key;
    }
    if (!unknown.empty()) fail<ConfigError>(where, ": unknown keys: ", unknown);
    if (!missing.empty()) fail<ConfigError>(where, ": missing keys: ", missing);

    const auto get = [&](const char* key) -> const std::string& { return metadata.at(key); };
    ModelConfig c;
    c.kind = model_kind_from_name(get("kind"));
    c.vocab_size = parse_size("vocab_size", get("vocab_size"));
    c.max_len = parse_size("max_len", get("max_len"));
    c.d_model = parse_size("d_model", get("d_model"));
    c.num_heads = parse_size("num_heads", get("num_heads"));
    c.num_kv_heads = parse_size("num_kv_heads", get("num_kv_heads"));
    c.num_layers = parse_size("num_layers", get("num_layers"));
    c.ff_dim = parse_size("ff_dim", get("ff_dim"));
    c.activation = activation_from_name(get("activation"));
    c.positional = positional_from_name(get("positional"));
    c.norm = norm_placement_from_name(get("norm"));
    c.scale_attention = parse_bool("scale_attention", get("scale_attention"));
    if (get("attention_scale") != "none") c.attention_scale = parse_float("attention_scale", get("attention_scale"));
    c.dropout = parse_float("dropout", get("dropout"));
    c.tie_weights = parse_bool("tie_weights", get("tie_weights"));
    c.pooling = pooling_from_name(get("pooling"));
    c.num_classes = parse_size("num_classes", get("num_classes"));
    c.bias = parse_bool("bias", get("bias"));
    c.gradient_checkpointing = parse_bool("gradient_checkpointing", get("gradient_checkpointing"));
    if (metadata.count("causal")) c.causal = parse_bool("causal", get("causal"));
    if (metadata.count("attention_window")) c.attention_window = parse_size("attention_window", get("attention_window"));
    if (metadata.count("global_tokens")) c.global_tokens = parse_size("global_tokens", get("global_tokens"));
    c.validate();
    return c;
}

}  // namespace attnlab
