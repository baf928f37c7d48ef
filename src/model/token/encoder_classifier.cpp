#include "attnlab/model/token/encoder_classifier.hpp"

#include <algorithm>
#include <string>

#include "attnlab/core/thread_pool.hpp"
#include "micro_batches.hpp"

namespace attnlab {

namespace {
// config, validated, if it describes an encoder (ConfigError otherwise).
const ModelConfig& encoder_config(const ModelConfig& config) {
    config.validate();
    if (config.kind != ModelKind::encoder) {
        fail<ConfigError>("EncoderClassifier: config.kind must be encoder, got ", model_kind_name(config.kind));
    }
    if (config.architecture != Architecture::transformer) {
        fail<ConfigError>("EncoderClassifier: config.architecture must be transformer, got ",
                          architecture_name(config.architecture), " (see LstmClassifier)");
    }
    return config;
}
}  // namespace

EncoderClassifierGrad::EncoderClassifierGrad(const EncoderClassifier& model) : trunk(model.trunk), head(model.head) {}

void EncoderClassifierGrad::zero() {
    trunk.zero();
    head.zero();
}

void EncoderClassifierGrad::add(const EncoderClassifierGrad& other) {
    trunk.add(other.trunk);
    detail::add_gradients(head, other.head);
}

EncoderClassifier::EncoderClassifier(const ModelConfig& config, Rng& rng) : trunk(encoder_config(config), rng) {
    head = Linear(config.d_model, config.num_classes, config.bias, rng);
    dropout_rng_ = Rng(rng.next_u64());
    grads_ = EncoderClassifierGrad(*this);
}

void EncoderClassifier::set_gradient_checkpointing(bool on) { trunk.set_gradient_checkpointing(on); }

void EncoderClassifier::run(const Index2& tokens, const Mask2& padding, const std::vector<StageObserver*>& observers,
                            EncoderClassifierCache& cache, bool training, Rng* dropout_rng, Tensor2& logits) const {
    trunk.check_input(tokens, padding, "EncoderClassifier::forward");
    const Tensor3& h = trunk.forward(tokens, padding, /*causal=*/false, observers, cache.trunk, training, dropout_rng);
    const std::size_t batch = tokens.shape(0), positions = cache.trunk.positions, c = config().d_model;
    const bool cls = trunk.cls_token.size() > 0;
    const Mask2& key_padding = cache.trunk.options.mask.key_padding;  // (B, T')
    // pooled[b] = h[b, 0] (CLS) or Σ_{t not padding} h[b, t] / count_b (mean)
    Tensor2& pooled = cache.pooled;  // (B, C)
    pooled.resize({batch, c});
    pooled.fill(0.0f);
    std::vector<float>& pool_weight = cache.pool_weight;
    pool_weight.assign(batch, 1.0f);
    for (std::size_t b = 0; b < batch; ++b) {
        float* p = pooled.data() + b * c;
        const float* hb = h.data() + b * positions * c;
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
    logits.resize({batch, config().num_classes});  // (B, K)
    head.forward(pooled.data(), batch, logits.data());
    if (training) cache.valid = true;
}

Tensor2 EncoderClassifier::forward(const Index2& tokens, const Mask2& padding) {
    Tensor2 logits;
    forward_to(tokens, padding, logits);
    return logits;
}

void EncoderClassifier::forward_to(const Index2& tokens, const Mask2& padding, Tensor2& logits) {
    const std::vector<StageObserver*>& observers = trunk.start_attention_stats(trunk.positions(tokens.shape(1)));
    if (training_) {
        run(tokens, padding, observers, cache_, true, &dropout_rng_, logits);
    } else {
        EncoderClassifierCache local;
        run(tokens, padding, observers, local, false, nullptr, logits);
    }
    trunk.finish_attention_stats();
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
    const std::size_t batch = cache.trunk.tokens.shape(0), c = config().d_model;
    const std::size_t positions = cache.trunk.positions;
    require_shape(dlogits, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(config().num_classes)},
                  where, "dlogits (B, K)");
    // logits = pooled·W_headᵀ + b
    Tensor2& dpooled = cache.dpooled;
    dpooled.resize({batch, c});
    linear_backward(head, cache.pooled.data(), batch, dlogits.data(), grads.head, dpooled.data());
    // pooled = h[:, 0] or the masked mean of h
    Tensor3& dh = cache.trunk.dh;  // (B, T', C)
    dh.resize({batch, positions, c});
    dh.fill(0.0f);
    const Mask2& kp = cache.trunk.options.mask.key_padding;
    const bool cls = trunk.cls_token.size() > 0;
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
    trunk.backward(cache.trunk, grads.trunk);
}

CrossEntropyResult EncoderClassifier::loss_and_backward(const Index2& tokens, const Mask2& padding,
                                                        const Index1& labels) {
    if (!training_) {
        fail<ValueError>("EncoderClassifier::loss_and_backward: the model is in evaluation mode (eval()), whose forward "
                         "keeps nothing to differentiate; call train() first");
    }
    const std::size_t threads = available_threads();
    const std::size_t split = detail::micro_batch_count(tokens.shape(0), trunk.positions(tokens.shape(1)), threads);
    if (split > 1) return loss_and_backward_split(tokens, padding, labels, split, std::min(threads, split));
    // Logits, loss cache and gradient in the model's cache: no allocation from step to step.
    forward_to(tokens, padding, cache_.logits);
    const CrossEntropyResult result = cross_entropy_forward(cache_.logits, labels, &cache_.ce);
    cross_entropy_backward(cache_.ce, loss_scale_, cache_.dlogits);
    backward(cache_.dlogits);
    return result;
}

CrossEntropyResult EncoderClassifier::loss_and_backward_split(const Index2& tokens, const Mask2& padding,
                                                              const Index1& labels, std::size_t count,
                                                              std::size_t lanes) {
    constexpr const char* where = "EncoderClassifier::loss_and_backward";
    const std::size_t batch = tokens.shape(0), k = config().num_classes;
    // What a slice would report with its own row numbers is checked here, against the batch's.
    trunk.check_input(tokens, padding, where);
    require_shape(labels, {static_cast<std::ptrdiff_t>(batch)}, where, "labels (B) matching tokens (B, T)");
    trunk.tok_emb.check_tokens(tokens, where);
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
    const std::vector<StageObserver*>& observers = trunk.start_attention_stats(trunk.positions(tokens.shape(1)));
    detail::run_split_lanes(split_, lanes, *this, grads_,
                            [&](EncoderClassifierSlice& s, EncoderClassifierCache& cache,
                                EncoderClassifierGrad& grads) {
                                run(s.tokens, s.padding, observers, cache, true, &s.dropout, cache.logits);
                                s.result = cross_entropy_forward(cache.logits, s.labels, &cache.ce);
                                cache.ce.count = counted;  // dlogits = (p - onehot) / the batch's count
                                cross_entropy_backward(cache.ce, loss_scale_, cache.dlogits);
                                backward_from(cache, cache.dlogits, grads);
                            });
    trunk.finish_attention_stats();
    cache_.valid = false;  // the whole batch's cache holds no forward of this step
    return detail::combined_result(split_.slices);
}

Tensor2 EncoderClassifier::forward_observed(const Index2& tokens, const Mask2& padding,
                                            const std::vector<StageObserver*>& observers) const {
    if (!observers.empty() && observers.size() != trunk.blocks.size()) {
        fail<ValueError>("EncoderClassifier::forward_observed: need one observer per block (", trunk.blocks.size(),
                         "), got ", observers.size());
    }
    Tensor2 logits;
    EncoderClassifierCache local;
    run(tokens, padding, observers, local, false, nullptr, logits);
    return logits;
}

Tensor4 EncoderClassifier::attention_maps(const Index2& tokens, const Mask2& padding, std::size_t batch) const {
    return trunk.attention_maps(tokens, padding, /*causal=*/false, batch, "EncoderClassifier::attention_maps",
                                "EncoderClassifier::forward");
}

std::vector<ParameterView> EncoderClassifier::parameters() {
    std::vector<ParameterView> out;
    trunk.parameters(out);
    out.push_back(view_of("head.weight", head.weight));
    if (head.has_bias()) out.push_back(view_of("head.bias", head.bias));
    return out;
}

std::vector<ParameterView> EncoderClassifier::gradients() {
    std::vector<ParameterView> out;
    grads_.trunk.views(out);
    out.push_back(view_of("head.weight", grads_.head.weight));
    if (grads_.head.bias.size() > 0) out.push_back(view_of("head.bias", grads_.head.bias));
    return out;
}

void EncoderClassifier::zero_grad() {
    // Tensor by tensor (not through gradients(), whose names would be built every step).
    grads_.zero();
}

}  // namespace attnlab
