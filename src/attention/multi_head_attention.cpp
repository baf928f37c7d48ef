#include "attnlab/attention/multi_head_attention.hpp"

#include <cmath>

#include "attnlab/attention/heads.hpp"

namespace attnlab {

void MultiHeadAttentionConfig::validate() const {
    constexpr const char* where = "MultiHeadAttention";
    if (d_model == 0) fail<ConfigError>(where, ": d_model must be positive, got 0");
    if (num_heads == 0) fail<ConfigError>(where, ": num_heads must be positive, got 0");
    if (d_model % num_heads != 0) {
        fail<ConfigError>(where, ": d_model (", d_model, ") must be divisible by num_heads (", num_heads, ")");
    }
    if (num_heads % kv_heads() != 0) {
        fail<ConfigError>(where, ": num_heads (", num_heads, ") must be divisible by num_kv_heads (", kv_heads(), ")");
    }
}

namespace {
// Xavier/Glorot uniform: U(±sqrt(6 / (fan_in + fan_out))).
void xavier_uniform(Tensor2& w, Rng& rng) {
    const float bound = std::sqrt(6.0f / static_cast<float>(w.shape(0) + w.shape(1)));
    for (auto& x : w) x = rng.uniform(-bound, bound);
}
void zero(Tensor1& b) { std::fill(b.begin(), b.end(), 0.0f); }

// x: (B, N, W) -> (B, N, out) through `proj`.
Tensor3 project(const Linear& proj, const Tensor3& x) {
    Tensor3 y = Tensor3::from_shape({x.shape(0), x.shape(1), proj.out_features()});
    proj.forward(x.data(), x.shape(0) * x.shape(1), y.data());
    return y;
}

// Reports each (batch, head) slice of t: (B, H, N, D) as `stage`.
void observe_heads(StageObserver* observer, Stage stage, const Tensor4& t) {
    if (!observer || !observer->wants(stage)) return;
    const std::size_t n = t.shape(2), d = t.shape(3);
    for (std::size_t b = 0; b < t.shape(0); ++b)
        for (std::size_t h = 0; h < t.shape(1); ++h)
            observe(observer, stage, b, static_cast<std::ptrdiff_t>(h), n, d, d,
                    t.data() + (b * t.shape(1) + h) * n * d);
}

// Reports each batch row of t: (B, N, W) as `stage` with head -1.
void observe_rows(StageObserver* observer, Stage stage, const Tensor3& t) {
    if (!observer || !observer->wants(stage)) return;
    const std::size_t n = t.shape(1), w = t.shape(2);
    for (std::size_t b = 0; b < t.shape(0); ++b) observe(observer, stage, b, -1, n, w, w, t.data() + b * n * w);
}
}  // namespace

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionConfig& config, Rng& rng) : config_(config) {
    config_.validate();
    const std::size_t c = config_.d_model, kv_width = config_.kv_heads() * config_.head_dim();
    q_proj = Linear(c, c, config_.bias, rng);
    k_proj = Linear(config_.memory_dim(), kv_width, config_.bias, rng);
    v_proj = Linear(config_.memory_dim(), kv_width, config_.bias, rng);
    out_proj = Linear(c, c, config_.bias, rng);
    for (Linear* p : {&q_proj, &k_proj, &v_proj}) {
        xavier_uniform(p->weight, rng);
        zero(p->bias);
    }
    zero(out_proj.bias);
}

Tensor3 MultiHeadAttention::forward(const Tensor3& x, const Tensor3* memory, const AttentionOptions& options,
                                    StageObserver* observer, MultiHeadAttentionCache* cache) const {
    constexpr const char* where = "MultiHeadAttention::forward";
    const auto c = static_cast<std::ptrdiff_t>(config_.d_model);
    require_shape(x, {-1, -1, c}, where, "x (B, T, C)");
    const Tensor3& source = memory ? *memory : x;
    if (memory) {
        require_shape(*memory, {static_cast<std::ptrdiff_t>(x.shape(0)), -1,
                                static_cast<std::ptrdiff_t>(config_.memory_dim())},
                      where, "memory (B, S, Ckv)");
    }
    if (options.check_finite) {
        require_finite(x, where, "x");
        if (memory) require_finite(*memory, where, "memory");
    }
    const std::size_t batch = x.shape(0), t = x.shape(1), s = source.shape(1);
    options.mask.validate(batch, t, s, where);
    if (options.rope && config_.head_dim() % 2 != 0) {
        fail<ConfigError>(where, ": RoPE needs an even head dimension, got d_model ", config_.d_model, " / ",
                          config_.num_heads, " heads = ", config_.head_dim());
    }

    observe_rows(observer, Stage::x, x);
    Tensor4 q = split_heads(project(q_proj, x), config_.num_heads);            // (B, H, T, D)
    Tensor4 k = split_heads(project(k_proj, source), config_.kv_heads());      // (B, Hkv, S, D)
    Tensor4 v = split_heads(project(v_proj, source), config_.kv_heads());      // (B, Hkv, S, D)
    observe_heads(observer, Stage::q, q);
    observe_heads(observer, Stage::k, k);
    observe_heads(observer, Stage::v, v);
    if (options.rope) {
        // Queries sit at offset .. offset+T-1; keys of self-attention at the same positions,
        // keys of cross-attention at 0 .. S-1 of their own sequence.
        apply_rope(q, options.position_offset, options.rope_base);
        apply_rope(k, memory ? 0 : options.position_offset, options.rope_base);
        observe_heads(observer, Stage::q_rot, q);
        observe_heads(observer, Stage::k_rot, k);
    }
    const Tensor4 context = scaled_dot_product_attention(q, k, v, options.mask, options.scale, observer,
                                                         cache ? &cache->attention : nullptr);  // (B, H, T, D)
    Tensor3 concat = merge_heads(context);                                                     // (B, T, C)
    observe_rows(observer, Stage::concat, concat);
    Tensor3 out = project(out_proj, concat);                                                   // (B, T, C)
    observe_rows(observer, Stage::output, out);
    if (cache) {
        cache->x = x;
        cache->memory = memory ? *memory : Tensor3();
        cache->q = std::move(q);
        cache->k = std::move(k);
        cache->v = std::move(v);
        cache->concat = std::move(concat);
    }
    return out;
}

Tensor2 MultiHeadAttention::forward(const Tensor2& x, const Tensor2* memory, const AttentionOptions& options,
                                    StageObserver* observer) const {
    const auto as_batch = [](const Tensor2& m) {
        Tensor3 b = Tensor3::from_shape({1, m.shape(0), m.shape(1)});
        std::copy(m.begin(), m.end(), b.begin());
        return b;
    };
    const Tensor3 xb = as_batch(x);
    Tensor3 mb;
    if (memory) mb = as_batch(*memory);
    const Tensor3 out = forward(xb, memory ? &mb : nullptr, options, observer);
    Tensor2 y = Tensor2::from_shape({out.shape(1), out.shape(2)});
    std::copy(out.begin(), out.end(), y.begin());
    return y;
}

std::vector<ParameterView> MultiHeadAttention::parameters(const std::string& prefix) {
    std::vector<ParameterView> out;
    const std::pair<const char*, Linear*> layers[] = {
        {"q_proj", &q_proj}, {"k_proj", &k_proj}, {"v_proj", &v_proj}, {"out_proj", &out_proj}};
    for (const auto& [name, layer] : layers) {
        out.push_back(view_of(prefix + name + ".weight", layer->weight));
        if (layer->has_bias()) out.push_back(view_of(prefix + name + ".bias", layer->bias));
    }
    return out;
}

}  // namespace attnlab
