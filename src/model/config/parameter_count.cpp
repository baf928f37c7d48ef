// ModelConfig::parameter_count (model/config.hpp): a model's size from its config alone, in
// the order its parameters() lists them (tested equal to the built model's count for every
// architecture).
#include <vector>

#include "attnlab/model/config.hpp"

namespace attnlab {

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
        n += num_layers * (2 * c + attention + (attention_only ? 0 : 2 * c + feed_forward));  // ln1, attn, ln2, ffn
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

}  // namespace attnlab
