#include "attnlab/model/crossmodal/crossmodal.hpp"

#include <algorithm>
#include <string>

#include <xtensor/xview.hpp>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {

const ModelConfig& crossmodal_config(const ModelConfig& config) {
    config.validate();
    if (!config.is_crossmodal()) {
        fail<ConfigError>("CrossModalModel: architecture must be crossmodal, got ", architecture_name(config.architecture));
    }
    if (config.kind != ModelKind::encoder) {
        fail<ConfigError>("CrossModalModel: kind must be encoder (it classifies pairs), got ", model_kind_name(config.kind));
    }
    return config;
}

// Appends views, each name prefixed.
void append_prefixed(std::vector<ParameterView>& out, std::vector<ParameterView> views, const std::string& prefix) {
    for (auto& v : views) {
        v.name = prefix + v.name;
        out.push_back(std::move(v));
    }
}

// name.weight and, when present, name.bias (LinearGrad or Linear tensors).
void append_linear(std::vector<ParameterView>& out, const std::string& name, Tensor2& weight, Tensor1& bias) {
    out.push_back(view_of(name + ".weight", weight));
    if (bias.size() > 0) out.push_back(view_of(name + ".bias", bias));
}

// x (B, R, C) -> the mean over rows r of each b with weight[b] (1 / count) where padding (B, R) is 0
// (all rows when padding is empty) -> pooled (B, C).
void masked_mean(const Tensor3& x, const Mask2& padding, const std::vector<float>& weight, Tensor2& pooled) {
    const std::size_t batch = x.shape(0), rows = x.shape(1), c = x.shape(2);
    shape_to(pooled, {batch, c});
    pooled.fill(0.0f);
    for (std::size_t b = 0; b < batch; ++b) {
        float* p = pooled.data() + b * c;
        for (std::size_t r = 0; r < rows; ++r) {
            if (padding.size() > 0 && padding(b, r)) continue;
            const float* xr = x.data() + (b * rows + r) * c;
            for (std::size_t j = 0; j < c; ++j) p[j] += xr[j];
        }
        for (std::size_t j = 0; j < c; ++j) p[j] *= weight[b];
    }
}
// Its backward: dx[b, r] (+)= dpooled[b] · weight[b] on counted rows. dpooled (B, C) -> dx (B, R, C)
void masked_mean_backward(const Tensor2& dpooled, const Mask2& padding, const std::vector<float>& weight, bool accumulate,
                          Tensor3& dx) {
    const std::size_t batch = dx.shape(0), rows = dx.shape(1), c = dx.shape(2);
    if (!accumulate) dx.fill(0.0f);
    for (std::size_t b = 0; b < batch; ++b) {
        const float* dp = dpooled.data() + b * c;
        for (std::size_t r = 0; r < rows; ++r) {
            if (padding.size() > 0 && padding(b, r)) continue;
            float* d = dx.data() + (b * rows + r) * c;
            for (std::size_t j = 0; j < c; ++j) d[j] += dp[j] * weight[b];
        }
    }
}

}  // namespace

CrossModalGrad::CrossModalGrad(const CrossModalModel& m)
    : text(m.text), patch_emb(m.patch_emb), text_proj(m.text_proj), image_proj(m.image_proj), cross_ln1(m.cross_ln1),
      cross_attn(m.cross_attn), cross_ln2(m.cross_ln2), cross_ffn(m.cross_ffn), head(m.head) {
    for (const auto& b : m.image_blocks) image_blocks.emplace_back(b);
    if (m.image_ln_f.width() > 0) image_ln_f = LayerNormGrad(m.image_ln_f);
}

void CrossModalGrad::zero() {
    text.zero();
    patch_emb.zero();
    for (auto& g : image_blocks) g.zero();
    if (image_ln_f.weight.size() > 0) image_ln_f.zero();
    text_proj.zero();
    image_proj.zero();
    cross_ln1.zero();
    cross_attn.zero();
    cross_ln2.zero();
    cross_ffn.zero();
    head.zero();
}

std::vector<ParameterView> CrossModalGrad::views() {
    std::vector<ParameterView> out, part;
    text.views(part);
    append_prefixed(out, std::move(part), "text.");
    part.clear();
    patch_emb.views(part, "image.patch_emb.");
    append_prefixed(out, std::move(part), "");
    for (std::size_t l = 0; l < image_blocks.size(); ++l) {
        append_prefixed(out, image_blocks[l].views("image.blocks." + std::to_string(l) + "."), "");
    }
    if (image_ln_f.weight.size() > 0) append_prefixed(out, image_ln_f.views("image.ln_f."), "");
    append_linear(out, "text_proj", text_proj.weight, text_proj.bias);
    append_linear(out, "image_proj", image_proj.weight, image_proj.bias);
    append_prefixed(out, cross_ln1.views("cross.ln1."), "");
    append_prefixed(out, cross_attn.views("cross.attn."), "");
    append_prefixed(out, cross_ln2.views("cross.ln2."), "");
    append_prefixed(out, cross_ffn.views("cross.ffn."), "");
    append_linear(out, "head", head.weight, head.bias);
    return out;
}

CrossModalModel::CrossModalModel(const ModelConfig& config, Rng& rng)
    : text(crossmodal_config(config).crossmodal_text_config(), rng), config_(config) {
    const ModelConfig image = config.crossmodal_image_config();
    PatchEmbeddingConfig pe;
    pe.image_size = image.image_size;
    pe.patch_size = image.patch_size;
    pe.d_model = image.d_model;
    pe.positional = image.positional;
    patch_emb = PatchEmbedding(pe, rng);
    for (std::size_t l = 0; l < config.num_layers; ++l) image_blocks.emplace_back(image, rng);
    if (config.norm == NormPlacement::pre) image_ln_f = LayerNorm(config.d_model, config.layer_norm_eps);
    const std::size_t c = config.d_model, e = config.common_width();
    text_proj = Linear(c, e, config.bias, rng);
    image_proj = Linear(c, e, config.bias, rng);
    cross_ln1 = LayerNorm(e, config.layer_norm_eps);
    MultiHeadAttentionConfig ac;
    ac.d_model = e;
    ac.num_heads = config.num_heads;
    ac.bias = config.bias;
    ac.kv_dim = e;
    cross_attn = MultiHeadAttention(ac, rng);
    cross_ln2 = LayerNorm(e, config.layer_norm_eps);
    cross_ffn = FeedForward(e, config.ff_dim, config.activation, config.bias, rng);
    head = Linear(e, config.num_classes, config.bias, rng);
    grads_ = CrossModalGrad(*this);
}

void CrossModalModel::check_input(const Index2& tokens, const Mask2& padding, const Tensor3& pixels,
                                  const char* where) const {
    text.check_input(tokens, padding, where);
    const auto s = static_cast<std::ptrdiff_t>(config_.image_size);
    require_shape(pixels, {static_cast<std::ptrdiff_t>(tokens.shape(0)), s, s}, where,
                  "pixels (B, S, S) (B of the tokens)");
}

const std::vector<StageObserver*>& CrossModalModel::start_stats(std::size_t t, std::size_t n) {
    static const std::vector<StageObserver*> kNone;
    if (!record_stats_) return kNone;
    const std::size_t tile = std::max({t * t, n * n, t * n});
    return stats_collector_.start(num_attention_layers(), config_.num_heads, tile);
}

void CrossModalModel::run(const Index2& tokens, const Mask2& padding, const Tensor3& pixels, CrossModalCache& cache,
                          bool training, const std::vector<StageObserver*>& observers, Tensor2& logits) const {
    const std::size_t layers = config_.num_layers, batch = tokens.shape(0), t = tokens.shape(1);
    const std::size_t e = config_.common_width();
    const auto observer = [&](std::size_t layer) { return observers.empty() ? nullptr : observers[layer]; };
    // Text: tokens (B, T) -> text_h (B, T, C)
    const std::vector<StageObserver*> text_observers =
        observers.empty() ? std::vector<StageObserver*>{}
                          : std::vector<StageObserver*>(observers.begin(), observers.begin() + layers);
    const Tensor3& th = text.forward(tokens, padding, /*causal=*/false, text_observers, cache.text, training);
    cache.text_h = th;
    // Image: pixels (B, S, S) -> image_h (B, N, C)
    AttentionOptions options;
    options.scale = config_.scale_options();
    patch_emb.forward(pixels, &cache.patch_emb, cache.embedded);
    const Tensor3* x = &cache.embedded;
    cache.image_blocks.resize(layers);
    cache.image_stream.resize(layers);
    for (std::size_t l = 0; l < layers; ++l) {
        image_blocks[l].forward(*x, options, observer(layers + l), training ? &cache.image_blocks[l] : nullptr, nullptr,
                                cache.image_stream[l]);
        x = &cache.image_stream[l];
    }
    if (image_ln_f.width() > 0) {
        image_ln_f.forward(*x, &cache.image_ln_f, cache.image_h);
    } else {
        cache.image_h = *x;
    }
    const std::size_t n = cache.image_h.shape(1);
    // Projections to the common width: tq (B, T, E), im (B, N, E)
    shape_to(cache.tq, {batch, t, e});
    text_proj.forward(cache.text_h.data(), batch * t, cache.tq.data());
    shape_to(cache.im, {batch, n, e});
    image_proj.forward(cache.image_h.data(), batch * n, cache.im.data());
    // Cross block: h = tq + attn(ln1(tq), im); out = h + ffn(ln2(h))
    cross_ln1.forward(cache.tq, &cache.ln1, cache.q_in);
    cross_attn.forward(cache.q_in, &cache.im, options, observer(2 * layers), training ? &cache.attn : nullptr, cache.h,
                       &cache.tq);
    cross_ln2.forward(cache.h, &cache.ln2, cache.f_in);
    cross_ffn.forward(cache.f_in, training ? &cache.ffn : nullptr, cache.out, &cache.h);
    // pooled = the mean of out over the words (not padding) -> logits
    cache.pool_weight.assign(batch, 1.0f);
    for (std::size_t b = 0; b < batch; ++b) {
        std::size_t count = 0;
        for (std::size_t i = 0; i < t; ++i) count += padding.size() > 0 && padding(b, i) ? 0 : 1;
        cache.pool_weight[b] = 1.0f / static_cast<float>(count);
    }
    masked_mean(cache.out, padding, cache.pool_weight, cache.pooled);
    shape_to(logits, {batch, config_.num_classes});
    head.forward(cache.pooled.data(), batch, logits.data());
    cache.valid = training;
}

CrossEntropyResult CrossModalModel::loss(CrossModalCache& cache, const Index1& labels) const {
    CrossEntropyResult r = cross_entropy_forward(cache.logits, labels, &cache.ce);
    if (config_.loss != PairLoss::clip) return r;
    // The matched pairs' embeddings, each modality pooled on its own (before the cross block).
    const std::size_t batch = labels.size(), t = cache.tq.shape(1), n = cache.im.shape(1), e = cache.tq.shape(2);
    cache.matched.clear();
    for (std::size_t b = 0; b < batch; ++b) {
        if (labels(b) == 1) cache.matched.push_back(b);
    }
    const std::size_t m = cache.matched.size();
    shape_to(cache.text_pooled, {m, e});
    shape_to(cache.image_pooled, {m, e});
    const Mask2& padding = cache.text.options.mask.key_padding;
    for (std::size_t i = 0; i < m; ++i) {
        const std::size_t b = cache.matched[i];
        float* tp = cache.text_pooled.data() + i * e;
        float* ip = cache.image_pooled.data() + i * e;
        std::fill(tp, tp + e, 0.0f);
        std::fill(ip, ip + e, 0.0f);
        for (std::size_t w = 0; w < t; ++w) {
            if (padding.size() > 0 && padding(b, w)) continue;
            for (std::size_t j = 0; j < e; ++j) tp[j] += cache.tq(b, w, j) * cache.pool_weight[b];
        }
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t j = 0; j < e; ++j) ip[j] += cache.im(b, p, j) / static_cast<float>(n);
    }
    const ContrastiveResult c = contrastive_forward(cache.text_pooled, cache.image_pooled, config_.clip_temperature,
                                                    &cache.clip);
    r.loss += c.loss;
    return r;
}

void CrossModalModel::backward(CrossModalCache& cache) {
    const std::size_t batch = cache.tq.shape(0), t = cache.tq.shape(1), e = cache.tq.shape(2), n = cache.im.shape(1);
    const std::size_t c = config_.d_model, layers = config_.num_layers;
    const Mask2& padding = cache.text.options.mask.key_padding;
    AttentionOptions options;
    options.scale = config_.scale_options();
    cross_entropy_backward(cache.ce, loss_scale_, cache.dlogits);
    // logits = pooled·Wᵀ + b; pooled = the masked mean of out
    shape_to(cache.dpooled, {batch, e});
    linear_backward(head, cache.pooled.data(), batch, cache.dlogits.data(), grads_.head, cache.dpooled.data());
    shape_to(cache.dout, {batch, t, e});
    masked_mean_backward(cache.dpooled, padding, cache.pool_weight, false, cache.dout);
    // out = h + ffn(ln2(h))
    cross_ffn.backward(cache.dout, cache.ffn, grads_.cross_ffn, cache.dtmp);
    cross_ln2.backward(cache.dtmp, cache.ln2, grads_.cross_ln2, cache.dh);
    cache.dh += cache.dout;
    // h = tq + attn(ln1(tq), memory = im)
    cross_attn.backward(cache.dh, cache.attn, options, grads_.cross_attn, cache.dq_in, &cache.dim);
    cross_ln1.backward(cache.dq_in, cache.ln1, grads_.cross_ln1, cache.dtq);
    cache.dtq += cache.dh;
    if (config_.loss == PairLoss::clip) {
        // text_pooled[i] = the masked mean of tq[b_i], image_pooled[i] = the mean of im[b_i]
        contrastive_backward(cache.clip, loss_scale_, cache.dtext_pooled, cache.dimage_pooled);
        for (std::size_t i = 0; i < cache.matched.size(); ++i) {
            const std::size_t b = cache.matched[i];
            for (std::size_t w = 0; w < t; ++w) {
                if (padding.size() > 0 && padding(b, w)) continue;
                for (std::size_t j = 0; j < e; ++j) cache.dtq(b, w, j) += cache.dtext_pooled(i, j) * cache.pool_weight[b];
            }
            for (std::size_t p = 0; p < n; ++p)
                for (std::size_t j = 0; j < e; ++j) cache.dim(b, p, j) += cache.dimage_pooled(i, j) / static_cast<float>(n);
        }
    }
    // tq = text_h·W_textᵀ + b -> the text encoder
    Tensor3& dtext_h = cache.text.dh;
    shape_to(dtext_h, {batch, t, c});
    linear_backward(text_proj, cache.text_h.data(), batch * t, cache.dtq.data(), grads_.text_proj, dtext_h.data());
    text.backward(cache.text, grads_.text);
    // im = image_h·W_imageᵀ + b -> ln_f -> the image blocks -> the patch embedding
    shape_to(cache.dimage_h, {batch, n, c});
    linear_backward(image_proj, cache.image_h.data(), batch * n, cache.dim.data(), grads_.image_proj,
                    cache.dimage_h.data());
    Tensor3* a = &cache.da;
    Tensor3* b = &cache.db;
    if (image_ln_f.width() > 0) {
        image_ln_f.backward(cache.dimage_h, cache.image_ln_f, grads_.image_ln_f, *a);
    } else {
        *a = cache.dimage_h;
    }
    for (std::size_t l = layers; l-- > 0;) {
        image_blocks[l].backward(*a, cache.image_blocks[l], options, grads_.image_blocks[l], *b);
        std::swap(a, b);
    }
    patch_emb.backward(*a, cache.patch_emb, grads_.patch_emb);
}

Tensor2 CrossModalModel::forward(const Index2& tokens, const Mask2& padding, const Tensor3& pixels) {
    check_input(tokens, padding, pixels, "CrossModalModel::forward");
    const std::vector<StageObserver*>& observers = start_stats(tokens.shape(1), config_.patch_grid() * config_.patch_grid());
    Tensor2 logits;
    if (training_) {
        run(tokens, padding, pixels, cache_, true, observers, logits);
    } else {
        CrossModalCache local;
        run(tokens, padding, pixels, local, false, observers, logits);
    }
    if (record_stats_) stats_collector_.finish(stats_);
    return logits;
}

Tensor2 CrossModalModel::logits(const Index2& tokens, const Mask2& padding, const Tensor3& pixels) const {
    check_input(tokens, padding, pixels, "CrossModalModel::logits");
    CrossModalCache cache;
    Tensor2 logits;
    run(tokens, padding, pixels, cache, false, {}, logits);
    return logits;
}

CrossEntropyResult CrossModalModel::evaluate(const Index2& tokens, const Mask2& padding, const Tensor3& pixels,
                                             const Index1& labels) const {
    constexpr const char* where = "CrossModalModel::evaluate";
    check_input(tokens, padding, pixels, where);
    require_shape(labels, {static_cast<std::ptrdiff_t>(tokens.shape(0))}, where, "labels (B)");
    CrossModalCache cache;
    run(tokens, padding, pixels, cache, false, {}, cache.logits);
    return loss(cache, labels);
}

CrossEntropyResult CrossModalModel::loss_and_backward(const Index2& tokens, const Mask2& padding, const Tensor3& pixels,
                                                      const Index1& labels) {
    constexpr const char* where = "CrossModalModel::loss_and_backward";
    check_input(tokens, padding, pixels, where);
    require_shape(labels, {static_cast<std::ptrdiff_t>(tokens.shape(0))}, where, "labels (B)");
    const std::vector<StageObserver*>& observers = start_stats(tokens.shape(1), config_.patch_grid() * config_.patch_grid());
    run(tokens, padding, pixels, cache_, true, observers, cache_.logits);
    if (record_stats_) stats_collector_.finish(stats_);
    const CrossEntropyResult r = loss(cache_, labels);
    backward(cache_);
    return r;
}

std::unique_ptr<TraceRecorder> CrossModalModel::trace_layer(const Index2& tokens, const Mask2& padding,
                                                            const Tensor3& pixels, std::size_t layer) const {
    constexpr const char* where = "CrossModalModel::trace_layer";
    check_input(tokens, padding, pixels, where);
    const std::size_t layers = num_attention_layers();
    if (layer >= layers) {
        fail<ConfigError>(where, ": layer ", layer, " is out of range: the model has ", layers,
                          " attention layers (0..", layers - 1, ": text blocks, image blocks, cross-attention)");
    }
    auto recorder = std::make_unique<TraceRecorder>();
    std::vector<StageObserver*> observers(layers, nullptr);
    observers[layer] = recorder.get();
    CrossModalCache cache;
    Tensor2 logits;
    run(tokens, padding, pixels, cache, false, observers, logits);
    return recorder;
}

Tensor3 CrossModalModel::cross_attention_maps(const Index2& tokens, const Mask2& padding, const Tensor3& pixels,
                                              std::size_t batch) const {
    constexpr const char* where = "CrossModalModel::cross_attention_maps";
    check_input(tokens, padding, pixels, where);
    if (batch >= tokens.shape(0)) {
        fail<ValueError>(where, ": batch ", batch, " is out of range for ", tokens.shape(0), " pairs");
    }
    const Index2 one_tokens = xt::view(tokens, xt::range(batch, batch + 1), xt::all());
    const Mask2 one_padding = padding.size() > 0 ? Mask2(xt::view(padding, xt::range(batch, batch + 1), xt::all())) : Mask2();
    const Tensor3 one_pixels = xt::view(pixels, xt::range(batch, batch + 1), xt::all(), xt::all());
    TraceRecorder recorder({Stage::weights});
    std::vector<StageObserver*> observers(num_attention_layers(), nullptr);
    observers[cross_attention_layer()] = &recorder;
    CrossModalCache cache;
    Tensor2 logits;
    run(one_tokens, one_padding, one_pixels, cache, false, observers, logits);
    const std::size_t heads = recorder.num_heads(Stage::weights);
    const Tensor2& first = recorder.get(Stage::weights, 0, 0);
    Tensor3 maps = Tensor3::from_shape({heads, first.shape(0), first.shape(1)});
    for (std::size_t h = 0; h < heads; ++h) {
        const Tensor2& m = recorder.get(Stage::weights, 0, static_cast<std::ptrdiff_t>(h));
        std::copy(m.begin(), m.end(), maps.data() + h * m.size());
    }
    return maps;
}

std::vector<ParameterView> CrossModalModel::parameters() {
    std::vector<ParameterView> out, part;
    text.parameters(part);
    append_prefixed(out, std::move(part), "text.");
    part.clear();
    patch_emb.parameters(part, "image.patch_emb.");
    append_prefixed(out, std::move(part), "");
    for (std::size_t l = 0; l < image_blocks.size(); ++l) {
        append_prefixed(out, image_blocks[l].parameters("image.blocks." + std::to_string(l) + "."), "");
    }
    if (image_ln_f.width() > 0) append_prefixed(out, image_ln_f.parameters("image.ln_f."), "");
    append_linear(out, "text_proj", text_proj.weight, text_proj.bias);
    append_linear(out, "image_proj", image_proj.weight, image_proj.bias);
    append_prefixed(out, cross_ln1.parameters("cross.ln1."), "");
    append_prefixed(out, cross_attn.parameters("cross.attn."), "");
    append_prefixed(out, cross_ln2.parameters("cross.ln2."), "");
    append_prefixed(out, cross_ffn.parameters("cross.ffn."), "");
    append_linear(out, "head", head.weight, head.bias);
    return out;
}

}  // namespace attnlab
