#include "attnlab/attention/multi_head_attention.hpp"

#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/attention/heads.hpp"
#include "attnlab/core/thread_pool.hpp"

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
    if (tie_qk && kv_heads() != num_heads) {
        fail<ConfigError>(where, ": tie_qk needs as many key heads as query heads (W_K = W_Q is (C, C)), got num_heads ",
                          num_heads, " and num_kv_heads ", kv_heads());
    }
    if (tie_qk && memory_dim() != d_model) {
        fail<ConfigError>(where, ": tie_qk needs keys projected from d_model-wide inputs (W_K = W_Q reads C = ",
                          d_model, " features), got cross-attention kv_dim ", kv_dim);
    }
}

namespace {

// The combinations a variant does not define are refused, saying why, rather than computed as
// something else.
void require_variant_supported(const AttentionOptions& options, const char* where) {
    if (options.variant == AttentionVariant::linear) {
        // Linear attention's weights are φ(q)·φ(k) divided by their row sum: there are no scores
        // for a normaliser to act on, and precision emulation rounds the stages of the softmax
        // path only.
        if (options.normalizer != Normalizer::softmax) {
            fail<ConfigError>(where, ": variant linear has no normaliser (its weights are phi(q).phi(k) over their "
                              "row sum); normalizer must be softmax, got ", normalizer_name(options.normalizer));
        }
        if (!options.precision.is_plain()) {
            fail<ConfigError>(where, ": precision emulation runs on the softmax attention path; variant linear "
                              "takes precision fp32 with the stable softmax, got ", precision_name(options.precision.format));
        }
    }
}

// Block-sparse attention is full attention under the layout's mask (attention/block_sparse.hpp):
// options with variant full and options.mask joined by the (rows, S) layout of
// options.block_sparse, its query rows starting at row_offset (the cached length of KV-cached
// generation, whose layout is the whole sequence's: rows = offset + T). Throws ConfigError for
// a block size of 0 and for a sliding window, whose position window and global tokens are a
// different layout (their combination is not defined).
AttentionOptions block_sparse_as_full(const AttentionOptions& options, std::size_t rows, std::size_t s,
                                      std::size_t row_offset, const char* where) {
    options.block_sparse.validate(where);
    if (options.mask.window > 0) {
        fail<ConfigError>(where, ": block_sparse attention with a sliding window (window ", options.mask.window,
                          ") is not defined: the block layout's window_blocks and global_blocks replace it");
    }
    AttentionOptions full = options;
    full.variant = AttentionVariant::full;
    full.mask.block_layout = sparse_layout(rows, s, options.block_sparse, options.mask.causal);
    full.mask.block_size = options.block_sparse.block_size;
    full.mask.block_row_offset = row_offset;
    return full;
}
// Xavier/Glorot uniform: U(±sqrt(6 / (fan_in + fan_out))).
void xavier_uniform(Tensor2& w, Rng& rng) {
    const float bound = std::sqrt(6.0f / static_cast<float>(w.shape(0) + w.shape(1)));
    for (auto& x : w) x = rng.uniform(-bound, bound);
}
void zero(Tensor1& b) { std::fill(b.begin(), b.end(), 0.0f); }

// y = x·Wᵀ + b through `proj`: x (B, N, W) -> y (B, N, out), resized (its buffer is kept when
// the shape is unchanged).
void project_into(const Linear& proj, const Tensor3& x, Tensor3& y) {
    y.resize({x.shape(0), x.shape(1), proj.out_features()});
    proj.forward(x.data(), x.shape(0) * x.shape(1), y.data());
}
Tensor3 project(const Linear& proj, const Tensor3& x) {
    Tensor3 y;
    project_into(proj, x, y);
    return y;
}

// Reports each (batch, head) matrix (N, D) of t as `stage`.
void observe_heads(StageObserver* observer, Stage stage, const ConstHeadsView& t) {
    if (!observer || !observer->wants(stage)) return;
    for (std::size_t b = 0; b < t.batch; ++b)
        for (std::size_t h = 0; h < t.heads; ++h)
            observe(observer, stage, b, static_cast<std::ptrdiff_t>(h), t.n, t.d, t.row_stride, t.head(b, h));
}

// t: (B, Hn, N, D) rounded to `format` one (batch, head) matrix at a time, each reported as
// `stage` with the cells the rounding flushed to zero (float32 rounds nothing).
void round_observe_heads(StageObserver* observer, Stage stage, Precision format, Tensor4& t) {
    const std::size_t heads = t.shape(1), n = t.shape(2), d = t.shape(3);
    FlushedCells cells;
    for (std::size_t b = 0; b < t.shape(0); ++b)
        for (std::size_t h = 0; h < heads; ++h) {
            float* m = t.data() + (b * heads + h) * n * d;  // (N, D)
            const FlushedCells* flushed = round_observed(observer, stage, format, m, n, d, cells);
            observe(observer, stage, b, static_cast<std::ptrdiff_t>(h), n, d, d, m, flushed);
        }
}

// out: (B, N, W) rounded to `format` one batch row at a time, each reported as the output stage
// (head -1) with the cells the rounding flushed to zero.
void round_observe_output(StageObserver* observer, Precision format, Tensor3& out) {
    const std::size_t n = out.shape(1), w = out.shape(2);
    FlushedCells cells;
    for (std::size_t b = 0; b < out.shape(0); ++b) {
        float* m = out.data() + b * n * w;  // (N, W)
        observe(observer, Stage::output, b, -1, n, w, w, m, round_observed(observer, Stage::output, format, m, n, w, cells));
    }
}

// Reports each batch row of t: (B, N, W) as `stage` with head -1.
void observe_rows(StageObserver* observer, Stage stage, const Tensor3& t) {
    if (!observer || !observer->wants(stage)) return;
    const std::size_t n = t.shape(1), w = t.shape(2);
    for (std::size_t b = 0; b < t.shape(0); ++b) observe(observer, stage, b, -1, n, w, w, t.data() + b * n * w);
}

// forward's checks of its inputs, before any work: x (B, T, C); a residual like x and not out;
// memory (B, S, Ckv); finite values when asked; the mask for (B, T, S); the variant's options.
void require_forward_inputs(const MultiHeadAttentionConfig& config, const Tensor3& x, const Tensor3* memory,
                            const AttentionOptions& options, const Tensor3& out, const Tensor3* residual,
                            const char* where) {
    require_shape(x, {-1, -1, static_cast<std::ptrdiff_t>(config.d_model)}, where, "x (B, T, C)");
    if (residual) {
        require_shape_like(*residual, x, where, "residual (B, T, C) like x");
        if (residual == &out) fail<ConfigError>(where, ": the residual must not be the output tensor");
    }
    if (memory) {
        require_shape(*memory, {static_cast<std::ptrdiff_t>(x.shape(0)), -1,
                                static_cast<std::ptrdiff_t>(config.memory_dim())},
                      where, "memory (B, S, Ckv)");
    }
    if (options.check_finite) {
        require_finite(x, where, "x");
        if (memory) require_finite(*memory, where, "memory");
    }
    options.mask.validate(x.shape(0), x.shape(1), memory ? memory->shape(1) : x.shape(1), where);
    require_variant_supported(options, where);
    if (options.variant == AttentionVariant::linear) require_linear_attention_mask(options.mask, where);
}
}  // namespace

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionConfig& config, Rng& rng) : config_(config) {
    config_.validate();
    const std::size_t c = config_.d_model, kv_width = config_.kv_heads() * config_.head_dim();
    q_proj = Linear(c, c, config_.bias, rng);
    if (!config_.tie_qk) k_proj = Linear(config_.memory_dim(), kv_width, config_.bias, rng);
    v_proj = Linear(config_.memory_dim(), kv_width, config_.bias, rng);
    out_proj = Linear(c, c, config_.bias, rng);
    for (Linear* p : {&q_proj, &k_proj, &v_proj}) {
        if (p->weight.size() == 0) continue;  // tie_qk's k_proj
        xavier_uniform(p->weight, rng);
        zero(p->bias);
    }
    zero(out_proj.bias);
}

Tensor3 MultiHeadAttention::forward(const Tensor3& x, const Tensor3* memory, const AttentionOptions& options,
                                    StageObserver* observer, MultiHeadAttentionCache* cache) const {
    Tensor3 out;
    forward(x, memory, options, observer, cache, out);
    return out;
}

void MultiHeadAttention::forward(const Tensor3& x, const Tensor3* memory, const AttentionOptions& options,
                                 StageObserver* observer, MultiHeadAttentionCache* cache, Tensor3& out,
                                 const Tensor3* residual) const {
    constexpr const char* where = "MultiHeadAttention::forward";
    require_forward_inputs(config_, x, memory, options, out, residual, where);
    const std::size_t t = x.shape(1), s = memory ? memory->shape(1) : t;
    if (options.variant == AttentionVariant::block_sparse) {
        forward(x, memory, block_sparse_as_full(options, t, s, 0, where), observer, cache, out, residual);
        return;
    }
    if (options.rope && config_.head_dim() % 2 != 0) {
        fail<ConfigError>(where, ": RoPE needs an even head dimension, got d_model ", config_.d_model, " / ",
                          config_.num_heads, " heads = ", config_.head_dim());
    }

    // Without a cache the buffers are this call's own; with one they persist in it.
    MultiHeadAttentionCache local;
    MultiHeadAttentionCache& buffers = cache ? *cache : local;
    AttentionCache* attention = cache ? &cache->attention : nullptr;
    observe_rows(observer, Stage::x, x);
    if (options.variant != AttentionVariant::linear && !options.rope &&
        can_use_flash(observer, attention, nullptr, options.precision)) {
        heads_in_rows_attention(x, memory, options, observer, buffers, cache);
    } else {
        split_heads_attention(x, memory, options, observer, buffers, attention);
        if (cache) {
            cache->input.used = false;
            cache->heads_in_rows = false;
            cache->q_rows = cache->k_rows = cache->v_rows = Tensor3();
        }
    }
    // Interpretability hooks may replace heads' outputs here (ablation, patching; inference
    // forwards only: a backward would read the rewritten heads as if computed).
    offer_rewrite(observer, Stage::concat, buffers.concat);
    observe_rows(observer, Stage::concat, buffers.concat);  // merged rounded heads: nothing new to round
    output_projection(buffers.concat, options, observer, residual, out);
    if (cache) {
        copy_into(x, cache->x);  // into the cache's buffer (kept when the shape is unchanged)
        if (memory) copy_into(*memory, cache->memory);
        else cache->memory = Tensor3();
    }
}

// buffers.concat (B, T, C) by the flash path on the heads read in place from the projections'
// rows (buffers.q_rows, .k_rows, .v_rows), the context written straight into the concatenated
// rows: no split_heads or merge_heads. With cache->input.tables (a model's first block, self-
// attention) the projections run over the tables instead of x.
void MultiHeadAttention::heads_in_rows_attention(const Tensor3& x, const Tensor3* memory,
                                                 const AttentionOptions& options, StageObserver* observer,
                                                 MultiHeadAttentionCache& buffers,
                                                 MultiHeadAttentionCache* cache) const {
    constexpr const char* where = "MultiHeadAttention::forward";
    const std::size_t batch = x.shape(0), t = x.shape(1);
    const Tensor3& source = memory ? *memory : x;
    AttentionCache* attention = cache ? &cache->attention : nullptr;
    const TableRows* tables = cache && !memory ? cache->input.tables : nullptr;
    if (tables) {
        if (tables->rows != batch * t || tables->width != x.shape(2) || !tables->a || !tables->ia) {
            fail<ShapeError>(where, ": cache input tables describe ", tables->rows, " rows of width ", tables->width,
                             (tables->a && tables->ia) ? "" : " (no a table or no indices)", ", but x is ",
                             shape_string(x.shape()), " (", batch * t, " rows of width ", x.shape(2), ")");
        }
        // x = the tables' rows (a model's first block): the products run over the tables.
        for (auto [proj, rows] : {std::pair{&q_proj, &buffers.q_rows}, std::pair{&key_proj(), &buffers.k_rows},
                                  std::pair{&v_proj, &buffers.v_rows}}) {
            rows->resize({batch, t, proj->out_features()});
            proj->forward_tables(*tables, rows->data(), buffers.scratch.tables);
        }
    } else {
        project_into(q_proj, x, buffers.q_rows);           // (B, T, C)
        project_into(key_proj(), source, buffers.k_rows);  // (B, S, Hkv·D)
        project_into(v_proj, source, buffers.v_rows);      // (B, S, Hkv·D)
    }
    if (cache) cache->input.used = tables != nullptr;
    const ConstHeadsView q = heads_in_rows(std::as_const(buffers.q_rows), config_.num_heads);
    const ConstHeadsView k = heads_in_rows(std::as_const(buffers.k_rows), config_.kv_heads());
    const ConstHeadsView v = heads_in_rows(std::as_const(buffers.v_rows), config_.kv_heads());
    observe_heads(observer, Stage::q, q);
    observe_heads(observer, Stage::k, k);
    observe_heads(observer, Stage::v, v);
    buffers.concat.resize({batch, t, config_.d_model});
    const HeadsView context = heads_in_rows(buffers.concat, config_.num_heads);  // (B, H, T, D) in (B, T, C)
    flash_attention_forward(q, k, v, options.mask, options.scale, attention ? &attention->logsumexp : nullptr,
                            nullptr, context, attention ? &attention->one_tile_weights : nullptr, options.normalizer);
    observe_heads(observer, Stage::context, context);
    if (cache) {
        attention->flash = true;
        attention->normalizer = options.normalizer;
        attention->weights = Tensor4();
        attention->context = Tensor4();  // it is concat
        attention->mask = options.mask;
        cache->heads_in_rows = true;
        cache->q = cache->k = cache->v = Tensor4();
    }
}

// out (B, T, C) = concat·W_Oᵀ + b_O, plus the residual when given, rounded to the emulated
// format and reported as the output stage.
void MultiHeadAttention::output_projection(const Tensor3& concat, const AttentionOptions& options,
                                           StageObserver* observer, const Tensor3* residual, Tensor3& out) const {
    const std::size_t batch = concat.shape(0), t = concat.shape(1);
    out.resize({batch, t, config_.d_model});
    // The residual is added in W_O's store unless the output stage must be seen without it, or
    // rounded to an emulated format without it (the residual stream is not the layer's).
    const Precision format = options.precision.format;
    const bool show_output = (observer && observer->wants(Stage::output)) || format != Precision::fp32;
    out_proj.forward(concat.data(), batch * t, out.data(),  // (B, T, C)
                     residual && !show_output ? kernels::Epilogue::adding(residual->data()) : kernels::Epilogue{});
    round_observe_output(observer, format, out);
    if (residual && show_output) {
        float* po = out.data();
        const float* pr = residual->data();
        parallel_for(0, out.size(), [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) po[i] += pr[i];  // the same sum as the store's
        });
    }
}

// concat = merge_heads(attention(split_heads(x·W_Qᵀ + b_Q), ...)) with q, k, v kept in
// buffers.q, .k, .v (after RoPE): the path of RoPE and of the recorded (math) attention.
void MultiHeadAttention::split_heads_attention(const Tensor3& x, const Tensor3* memory, const AttentionOptions& options,
                                               StageObserver* observer, MultiHeadAttentionCache& buffers,
                                               AttentionCache* attention) const {
    const Tensor3& source = memory ? *memory : x;
    Tensor3& proj = buffers.scratch.proj;
    // dst = split_heads(src·Wᵀ + b): (B, N, W) -> (B, heads, N, W / heads)
    const auto project_heads = [&](const Linear& layer, const Tensor3& src, std::size_t heads, Tensor4& dst) {
        project_into(layer, src, proj);
        split_heads(proj, heads, dst);
    };
    Tensor4& q = buffers.q;  // (B, H, T, D)
    Tensor4& k = buffers.k;  // (B, Hkv, S, D)
    Tensor4& v = buffers.v;  // (B, Hkv, S, D)
    const Precision format = options.precision.format;
    project_heads(q_proj, x, config_.num_heads, q);
    round_observe_heads(observer, Stage::q, format, q);
    project_heads(key_proj(), source, config_.kv_heads(), k);
    round_observe_heads(observer, Stage::k, format, k);
    project_heads(v_proj, source, config_.kv_heads(), v);
    round_observe_heads(observer, Stage::v, format, v);
    if (options.rope) {
        // Queries sit at offset .. offset+T-1; keys of self-attention at the same positions,
        // keys of cross-attention at 0 .. S-1 of their own sequence.
        apply_rope(q, options.position_offset, options.rope_base);
        round_observe_heads(observer, Stage::q_rot, format, q);
        apply_rope(k, memory ? 0 : options.position_offset, options.rope_base);
        round_observe_heads(observer, Stage::k_rot, format, k);
    }
    if (options.variant == AttentionVariant::linear) {
        // φ(q), φ(k) of the rotated heads; the fast path unless an observer wants the weights.
        linear_attention(q, k, v, options.mask, observer, attention ? &buffers.linear : nullptr,
                         LinearBackend::automatic, buffers.scratch.context);
        merge_heads(buffers.scratch.context, buffers.concat);  // (B, T, C)
        return;
    }
    // The flash path keeps the context in the attention cache: it is written there directly.
    Tensor4& context = attention && can_use_flash(observer, attention, nullptr, options.precision)
                           ? attention->context
                           : buffers.scratch.context;  // (B, H, T, D)
    scaled_dot_product_attention(q, k, v, options.mask, options.scale, observer, attention, SdpBackend::automatic,
                                 context, options.normalizer, options.precision);
    merge_heads(context, buffers.concat);  // (B, T, C)
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
        if (layer == &k_proj && config_.tie_qk) continue;  // it is q_proj
        out.push_back(view_of(prefix + name + ".weight", layer->weight));
        if (layer->has_bias()) out.push_back(view_of(prefix + name + ".bias", layer->bias));
    }
    return out;
}

}  // namespace attnlab

namespace attnlab {

MultiHeadAttentionGrad::MultiHeadAttentionGrad(const MultiHeadAttention& mha)
    : q_proj(mha.q_proj), k_proj(mha.k_proj), v_proj(mha.v_proj), out_proj(mha.out_proj),
      tie_qk(mha.config().tie_qk) {}

void MultiHeadAttentionGrad::zero() {
    for (LinearGrad* g : {&q_proj, &k_proj, &v_proj, &out_proj}) g->zero();
}

std::vector<ParameterView> MultiHeadAttentionGrad::views(const std::string& prefix) {
    std::vector<ParameterView> out;
    const std::pair<const char*, LinearGrad*> layers[] = {
        {"q_proj", &q_proj}, {"k_proj", &k_proj}, {"v_proj", &v_proj}, {"out_proj", &out_proj}};
    for (const auto& [name, grad] : layers) {
        if (grad == &k_proj && tie_qk) continue;  // q_proj holds both uses
        out.push_back(view_of(prefix + name + ".weight", grad->weight));
        if (grad->bias.size() > 0) out.push_back(view_of(prefix + name + ".bias", grad->bias));
    }
    return out;
}

void MultiHeadAttention::backward(const Tensor3& dout, const MultiHeadAttentionCache& cache,
                                  const AttentionOptions& options, MultiHeadAttentionGrad& grads, Tensor3& dx,
                                  Tensor3* dmemory, const Tensor3* residual) const {
    constexpr const char* where = "MultiHeadAttention::backward";
    const bool cross = cache.memory.size() > 0;
    if (cross && !dmemory) fail<ConfigError>(where, ": the forward call was cross-attention; pass dmemory");
    require_shape(dout, {static_cast<std::ptrdiff_t>(cache.x.shape(0)), static_cast<std::ptrdiff_t>(cache.x.shape(1)),
                         static_cast<std::ptrdiff_t>(config_.d_model)},
                  where, "dout (B, T, C) matching the forward input");
    if (residual) {
        require_shape_like(*residual, dout, where, "residual (B, T, C) like dout");
        if (residual == &dx) fail<ConfigError>(where, ": the residual must not be dx");
    }
    const std::size_t batch = cache.x.shape(0), t = cache.x.shape(1);
    // The intermediate gradients live in the cache's scratch: no allocation from step to step.
    MultiHeadAttentionCache::Scratch& w = cache.scratch;
    // out = concat·W_Oᵀ + b_O
    w.dconcat.resize({batch, t, config_.d_model});
    linear_backward(out_proj, cache.concat.data(), batch * t, dout.data(), grads.out_proj, w.dconcat.data());
    round_span(options.precision.format, w.dconcat.data(), w.dconcat.size());
    if (cache.heads_in_rows) heads_in_rows_attention_backward(cache, options);
    else split_heads_attention_backward(cache, options);
    // w.dq_rows (B, T, C), w.dk_rows and w.dv_rows (B, S, Hkv·D) now hold the projections' output gradients.
    if (cache.input.used) input_tables_backward(cache, grads, residual, dx);
    else projections_backward(cache, options, grads, dx, dmemory, residual);
}

// context = flash(q, k, v) on the heads in the projections' rows: their gradients land in rows
// too, scratch.dq_rows, .dk_rows, .dv_rows from scratch.dconcat.
void MultiHeadAttention::heads_in_rows_attention_backward(const MultiHeadAttentionCache& cache,
                                                          const AttentionOptions& options) const {
    constexpr const char* where = "MultiHeadAttention::backward";
    if (options.rope) fail<ConfigError>(where, ": options.rope is set, but the forward call ran without RoPE");
    if (options.variant == AttentionVariant::linear) {
        fail<ConfigError>(where, ": options.variant is linear, but the forward call ran softmax attention");
    }
    MultiHeadAttentionCache::Scratch& w = cache.scratch;
    const Tensor3& source = cache.memory.size() > 0 ? cache.memory : cache.x;
    const std::size_t batch = cache.x.shape(0), t = cache.x.shape(1), s = source.shape(1);
    const std::size_t h = config_.num_heads, hkv = config_.kv_heads(), kv_width = hkv * config_.head_dim();
    w.dq_rows.resize({batch, t, config_.d_model});
    w.dk_rows.resize({batch, s, kv_width});
    w.dv_rows.resize({batch, s, kv_width});
    flash_attention_backward(heads_in_rows(std::as_const(w.dconcat), h), heads_in_rows(cache.q_rows, h),
                             heads_in_rows(cache.k_rows, hkv), heads_in_rows(cache.v_rows, hkv),
                             heads_in_rows(cache.concat, h), cache.attention.logsumexp, cache.attention.mask,
                             options.scale, heads_in_rows(w.dq_rows, h), heads_in_rows(w.dk_rows, hkv),
                             heads_in_rows(w.dv_rows, hkv), nullptr, &cache.attention.one_tile_weights,
                             cache.attention.normalizer);
}

// The backward of split_heads_attention: scratch.dconcat through merge_heads, attention (linear
// or scaled dot-product) and RoPE back to scratch.dq_rows, .dk_rows, .dv_rows.
void MultiHeadAttention::split_heads_attention_backward(const MultiHeadAttentionCache& cache,
                                                        const AttentionOptions& options) const {
    MultiHeadAttentionCache::Scratch& w = cache.scratch;
    const bool cross = cache.memory.size() > 0;
    const Precision format = options.precision.format;
    // concat = merge_heads(context)
    split_heads(w.dconcat, config_.num_heads, w.dcontext);
    // context = attention(q, k, v)
    Tensor4 &dq = w.dq, &dk = w.dk, &dv = w.dv;
    if (options.variant == AttentionVariant::linear) {
        linear_attention_backward(w.dcontext, cache.v, cache.linear, dq, dk, dv);
    } else {
        scaled_dot_product_attention_backward(w.dcontext, cache.q, cache.k, cache.v, cache.attention, options.scale,
                                              dq, dk, dv, options.precision);
    }
    // q, k = rope(q), rope(k): the gradient rotates back by the same angles.
    if (options.rope) {
        apply_rope(dq, options.position_offset, options.rope_base, /*inverse=*/true);
        apply_rope(dk, cross ? 0 : options.position_offset, options.rope_base, /*inverse=*/true);
        round_span(format, dq.data(), dq.size());
        round_span(format, dk.data(), dk.size());
    }
    merge_heads(dq, w.dq_rows);  // (B, T, C)
    merge_heads(dk, w.dk_rows);  // (B, S, Hkv·D)
    merge_heads(dv, w.dv_rows);  // (B, S, Hkv·D)
    ATTNLAB_DEBUG_ASSERT(w.dk_rows.shape(2) == config_.kv_heads() * config_.head_dim());
}

// q, k, v = the tables' rows · W (the forward projected cache.input.tables): their input
// gradient goes to the tables (da, db), and dx is the residual alone.
void MultiHeadAttention::input_tables_backward(const MultiHeadAttentionCache& cache, MultiHeadAttentionGrad& grads,
                                               const Tensor3* residual, Tensor3& dx) const {
    constexpr const char* where = "MultiHeadAttention::backward";
    MultiHeadAttentionCache::Scratch& w = cache.scratch;
    const TableRows& tables = *cache.input.tables;
    if (!tables.da) {
        fail<ConfigError>(where, ": the forward projected cache.input.tables, but its da (where the tables' "
                                 "gradient goes) is null");
    }
    // k = source·W_Kᵀ + b_K: with tie_qk, W_K is W_Q and its gradient adds to q_proj's.
    LinearGrad& key_grad = config_.tie_qk ? grads.q_proj : grads.k_proj;
    for (auto [proj, dy, grad] : {std::tuple{&q_proj, &w.dq_rows, &grads.q_proj},
                                  std::tuple{&key_proj(), &w.dk_rows, &key_grad},
                                  std::tuple{&v_proj, &w.dv_rows, &grads.v_proj}}) {
        linear_backward_tables(*proj, tables, dy->data(), *grad, w.tables);
    }
    dx.resize({cache.x.shape(0), cache.x.shape(1), config_.d_model});
    if (residual) std::copy(residual->begin(), residual->end(), dx.begin());
    else dx.fill(0.0f);
}

// q = x·W_Qᵀ + b_Q; k, v = source·W_{K,V}ᵀ + b: dx = dq·W_Q, dsource = dk·W_K + dv·W_V
// (self-attention: source = x, so all three land in dx, accumulated in that order), then the
// residual in the store of dx's last product. In an emulated format dx is rounded before the
// residual (not the layer's) is added.
void MultiHeadAttention::projections_backward(const MultiHeadAttentionCache& cache, const AttentionOptions& options,
                                              MultiHeadAttentionGrad& grads, Tensor3& dx, Tensor3* dmemory,
                                              const Tensor3* residual) const {
    MultiHeadAttentionCache::Scratch& w = cache.scratch;
    const bool cross = cache.memory.size() > 0;
    const Tensor3& source = cross ? cache.memory : cache.x;
    const std::size_t batch = cache.x.shape(0), t = cache.x.shape(1), s = source.shape(1);
    const Precision format = options.precision.format;
    const kernels::Epilogue plus_residual = residual && format == Precision::fp32
                                                ? kernels::Epilogue::adding(residual->data())
                                                : kernels::Epilogue{};
    // k = source·W_Kᵀ + b_K: with tie_qk, W_K is W_Q and its gradient adds to q_proj's.
    LinearGrad& key_grad = config_.tie_qk ? grads.q_proj : grads.k_proj;
    dx.resize({batch, t, config_.d_model});
    linear_backward(q_proj, cache.x.data(), batch * t, w.dq_rows.data(), grads.q_proj, dx.data(), Accumulate::no,
                    cross ? plus_residual : kernels::Epilogue{});
    if (cross) dmemory->resize(source.shape());
    Tensor3& dsource = cross ? *dmemory : dx;
    linear_backward(key_proj(), source.data(), batch * s, w.dk_rows.data(), key_grad, dsource.data(),
                    cross ? Accumulate::no : Accumulate::yes);
    linear_backward(v_proj, source.data(), batch * s, w.dv_rows.data(), grads.v_proj, dsource.data(), Accumulate::yes,
                    cross ? kernels::Epilogue{} : plus_residual);
    if (format != Precision::fp32) {
        round_span(format, dx.data(), dx.size());
        if (cross) round_span(format, dmemory->data(), dmemory->size());
        if (residual) {
            for (std::size_t i = 0; i < dx.size(); ++i) dx.data()[i] += residual->data()[i];
        }
    }
}

Tensor3 MultiHeadAttention::forward_incremental(const Tensor3& x, KvCache& kv, const AttentionOptions& options,
                                                StageObserver* observer) const {
    constexpr const char* where = "MultiHeadAttention::forward_incremental";
    require_shape(x, {-1, -1, static_cast<std::ptrdiff_t>(config_.d_model)}, where, "x (B, T, C)");
    const std::size_t batch = x.shape(0), t = x.shape(1), past = kv.length();
    const std::size_t kv_heads = config_.kv_heads(), d = config_.head_dim();
    const bool linear = options.variant == AttentionVariant::linear;
    if (linear && kv.k.size() > 0) {
        fail<ConfigError>(where, ": variant linear keeps a recurrent state, but kv holds ", kv.k.shape(2),
                          " cached keys of softmax attention");
    }
    if (past > 0 && !linear) {
        require_shape(kv.k, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(kv_heads), -1,
                             static_cast<std::ptrdiff_t>(d)},
                      where, "kv.k (B, Hkv, S_past, D)");
    }
    if (options.check_finite) require_finite(x, where, "x");
    if (options.rope && d % 2 != 0) fail<ConfigError>(where, ": RoPE needs an even head dimension, got ", d);
    const std::size_t s = past + t;
    AttentionMask mask = options.mask;
    mask.causal = true;
    mask.validate(batch, t, s, where);
    require_variant_supported(options, where);
    if (linear) require_linear_attention_mask(mask, where);
    if (options.variant == AttentionVariant::block_sparse) {
        // The whole sequence's layout, the new queries at rows past .. past + T - 1: causal
        // draws make its rows the same as a full forward's (attention/block_sparse.hpp).
        AttentionOptions causal = options;
        causal.mask = mask;
        mask = block_sparse_as_full(causal, s, s, past, where).mask;
    }

    observe_rows(observer, Stage::x, x);
    const Precision format = options.precision.format;
    Tensor4 q = split_heads(project(q_proj, x), config_.num_heads);  // (B, H, T, D)
    Tensor4 k_new = split_heads(project(key_proj(), x), kv_heads);   // (B, Hkv, T, D)
    Tensor4 v_new = split_heads(project(v_proj, x), kv_heads);       // (B, Hkv, T, D)
    for (auto [stage, heads] : {std::pair{Stage::q, &q}, std::pair{Stage::k, &k_new}, std::pair{Stage::v, &v_new}}) {
        round_observe_heads(observer, stage, format, *heads);
    }
    if (options.rope) {
        apply_rope(q, past, options.rope_base);
        apply_rope(k_new, past, options.rope_base);
        for (auto [stage, heads] : {std::pair{Stage::q_rot, &q}, std::pair{Stage::k_rot, &k_new}}) {
            round_observe_heads(observer, stage, format, *heads);
        }
    }
    Tensor4 context;  // (B, H, T, D)
    if (linear) {
        // Fold the new keys and values into the constant-size state; no keys are kept.
        context = linear_attention_step(q, k_new, v_new, mask.key_padding, kv.linear, observer);
    } else {
        // Append the new rows to the cache: (B, Hkv, past, D) ++ (B, Hkv, T, D) along the sequence.
        require_allocatable({batch, kv_heads, s, d}, where, "the key/value cache");
        Tensor4 k_all = Tensor4::from_shape({batch, kv_heads, s, d});
        Tensor4 v_all = Tensor4::from_shape({batch, kv_heads, s, d});
        for (std::size_t bh = 0; bh < batch * kv_heads; ++bh) {
            for (auto [all, old, fresh] : {std::tuple{&k_all, &kv.k, &k_new}, std::tuple{&v_all, &kv.v, &v_new}}) {
                float* dst = all->data() + bh * s * d;
                if (past > 0) std::copy_n(old->data() + bh * past * d, past * d, dst);
                std::copy_n(fresh->data() + bh * t * d, t * d, dst + past * d);
            }
        }
        kv.k = std::move(k_all);
        kv.v = std::move(v_all);
        context = scaled_dot_product_attention(q, kv.k, kv.v, mask, options.scale, observer, nullptr,
                                               SdpBackend::automatic, options.normalizer, options.precision);
    }
    Tensor3 concat = merge_heads(context);
    observe_rows(observer, Stage::concat, concat);
    Tensor3 out = project(out_proj, concat);
    round_observe_output(observer, format, out);
    return out;
}

}  // namespace attnlab
