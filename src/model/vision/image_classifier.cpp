#include "attnlab/model/vision/image_classifier.hpp"

#include <algorithm>

#include <xtensor/xview.hpp>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {

// The config of stage k's blocks: its width, heads and feed-forward.
ModelConfig stage_config(const ModelConfig& config, const SwinStage& stage) {
    ModelConfig c = config;
    c.d_model = stage.width;
    c.num_heads = stage.heads;
    c.ff_dim = stage.ff_dim;
    return c;
}

// The 2x2 groups of a (B, G·G, C) map: merged row i·(G/2) + j takes the patches
// (2i, 2j), (2i+1, 2j), (2i, 2j+1), (2i+1, 2j+1), in that order, as its 4C channels.
std::size_t merge_source(std::size_t grid, std::size_t row, std::size_t part) {
    const std::size_t half = grid / 2, i = row / half, j = row % half;
    const std::size_t y = 2 * i + (part & 1), x = 2 * j + (part >> 1);
    return y * grid + x;
}

}  // namespace

ImageClassifier::ImageClassifier(const ModelConfig& config, Rng& rng) : config_(config) {
    config.validate();
    if (!config.is_image()) {
        fail<ConfigError>("ImageClassifier: architecture must be vit or swin, got ", architecture_name(config.architecture));
    }
    const bool vit = config.architecture == Architecture::vit;
    PatchEmbeddingConfig pe;
    pe.image_size = config.image_size;
    pe.patch_size = config.patch_size;
    pe.d_model = config.d_model;
    pe.positional = config.positional;
    pe.cls = vit && config.pooling == Pooling::cls;
    patch_emb = PatchEmbedding(pe, rng);
    std::size_t last = config.d_model;
    if (vit) {
        for (std::size_t l = 0; l < config.num_layers; ++l) blocks.emplace_back(config, rng);
    } else {
        const std::vector<SwinStage> plan = config.swin_stages();
        for (std::size_t k = 0; k < plan.size(); ++k) {
            const SwinStage& s = plan[k];
            SwinStageLayers stage;
            const ModelConfig sc = stage_config(config, s);
            for (std::size_t i = 0; i < config.num_layers; ++i) {
                const std::size_t shift = s.shifted && i % 2 == 1 ? s.window / 2 : 0;
                stage.blocks.emplace_back(sc, s.grid, s.window, shift, rng);
            }
            if (k + 1 < plan.size()) {
                stage.merges = true;
                stage.merge.norm = LayerNorm(4 * s.width, config.layer_norm_eps);
                stage.merge.reduction = Linear(4 * s.width, 2 * s.width, /*with_bias=*/false, rng);
            }
            last = s.width;
            stages.push_back(std::move(stage));
        }
    }
    if (config.norm == NormPlacement::pre) ln_f = LayerNorm(last, config.layer_norm_eps);
    head = Linear(last, config.num_classes, config.bias, rng);

    grads_.patch_emb = PatchEmbeddingGrad(patch_emb);
    for (const auto& b : blocks) grads_.blocks.emplace_back(b);
    for (const auto& stage : stages) {
        ImageClassifierGrad::Stage g;
        for (const auto& b : stage.blocks) {
            SwinBlockGrad bg;
            bg.block = TransformerBlockGrad(b.block);
            bg.rel_pos_table = Tensor2::from_shape(b.rel_pos_table.shape());
            bg.rel_pos_table.fill(0.0f);
            g.blocks.push_back(std::move(bg));
        }
        if (stage.merges) {
            g.merge.norm = LayerNormGrad(stage.merge.norm);
            g.merge.reduction = LinearGrad(stage.merge.reduction);
        }
        grads_.stages.push_back(std::move(g));
    }
    if (ln_f.width() > 0) grads_.ln_f = LayerNormGrad(ln_f);
    grads_.head = LinearGrad(head);
}

void ImageClassifier::check_pixels(const Tensor3& pixels, const char* where) const {
    const auto s = static_cast<std::ptrdiff_t>(config_.image_size);
    require_shape(pixels, {-1, s, s}, where, "pixels (B, S, S)");
    if (pixels.shape(0) == 0) fail<ShapeError>(where, ": the batch is empty");
}

std::size_t ImageClassifier::num_attention_layers() const {
    if (!blocks.empty()) return blocks.size();
    std::size_t n = 0;
    for (const auto& stage : stages) n += stage.blocks.size();
    return n;
}

const SwinBlock& ImageClassifier::swin_block(std::size_t layer) const {
    for (const auto& stage : stages) {
        if (layer < stage.blocks.size()) return stage.blocks[layer];
        layer -= stage.blocks.size();
    }
    fail<ConfigError>("ImageClassifier: layer out of range");
}

std::size_t ImageClassifier::windows_per_side(std::size_t layer) const {
    if (layer >= num_attention_layers()) {
        fail<ConfigError>("ImageClassifier::windows_per_side: layer ", layer, " is out of range: the model has ",
                          num_attention_layers(), " attention layers");
    }
    if (!blocks.empty()) return 1;
    const SwinBlock& b = swin_block(layer);
    return b.grid / b.window;
}

const std::vector<StageObserver*>& ImageClassifier::start_stats() {
    static const std::vector<StageObserver*> kNone;
    if (!record_stats_) return kNone;
    // Heads: the widest stage's; tiles: the largest (T, S) any block computes (a window's M² x M²).
    std::size_t heads = config_.num_heads, tile = 0;
    if (!blocks.empty()) {
        const std::size_t n = patch_emb.config().positions();
        tile = n * n;
    }
    for (const auto& stage : stages) {
        for (const auto& b : stage.blocks) {
            heads = std::max(heads, b.rel_pos_table.shape(1));
            tile = std::max(tile, b.window * b.window * b.window * b.window);
        }
    }
    return stats_collector_.start(num_attention_layers(), heads, tile);
}

void ImageClassifier::finish_stats() {
    if (record_stats_) stats_collector_.finish(stats_);
}

void ImageClassifier::run(const Tensor3& pixels, ImageClassifierCache& cache, bool training, StageObserver* observer,
                          std::size_t observed_layer, Tensor2& logits, const std::vector<StageObserver*>& stats) const {
    AttentionOptions options;
    options.scale = config_.scale_options();
    patch_emb.forward(pixels, &cache.patch_emb, cache.embedded);
    const Tensor3* x = &cache.embedded;  // (B, N', C) the next block's input
    std::size_t layer = 0;
    if (!blocks.empty()) {
        cache.blocks.resize(blocks.size());
        cache.stream.resize(blocks.size());
        for (std::size_t l = 0; l < blocks.size(); ++l, ++layer) {
            StageObserver* obs = layer == observed_layer && observer ? observer : (stats.empty() ? nullptr : stats[layer]);
            blocks[l].forward(*x, options, obs, training ? &cache.blocks[l] : nullptr, nullptr, cache.stream[l]);
            x = &cache.stream[l];
        }
    } else {
        cache.stages.resize(stages.size());
        for (std::size_t k = 0; k < stages.size(); ++k) {
            const SwinStageLayers& stage = stages[k];
            ImageClassifierCache::Stage& sc = cache.stages[k];
            sc.blocks.resize(stage.blocks.size());
            sc.maps.resize(stage.blocks.size());
            for (std::size_t i = 0; i < stage.blocks.size(); ++i, ++layer) {
                StageObserver* obs = layer == observed_layer && observer ? observer : (stats.empty() ? nullptr : stats[layer]);
                stage.blocks[i].forward(*x, options, obs, training ? &sc.blocks[i] : nullptr, sc.maps[i]);
                x = &sc.maps[i];
            }
            if (stage.merges) {
                const std::size_t grid = stage.blocks.front().grid, c = x->shape(2), batch = x->shape(0);
                const std::size_t n = (grid / 2) * (grid / 2);
                shape_to(sc.merge.gathered, {batch, n, 4 * c});
                for (std::size_t b = 0; b < batch; ++b)
                    for (std::size_t r = 0; r < n; ++r)
                        for (std::size_t part = 0; part < 4; ++part) {
                            const float* src = x->data() + (b * grid * grid + merge_source(grid, r, part)) * c;
                            std::copy(src, src + c, sc.merge.gathered.data() + (b * n + r) * 4 * c + part * c);
                        }
                stage.merge.norm.forward(sc.merge.gathered, &sc.merge.norm, sc.merge.normed);
                shape_to(sc.merged, {batch, n, 2 * c});
                stage.merge.reduction.forward(sc.merge.normed.data(), batch * n, sc.merged.data());
                x = &sc.merged;
            }
        }
    }
    const std::size_t batch = x->shape(0), np = x->shape(1), c = x->shape(2);
    if (ln_f.width() > 0) {
        ln_f.forward(*x, &cache.ln_f, cache.normed);
    } else {
        cache.normed = *x;
    }
    shape_to(cache.pooled, {batch, c});
    const bool cls = patch_emb.config().cls;
    for (std::size_t b = 0; b < batch; ++b) {
        float* pooled = cache.pooled.data() + b * c;
        const float* h = cache.normed.data() + b * np * c;
        if (cls) {
            std::copy(h, h + c, pooled);
            continue;
        }
        std::fill(pooled, pooled + c, 0.0f);
        for (std::size_t i = 0; i < np; ++i)
            for (std::size_t j = 0; j < c; ++j) pooled[j] += h[i * c + j];
        for (std::size_t j = 0; j < c; ++j) pooled[j] /= static_cast<float>(np);
    }
    shape_to(logits, {batch, config_.num_classes});
    head.forward(cache.pooled.data(), batch, logits.data());
    cache.valid = training;
}

Tensor2 ImageClassifier::forward(const Tensor3& pixels) {
    check_pixels(pixels, "ImageClassifier::forward");
    Tensor2 logits;
    run(pixels, cache_, training_, nullptr, 0, logits, start_stats());
    finish_stats();
    return logits;
}

Tensor2 ImageClassifier::logits(const Tensor3& pixels) const {
    check_pixels(pixels, "ImageClassifier::logits");
    ImageClassifierCache cache;
    Tensor2 logits;
    run(pixels, cache, false, nullptr, 0, logits);
    return logits;
}

void ImageClassifier::backward(const Tensor2& dlogits) {
    constexpr const char* where = "ImageClassifier::backward";
    ImageClassifierCache& cache = cache_;
    if (!cache.valid) fail<ValueError>(where, ": no training-mode forward to differentiate");
    const std::size_t batch = cache.pooled.shape(0), c = cache.pooled.shape(1);
    require_shape(dlogits, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(config_.num_classes)},
                  where, "dlogits (B, K)");
    AttentionOptions options;
    options.scale = config_.scale_options();
    // logits = pooled·Wᵀ + b
    shape_to(cache.dpooled, {batch, c});
    linear_backward(head, cache.pooled.data(), batch, dlogits.data(), grads_.head, cache.dpooled.data());
    // pooled = h[0] (CLS) or the mean of h's rows
    const std::size_t np = cache.normed.shape(1);
    shape_to(cache.dh, {batch, np, c});
    const bool cls = patch_emb.config().cls;
    for (std::size_t b = 0; b < batch; ++b) {
        const float* dp = cache.dpooled.data() + b * c;
        float* dh = cache.dh.data() + b * np * c;
        if (cls) {
            std::fill(dh, dh + np * c, 0.0f);
            std::copy(dp, dp + c, dh);
            continue;
        }
        for (std::size_t i = 0; i < np; ++i)
            for (std::size_t j = 0; j < c; ++j) dh[i * c + j] = dp[j] / static_cast<float>(np);
    }
    // h = ln_f(x) (pre-LN)
    Tensor3 a, b;  // alternate gradient buffers: the gradient of the current block's output, input
    if (ln_f.width() > 0) {
        ln_f.backward(cache.dh, cache.ln_f, grads_.ln_f, a);
    } else {
        a = cache.dh;
    }
    if (!blocks.empty()) {
        for (std::size_t l = blocks.size(); l-- > 0;) {
            blocks[l].backward(a, cache.blocks[l], options, grads_.blocks[l], b);
            std::swap(a, b);
        }
    } else {
        for (std::size_t k = stages.size(); k-- > 0;) {
            const SwinStageLayers& stage = stages[k];
            ImageClassifierCache::Stage& sc = cache.stages[k];
            ImageClassifierGrad::Stage& sg = grads_.stages[k];
            if (stage.merges) {
                // merged = norm(gathered)·Wᵀ; gathered = the 2x2 groups of the map
                const std::size_t grid = stage.blocks.front().grid, cin = sc.merge.gathered.shape(2) / 4;
                const std::size_t n = sc.merge.gathered.shape(1);
                shape_to(sc.merge.dnormed, {batch, n, 4 * cin});
                linear_backward(stage.merge.reduction, sc.merge.normed.data(), batch * n, a.data(),
                                sg.merge.reduction, sc.merge.dnormed.data());
                stage.merge.norm.backward(sc.merge.dnormed, sc.merge.norm, sg.merge.norm, sc.merge.dgathered);
                shape_to(b, {batch, grid * grid, cin});
                for (std::size_t bb = 0; bb < batch; ++bb)
                    for (std::size_t r = 0; r < n; ++r)
                        for (std::size_t part = 0; part < 4; ++part) {
                            const float* src = sc.merge.dgathered.data() + (bb * n + r) * 4 * cin + part * cin;
                            std::copy(src, src + cin, b.data() + (bb * grid * grid + merge_source(grid, r, part)) * cin);
                        }
                std::swap(a, b);
            }
            for (std::size_t i = stage.blocks.size(); i-- > 0;) {
                stage.blocks[i].backward(a, sc.blocks[i], options, sg.blocks[i], b);
                std::swap(a, b);
            }
        }
    }
    patch_emb.backward(a, cache.patch_emb, grads_.patch_emb);
}

CrossEntropyResult ImageClassifier::loss_and_backward(const Tensor3& pixels, const Index1& labels) {
    constexpr const char* where = "ImageClassifier::loss_and_backward";
    check_pixels(pixels, where);
    require_shape(labels, {static_cast<std::ptrdiff_t>(pixels.shape(0))}, where, "labels (B)");
    run(pixels, cache_, true, nullptr, 0, cache_.logits, start_stats());
    finish_stats();
    const CrossEntropyResult r = cross_entropy_forward(cache_.logits, labels, &cache_.ce);
    cross_entropy_backward(cache_.ce, loss_scale_, cache_.dlogits);
    backward(cache_.dlogits);
    return r;
}

std::unique_ptr<TraceRecorder> ImageClassifier::trace_layer(const Tensor3& pixels, std::size_t layer) const {
    constexpr const char* where = "ImageClassifier::trace_layer";
    check_pixels(pixels, where);
    const std::size_t layers = num_attention_layers();
    if (layer >= layers) {
        fail<ConfigError>(where, ": layer ", layer, " is out of range: the model has ", layers, " attention layer",
                          layers == 1 ? "" : "s", " (0..", layers - 1, ")");
    }
    auto recorder = std::make_unique<TraceRecorder>();
    ImageClassifierCache cache;
    Tensor2 logits;
    run(pixels, cache, false, recorder.get(), layer, logits);
    return recorder;
}

Tensor4 ImageClassifier::attention_maps(const Tensor3& pixels, std::size_t layer, std::size_t batch) const {
    constexpr const char* where = "ImageClassifier::attention_maps";
    check_pixels(pixels, where);
    if (batch >= pixels.shape(0)) {
        fail<ValueError>(where, ": batch ", batch, " is out of range for ", pixels.shape(0), " images");
    }
    const std::size_t per_side = windows_per_side(layer), nw = per_side * per_side;
    const Tensor3 one = xt::view(pixels, xt::range(batch, batch + 1), xt::all(), xt::all());
    ImageClassifierCache cache;
    TraceRecorder recorder({Stage::weights});
    Tensor2 logits;
    run(one, cache, false, &recorder, layer, logits);
    const std::size_t heads = recorder.num_heads(Stage::weights);
    const Tensor2& first = recorder.get(Stage::weights, 0, 0);
    Tensor4 maps = Tensor4::from_shape({nw, heads, first.shape(0), first.shape(1)});
    for (std::size_t w = 0; w < nw; ++w)
        for (std::size_t h = 0; h < heads; ++h) {
            const Tensor2& m = recorder.get(Stage::weights, w, static_cast<std::ptrdiff_t>(h));
            std::copy(m.begin(), m.end(), maps.data() + (w * heads + h) * m.size());
        }
    return maps;
}

std::vector<ParameterView> ImageClassifier::parameters() {
    std::vector<ParameterView> out;
    patch_emb.parameters(out, "patch_emb.");
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        for (auto& v : blocks[l].parameters("blocks." + std::to_string(l) + ".")) out.push_back(v);
    }
    for (std::size_t k = 0; k < stages.size(); ++k) {
        const std::string sp = "stages." + std::to_string(k) + ".";
        for (std::size_t i = 0; i < stages[k].blocks.size(); ++i) {
            const std::string bp = sp + "blocks." + std::to_string(i) + ".";
            for (auto& v : stages[k].blocks[i].block.parameters(bp)) out.push_back(v);
            out.push_back(view_of(bp + "rel_pos_table", stages[k].blocks[i].rel_pos_table));
        }
        if (stages[k].merges) {
            for (auto& v : stages[k].merge.norm.parameters(sp + "merge.norm.")) out.push_back(v);
            out.push_back(view_of(sp + "merge.reduction.weight", stages[k].merge.reduction.weight));
        }
    }
    if (ln_f.width() > 0) {
        for (auto& v : ln_f.parameters("ln_f.")) out.push_back(v);
    }
    out.push_back(view_of("head.weight", head.weight));
    if (head.has_bias()) out.push_back(view_of("head.bias", head.bias));
    return out;
}

std::vector<ParameterView> ImageClassifier::gradients() {
    std::vector<ParameterView> out;
    grads_.patch_emb.views(out, "patch_emb.");
    for (std::size_t l = 0; l < grads_.blocks.size(); ++l) {
        for (auto& v : grads_.blocks[l].views("blocks." + std::to_string(l) + ".")) out.push_back(v);
    }
    for (std::size_t k = 0; k < grads_.stages.size(); ++k) {
        const std::string sp = "stages." + std::to_string(k) + ".";
        auto& sg = grads_.stages[k];
        for (std::size_t i = 0; i < sg.blocks.size(); ++i) {
            const std::string bp = sp + "blocks." + std::to_string(i) + ".";
            for (auto& v : sg.blocks[i].block.views(bp)) out.push_back(v);
            out.push_back(view_of(bp + "rel_pos_table", sg.blocks[i].rel_pos_table));
        }
        if (stages[k].merges) {
            for (auto& v : sg.merge.norm.views(sp + "merge.norm.")) out.push_back(v);
            out.push_back(view_of(sp + "merge.reduction.weight", sg.merge.reduction.weight));
        }
    }
    if (ln_f.width() > 0) {
        for (auto& v : grads_.ln_f.views("ln_f.")) out.push_back(v);
    }
    out.push_back(view_of("head.weight", grads_.head.weight));
    if (head.has_bias()) out.push_back(view_of("head.bias", grads_.head.bias));
    return out;
}

void ImageClassifier::zero_grad() {
    grads_.patch_emb.zero();
    for (auto& g : grads_.blocks) g.zero();
    for (std::size_t k = 0; k < grads_.stages.size(); ++k) {
        for (auto& g : grads_.stages[k].blocks) {
            g.block.zero();
            g.rel_pos_table.fill(0.0f);
        }
        if (stages[k].merges) {
            grads_.stages[k].merge.norm.zero();
            grads_.stages[k].merge.reduction.zero();
        }
    }
    if (ln_f.width() > 0) grads_.ln_f.zero();
    grads_.head.zero();
}

}  // namespace attnlab
