// ModelConfig's fields (model/config.hpp): the views the layers read (attention_config,
// scale_options, precision_options, swin_stages, a crossmodal model's two encoders) and the
// checkpoint metadata (to_metadata / from_metadata), both from the field table.
#include <algorithm>

#include "attnlab/model/config.hpp"

namespace attnlab {

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
