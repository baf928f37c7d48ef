#include "attnlab/model/encoder_classifier.hpp"

#include <optional>

#include <xtensor/xbuilder.hpp>

#include "attnlab/core/thread_pool.hpp"
#include "trunk.hpp"

namespace attnlab {

namespace {
// padding: (B, T) or empty. ShapeError for another shape, ValueError naming a row with no token.
void check_padding(const Mask2& padding, std::size_t batch, std::size_t t, const char* where) {
    if (padding.size() == 0) return;
    require_shape(padding, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(t)}, where,
                  "padding (B, T) matching tokens");
    for (std::size_t b = 0; b < batch; ++b) {
        std::size_t valid = 0;
        for (std::size_t i = 0; i < t; ++i) valid += padding(b, i) == 0;
        if (valid == 0) fail<ValueError>(where, ": row ", b, " of the batch is all padding (T = ", t, ")");
    }
}
}  // namespace

EncoderClassifierGrad::EncoderClassifierGrad(const EncoderClassifier& model)
    : tok_emb(model.tok_emb), head(model.head) {
    if (model.pos_emb.table.size() > 0) pos_emb = xt::zeros<float>(model.pos_emb.table.shape());
    if (model.cls_token.size() > 0) cls_token = xt::zeros<float>(model.cls_token.shape());
    for (const auto& block : model.blocks) blocks.emplace_back(block);
    if (model.ln_f.width() > 0) ln_f = LayerNormGrad(model.ln_f);
}

void EncoderClassifierGrad::zero() {
    tok_emb.zero();
    pos_emb.fill(0.0f);
    cls_token.fill(0.0f);
    for (auto& block : blocks) block.zero();
    ln_f.zero();
    head.zero();
}

void EncoderClassifierGrad::add(const EncoderClassifierGrad& other) {
    detail::add_gradient_tensor(tok_emb.weight, other.tok_emb.weight);
    detail::add_gradient_tensor(pos_emb, other.pos_emb);
    detail::add_gradient_tensor(cls_token, other.cls_token);
    for (std::size_t l = 0; l < blocks.size(); ++l) detail::add_gradients(blocks[l], other.blocks[l]);
    detail::add_gradients(ln_f, other.ln_f);
    detail::add_gradients(head, other.head);
}

EncoderClassifier::EncoderClassifier(const ModelConfig& config, Rng& rng) : config_(config) {
    config_.validate();
    if (config_.kind != ModelKind::encoder) {
        fail<ConfigError>("EncoderClassifier: config.kind must be encoder, got ", model_kind_name(config_.kind));
    }
    const std::size_t c = config_.d_model;
    tok_emb = Embedding(config_.vocab_size, c, rng);
    if (config_.positional == PositionalKind::learned) pos_emb = LearnedPositionalEmbedding(config_.max_len, c, rng);
    if (config_.pooling == Pooling::cls) {
        cls_token = Tensor1::from_shape({c});
        for (auto& v : cls_token) v = 0.02f * rng.normal();
    }
    for (std::size_t l = 0; l < config_.num_layers; ++l) blocks.emplace_back(config_, rng);
    if (config_.norm == NormPlacement::pre) ln_f = LayerNorm(c);
    head = Linear(c, config_.num_classes, config_.bias, rng);
    dropout_rng_ = Rng(rng.next_u64());
    grads_ = EncoderClassifierGrad(*this);
}

void EncoderClassifier::set_gradient_checkpointing(bool on) {
    config_.gradient_checkpointing = on;
    for (auto& block : blocks) block.set_gradient_checkpointing(on);
}

void EncoderClassifier::run(const Index2& tokens, const Mask2& padding, const std::vector<StageObserver*>& observers,
                            EncoderClassifierCache* cache, Rng* dropout_rng, Tensor2& logits) const {
    constexpr const char* where = "EncoderClassifier::forward";
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1), c = config_.d_model;
    if (batch == 0 || t == 0) fail<ShapeError>(where, ": tokens must be non-empty (B, T), got ", shape_string(tokens.shape()));
    check_padding(padding, batch, t, where);
    const bool cls = config_.pooling == Pooling::cls;
    const std::size_t positions = cls ? t + 1 : t;  // T'
    if (config_.positional == PositionalKind::learned) pos_emb.check_range(positions, 0, where);
    // Training writes into the cache's buffers (kept from step to step); inference into its own.
    EncoderClassifierCache local;
    EncoderClassifierCache& buffers = cache ? *cache : local;
    TrunkBuffers& trunk = buffers.trunk;
    // x = tok_emb(tokens), with the CLS vector in front: (B, T', C)
    Tensor3& x = trunk.x;
    AttentionOptions& options = buffers.options;
    detail::set_attention_options(config_, options);
    Mask2& key_padding = options.mask.key_padding;  // (B, T')
    if (!cls) {
        tok_emb.forward(tokens, x);
        key_padding = padding;
    } else {
        tok_emb.forward(tokens, buffers.embedded);
        x.resize({batch, positions, c});
        for (std::size_t b = 0; b < batch; ++b) {
            float* dst = x.data() + b * positions * c;
            std::copy(cls_token.begin(), cls_token.end(), dst);
            std::copy_n(buffers.embedded.data() + b * t * c, t * c, dst + c);
        }
        if (padding.size() == 0) {
            key_padding = padding;
        } else {
            key_padding.resize({batch, positions});
            for (std::size_t b = 0; b < batch; ++b) {
                key_padding(b, 0) = 0;
                for (std::size_t i = 0; i < t; ++i) key_padding(b, i + 1) = padding(b, i);
            }
        }
    }
    detail::add_positional(x, config_.positional, pos_emb, 0);
    if (cache) {
        cache->tokens = tokens;  // the first block's input tables point into this copy
        if (cls) detail::clear_input_tables(buffers.blocks);
        else detail::set_input_tables(config_, blocks, tok_emb, pos_emb, cache->tokens, buffers.blocks, trunk);
    }
    Tensor3 h_inference;
    const Tensor3& h_blocks =
        cache ? detail::blocks_forward(blocks, x, options, observers, buffers.blocks, dropout_rng, trunk)
              : (h_inference = detail::blocks_forward(blocks, std::move(x), options, observers));
    const Tensor3* h = &h_blocks;  // (B, T', C)
    if (config_.norm == NormPlacement::pre) {
        ln_f.forward(h_blocks, cache ? &buffers.ln_f : nullptr, trunk.normed);
        h = &trunk.normed;
    }
    // pooled[b] = h[b, 0] (CLS) or Σ_{t not padding} h[b, t] / count_b (mean)
    Tensor2& pooled = buffers.pooled;  // (B, C)
    pooled.resize({batch, c});
    pooled.fill(0.0f);
    std::vector<float>& pool_weight = buffers.pool_weight;
    pool_weight.assign(batch, 1.0f);
    for (std::size_t b = 0; b < batch; ++b) {
        float* p = pooled.data() + b * c;
        const float* hb = h->data() + b * positions * c;
        if (cls) {
            std::copy_n(hb, c, p);
            continue;
        }
        std::size_t count = 0;
        for (std::size_t i = 0; i < positions; ++i) {
            if (key_padding.size() > 0 && key_padding(b, i)) continue;
            for (std::size_t j = 0; j < c; ++j) p[j] += hb[i * c + j];
            ++count;
        }
        pool_weight[b] = 1.0f / static_cast<float>(count);
        for (std::size_t j = 0; j < c; ++j) p[j] *= pool_weight[b];
    }
    logits.resize({batch, config_.num_classes});  // (B, K)
    head.forward(pooled.data(), batch, logits.data());
    if (cache) {
        cache->valid = true;
        cache->positions = positions;
    }
}

Tensor2 EncoderClassifier::forward(const Index2& tokens, const Mask2& padding) {
    Tensor2 logits;
    forward_to(tokens, padding, logits);
    return logits;
}

void EncoderClassifier::forward_to(const Index2& tokens, const Mask2& padding, Tensor2& logits) {
    static const std::vector<StageObserver*> kNoObservers;
    // The blocks see T' = T + 1 positions with a CLS token (run()).
    const std::size_t positions = tokens.shape(1) + (config_.pooling == Pooling::cls ? 1 : 0);
    const std::vector<StageObserver*>& observers =
        record_stats_ ? stats_collector_.start(blocks.size(), config_.num_heads, positions * positions) : kNoObservers;
    if (training_) run(tokens, padding, observers, &cache_, &dropout_rng_, logits);
    else run(tokens, padding, observers, nullptr, nullptr, logits);
    if (record_stats_) stats_collector_.finish(stats_);
}

void EncoderClassifier::backward(const Tensor2& dlogits) {
    if (!cache_.valid) {
        fail<ValueError>("EncoderClassifier::backward: no training-mode forward to differentiate (call train() and "
                         "forward first)");
    }
    backward_from(cache_, dlogits, grads_);
}

void EncoderClassifier::backward_from(EncoderClassifierCache& cache, const Tensor2& dlogits,
                                      EncoderClassifierGrad& grads) const {
    constexpr const char* where = "EncoderClassifier::backward";
    const std::size_t batch = cache.tokens.shape(0), t = cache.tokens.shape(1), c = config_.d_model;
    const std::size_t positions = cache.positions;
    require_shape(dlogits, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(config_.num_classes)},
                  where, "dlogits (B, K)");
    TrunkBuffers& trunk = cache.trunk;
    // logits = pooled·W_headᵀ + b
    Tensor2& dpooled = cache.dpooled;
    dpooled.resize({batch, c});
    linear_backward(head, cache.pooled.data(), batch, dlogits.data(), grads.head, dpooled.data());
    // pooled = h[:, 0] or the masked mean of h
    Tensor3& dh = trunk.dh;  // (B, T', C)
    dh.resize({batch, positions, c});
    dh.fill(0.0f);
    const Mask2& kp = cache.options.mask.key_padding;
    const bool cls = config_.pooling == Pooling::cls;
    for (std::size_t b = 0; b < batch; ++b) {
        const float* dp = dpooled.data() + b * c;
        float* dhb = dh.data() + b * positions * c;
        if (cls) {
            std::copy_n(dp, c, dhb);
            continue;
        }
        for (std::size_t i = 0; i < positions; ++i) {
            if (kp.size() > 0 && kp(b, i)) continue;
            for (std::size_t j = 0; j < c; ++j) dhb[i * c + j] = dp[j] * cache.pool_weight[b];
        }
    }
    const Tensor3* dblocks = &dh;
    if (config_.norm == NormPlacement::pre) {
        ln_f.backward(dh, cache.ln_f, grads.ln_f, trunk.dnorm);
        dblocks = &trunk.dnorm;
    }
    Tensor3& dx = trunk.dx;
    detail::set_input_table_gradients(trunk, grads.tok_emb.weight,
                                      config_.positional == PositionalKind::learned ? &grads.pos_emb : nullptr);
    detail::blocks_backward(blocks, *dblocks, cache.blocks, cache.options, grads.blocks, dx, trunk);  // (B, T', C)
    if (config_.positional == PositionalKind::learned) detail::learned_positional_backward(dx, 0, grads.pos_emb);
    if (!cls) {
        tok_emb.backward(cache.tokens, dx, grads.tok_emb);
        return;
    }
    // x[b, 0] = cls_token  =>  dcls += Σ_b dx[b, 0]; the token rows are x[:, 1:]
    Tensor3& dtok = cache.dtokens;
    dtok.resize({batch, t, c});
    for (std::size_t b = 0; b < batch; ++b) {
        const float* src = dx.data() + b * positions * c;
        for (std::size_t j = 0; j < c; ++j) grads.cls_token(j) += src[j];
        std::copy_n(src + c, t * c, dtok.data() + b * t * c);
    }
    tok_emb.backward(cache.tokens, dtok, grads.tok_emb);
}

CrossEntropyResult EncoderClassifier::loss_and_backward(const Index2& tokens, const Mask2& padding,
                                                        const Index1& labels) {
    if (!training_) {
        fail<ValueError>("EncoderClassifier::loss_and_backward: the model is in evaluation mode (eval()), whose forward "
                         "keeps nothing to differentiate; call train() first");
    }
    const std::size_t positions = tokens.shape(1) + (config_.pooling == Pooling::cls ? 1 : 0);
    const std::size_t threads = available_threads();
    const std::size_t split = detail::micro_batch_count(tokens.shape(0), positions, threads);
    if (split > 1) return loss_and_backward_split(tokens, padding, labels, split, std::min(threads, split));
    // Logits, loss cache and gradient in the model's cache: no allocation from step to step.
    forward_to(tokens, padding, cache_.logits);
    const CrossEntropyResult result = cross_entropy_forward(cache_.logits, labels, &cache_.ce);
    cross_entropy_backward(cache_.ce, 1.0f, cache_.dlogits);
    backward(cache_.dlogits);
    return result;
}

CrossEntropyResult EncoderClassifier::loss_and_backward_split(const Index2& tokens, const Mask2& padding,
                                                              const Index1& labels, std::size_t count,
                                                              std::size_t lanes) {
    constexpr const char* where = "EncoderClassifier::loss_and_backward";
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1), k = config_.num_classes;
    const std::size_t positions = t + (config_.pooling == Pooling::cls ? 1 : 0);  // T'
    // What a slice would report with its own row numbers is checked here, against the batch's.
    check_padding(padding, batch, t, where);
    require_shape(labels, {static_cast<std::ptrdiff_t>(batch)}, where, "labels (B) matching tokens (B, T)");
    tok_emb.check_tokens(tokens, where);
    // The loss is the mean over the whole batch's counted labels.
    const std::size_t counted = detail::counted_targets(labels.data(), batch, k, where, "label", [](std::size_t b) {
        return "of row " + std::to_string(b);
    });
    detail::fill_slices(split_, count, batch, dropout_rng_, [&](EncoderClassifierSlice& s, std::size_t b0,
                                                               std::size_t b1) {
        detail::copy_sequences(tokens, b0, b1, s.tokens);
        if (padding.size() > 0) detail::copy_sequences(padding, b0, b1, s.padding);
        else if (s.padding.size() > 0) s.padding = Mask2();
        detail::copy_sequences(labels, b0, b1, s.labels);
    });
    static const std::vector<StageObserver*> kNoObservers;
    // The statistics recorders take stages from any thread; they add up over the slices.
    const std::vector<StageObserver*>& observers =
        record_stats_ ? stats_collector_.start(blocks.size(), config_.num_heads, positions * positions) : kNoObservers;
    detail::run_split_lanes(split_, lanes, *this, grads_,
                            [&](EncoderClassifierSlice& s, EncoderClassifierCache& cache,
                                EncoderClassifierGrad& grads) {
                                run(s.tokens, s.padding, observers, &cache, &s.dropout, cache.logits);
                                s.result = cross_entropy_forward(cache.logits, s.labels, &cache.ce);
                                cache.ce.count = counted;  // dlogits = (p - onehot) / the batch's count
                                cross_entropy_backward(cache.ce, 1.0f, cache.dlogits);
                                backward_from(cache, cache.dlogits, grads);
                            });
    if (record_stats_) stats_collector_.finish(stats_);
    cache_.valid = false;  // the whole batch's cache holds no forward of this step
    return detail::combined_result(split_.slices);
}

Tensor2 EncoderClassifier::forward_observed(const Index2& tokens, const Mask2& padding,
                                            const std::vector<StageObserver*>& observers) const {
    if (!observers.empty() && observers.size() != blocks.size()) {
        fail<ValueError>("EncoderClassifier::forward_observed: need one observer per block (", blocks.size(),
                         "), got ", observers.size());
    }
    Tensor2 logits;
    run(tokens, padding, observers, nullptr, nullptr, logits);
    return logits;
}

Tensor4 EncoderClassifier::attention_maps(const Index2& tokens, const Mask2& padding, std::size_t batch) const {
    if (batch >= tokens.shape(0)) {
        fail<ValueError>("EncoderClassifier::attention_maps: batch ", batch, " out of range for B = ", tokens.shape(0));
    }
    detail::AttentionMapRecorder recorder(blocks.size());
    Tensor2 logits;
    run(tokens, padding, recorder.observers(), nullptr, nullptr, logits);
    return recorder.maps(batch, config_.num_heads);
}

std::vector<ParameterView> EncoderClassifier::parameters() {
    std::vector<ParameterView> out = tok_emb.parameters("tok_emb.");
    if (pos_emb.table.size() > 0) out.push_back(view_of("pos_emb.weight", pos_emb.table));
    if (cls_token.size() > 0) out.push_back(view_of("cls_token", cls_token));
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        const auto views = blocks[l].parameters("blocks." + std::to_string(l) + ".");
        out.insert(out.end(), views.begin(), views.end());
    }
    if (ln_f.width() > 0) {
        const auto views = ln_f.parameters("ln_f.");
        out.insert(out.end(), views.begin(), views.end());
    }
    out.push_back(view_of("head.weight", head.weight));
    if (head.has_bias()) out.push_back(view_of("head.bias", head.bias));
    return out;
}

std::vector<ParameterView> EncoderClassifier::gradients() {
    std::vector<ParameterView> out = grads_.tok_emb.views("tok_emb.");
    if (grads_.pos_emb.size() > 0) out.push_back(view_of("pos_emb.weight", grads_.pos_emb));
    if (grads_.cls_token.size() > 0) out.push_back(view_of("cls_token", grads_.cls_token));
    for (std::size_t l = 0; l < grads_.blocks.size(); ++l) {
        const auto views = grads_.blocks[l].views("blocks." + std::to_string(l) + ".");
        out.insert(out.end(), views.begin(), views.end());
    }
    if (grads_.ln_f.weight.size() > 0) {
        const auto views = grads_.ln_f.views("ln_f.");
        out.insert(out.end(), views.begin(), views.end());
    }
    out.push_back(view_of("head.weight", grads_.head.weight));
    if (grads_.head.bias.size() > 0) out.push_back(view_of("head.bias", grads_.head.bias));
    return out;
}

void EncoderClassifier::zero_grad() {
    // Tensor by tensor (not through gradients(), whose names would be built every step).
    grads_.zero();
}

}  // namespace attnlab
