#include "attnlab/model/lstm/lstm_models.hpp"

#include <algorithm>
#include <cmath>

#include <xtensor/xbuilder.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "../sampling.hpp"

namespace attnlab {

namespace {
using detail::as_row;
using detail::choose_token;

// config, validated, if it describes an LSTM of this kind (ConfigError otherwise).
const ModelConfig& lstm_config(const ModelConfig& config, ModelKind kind, const char* where) {
    config.validate();
    if (config.architecture != Architecture::lstm) {
        fail<ConfigError>(where, ": config.architecture must be lstm, got ", architecture_name(config.architecture));
    }
    if (config.kind != kind) {
        fail<ConfigError>(where, ": config.kind must be ", model_kind_name(kind), ", got ", model_kind_name(config.kind));
    }
    return config;
}

void check_batch(const Index2& tokens, const char* where) {
    if (tokens.shape(0) == 0 || tokens.shape(1) == 0) {
        fail<ValueError>(where, ": tokens must be a non-empty (B, T) batch, got (", tokens.shape(0), ", ",
                         tokens.shape(1), ")");
    }
}

// The shared forward: x = tok_emb[tokens] (B, T, C), then the LSTM from zero states into
// cache.out. Training keeps the LSTM's cache for backward.
void trunk_forward(const LstmTrunk& trunk, const Index2& tokens, LstmTrunkCache& cache, bool training) {
    trunk.tok_emb.forward(tokens, cache.x);  // (B, T, C)
    if (training) {
        trunk.lstm.forward(cache.x, nullptr, nullptr, cache.lstm, cache.out);
        cache.tokens = tokens;
    } else {
        cache.out = trunk.lstm.forward(cache.x);
    }
    cache.valid = training;
}

// Backward of trunk_forward from cache.dout (B, T, C) into grads.
void trunk_backward(const LstmTrunk& trunk, LstmTrunkCache& cache, LstmTrunkGrad& grads) {
    trunk.lstm.backward(cache.dout, nullptr, nullptr, cache.lstm, grads.lstm, cache.dx, nullptr, nullptr);
    trunk.tok_emb.backward(cache.tokens, cache.dx, grads.tok_emb);
}
}  // namespace

// ---- LstmTrunk ----

LstmTrunk::LstmTrunk(const ModelConfig& config, Rng& rng)
    : tok_emb(config.vocab_size, config.d_model, rng),
      lstm(LstmConfig{config.d_model, config.d_model, config.num_layers, config.bias}, rng) {}

void LstmTrunk::parameters(std::vector<ParameterView>& out) {
    for (auto& p : tok_emb.parameters("tok_emb.")) out.push_back(p);
    for (auto& p : lstm.parameters("lstm.")) out.push_back(p);
}

LstmTrunkGrad::LstmTrunkGrad(LstmTrunk& trunk) : tok_emb(trunk.tok_emb), lstm(trunk.lstm) {}

void LstmTrunkGrad::zero() {
    tok_emb.zero();
    lstm.zero();
}

void LstmTrunkGrad::views(std::vector<ParameterView>& out) {
    for (auto& p : tok_emb.views("tok_emb.")) out.push_back(p);
    for (auto& p : lstm.views("lstm.")) out.push_back(p);
}

// ---- LstmLM ----

LstmLM::LstmLM(const ModelConfig& config, Rng& rng)
    : trunk(lstm_config(config, ModelKind::decoder, "LstmLM"), rng), config_(config) {
    if (!config.tie_weights) {
        head = Linear(config.d_model, config.vocab_size, /*with_bias=*/false, rng);
        head_grad_ = xt::zeros<float>(head.weight.shape());
    }
    grads_ = LstmTrunkGrad(trunk);
}

void LstmLM::logits_of(const float* h, std::size_t n, float* logits) const {
    const Tensor2& w = head_weight();  // (V, C)
    const std::size_t v = config_.vocab_size, c = config_.d_model;
    kernels::matmul_nt(h, c, w.data(), c, logits, v, n, v, c);
}

Tensor3 LstmLM::run(const Index2& tokens, LstmTrunkCache& cache, bool training) const {
    check_batch(tokens, "LstmLM::forward");
    trunk.tok_emb.check_tokens(tokens, "LstmLM::forward");
    trunk_forward(trunk, tokens, cache, training);
    const std::size_t b = tokens.shape(0), t = tokens.shape(1);
    Tensor3 logits = Tensor3::from_shape({b, t, config_.vocab_size});  // (B, T, V)
    logits_of(cache.out.output.data(), b * t, logits.data());
    return logits;
}

Tensor3 LstmLM::forward(const Index2& tokens) { return run(tokens, cache_, training_); }

Tensor3 LstmLM::logits(const Index2& tokens) const {
    LstmTrunkCache local;
    return run(tokens, local, false);
}

void LstmLM::backward(const Tensor3& dlogits) {
    if (!cache_.valid) fail<ValueError>("LstmLM::backward: no training-mode forward to differentiate");
    const std::size_t b = cache_.tokens.shape(0), t = cache_.tokens.shape(1), v = config_.vocab_size,
                      c = config_.d_model;
    if (dlogits.shape(0) != b || dlogits.shape(1) != t || dlogits.shape(2) != v) {
        fail<ShapeError>("LstmLM::backward: dlogits must be (", b, ", ", t, ", ", v, "), got (", dlogits.shape(0), ", ",
                         dlogits.shape(1), ", ", dlogits.shape(2), ")");
    }
    const float* h = cache_.out.output.data();  // (B·T, C)
    // logits = h·Wᵀ: dW (V, C) += dlogitsᵀ·h (into tok_emb's gradient when tied), dh = dlogits·W.
    float* dw = config_.tie_weights ? grads_.tok_emb.weight.data() : head_grad_.data();
    kernels::matmul_tn(dlogits.data(), v, h, c, dw, c, v, c, b * t, Accumulate::yes);
    cache_.dout.resize({b, t, c});
    kernels::matmul_nn(dlogits.data(), v, head_weight().data(), c, cache_.dout.data(), c, b * t, c, v);
    trunk_backward(trunk, cache_, grads_);
}

CrossEntropyResult LstmLM::loss_and_backward(const Index2& tokens, const Index2& targets) {
    if (targets.shape(0) != tokens.shape(0) || targets.shape(1) != tokens.shape(1)) {
        fail<ShapeError>("LstmLM::loss_and_backward: targets (", targets.shape(0), ", ", targets.shape(1),
                         ") must have the shape of tokens (", tokens.shape(0), ", ", tokens.shape(1), ")");
    }
    const bool was_training = training_;
    training_ = true;
    Tensor3 logits;
    try {
        logits = forward(tokens);  // (B, T, V)
    } catch (...) {
        training_ = was_training;
        throw;
    }
    training_ = was_training;
    const std::size_t n = tokens.size(), v = config_.vocab_size;
    logits_.resize({n, v});
    std::copy(logits.begin(), logits.end(), logits_.begin());
    targets_.resize({n});
    std::copy(targets.begin(), targets.end(), targets_.begin());
    const CrossEntropyResult result = cross_entropy_forward(logits_, targets_, &ce_);
    cross_entropy_backward(ce_, loss_scale_, dlogits_);  // (B·T, V)
    Tensor3 dlogits = Tensor3::from_shape({tokens.shape(0), tokens.shape(1), v});
    std::copy(dlogits_.begin(), dlogits_.end(), dlogits.begin());
    backward(dlogits);
    return result;
}

void LstmLM::check_generate(const std::vector<std::int32_t>& prompt, const GenerateOptions& options,
                            const char* where) const {
    if (prompt.empty()) fail<ValueError>(where, ": the prompt must hold at least one token");
    if (!(options.temperature >= 0.0f) || !std::isfinite(options.temperature)) {
        fail<ValueError>(where, ": temperature must be finite and >= 0 (0 = greedy), got ", options.temperature);
    }
    trunk.tok_emb.check_tokens(as_row(prompt), where);
}

GenerateResult LstmLM::generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                const GenerateOptions& options) const {
    check_generate(prompt, options, "LstmLM::generate");
    const std::size_t v = config_.vocab_size, c = config_.d_model;
    GenerateResult result{prompt, Tensor2::from_shape({max_new_tokens, v})};
    Rng rng(options.seed);
    // The prompt once, then one step per token from the carried (h, c) (L, 1, C).
    LstmOutput state = trunk.lstm.forward(trunk.tok_emb.forward(as_row(prompt)));
    for (std::size_t step = 0; step < max_new_tokens; ++step) {
        const float* last = state.output.data() + (state.output.shape(1) - 1) * c;  // (C)
        float* logits = result.logits.data() + step * v;                           // (V)
        logits_of(last, 1, logits);
        const std::int32_t token = choose_token(logits, v, options.temperature, rng);
        result.tokens.push_back(token);
        if (step + 1 < max_new_tokens) {
            const Tensor3 x = trunk.tok_emb.forward(as_row({token}));  // (1, 1, C)
            state = trunk.lstm.forward(x, &state.h, &state.c);
        }
    }
    return result;
}

GenerateResult LstmLM::generate_uncached(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                         const GenerateOptions& options) const {
    check_generate(prompt, options, "LstmLM::generate_uncached");
    const std::size_t v = config_.vocab_size, c = config_.d_model;
    GenerateResult result{prompt, Tensor2::from_shape({max_new_tokens, v})};
    Rng rng(options.seed);
    for (std::size_t step = 0; step < max_new_tokens; ++step) {
        const LstmOutput out = trunk.lstm.forward(trunk.tok_emb.forward(as_row(result.tokens)));  // (1, T, C)
        float* logits = result.logits.data() + step * v;
        logits_of(out.output.data() + (out.output.shape(1) - 1) * c, 1, logits);
        result.tokens.push_back(choose_token(logits, v, options.temperature, rng));
    }
    return result;
}

std::vector<ParameterView> LstmLM::parameters() {
    std::vector<ParameterView> out;
    trunk.parameters(out);
    if (head.weight.size() > 0) out.push_back(view_of("head.weight", head.weight));
    return out;
}

std::vector<ParameterView> LstmLM::gradients() {
    std::vector<ParameterView> out;
    grads_.views(out);
    if (head_grad_.size() > 0) out.push_back(view_of("head.weight", head_grad_));
    return out;
}

void LstmLM::zero_grad() {
    grads_.zero();
    head_grad_.fill(0.0f);
}

// ---- LstmClassifier ----

LstmClassifier::LstmClassifier(const ModelConfig& config, Rng& rng)
    : trunk(lstm_config(config, ModelKind::encoder, "LstmClassifier"), rng),
      head(config.d_model, config.num_classes, config.bias, rng),
      config_(config),
      head_grad_(head) {
    grads_ = LstmTrunkGrad(trunk);
}

Tensor2 LstmClassifier::run(const Index2& tokens, const Mask2& padding, Cache& cache, bool training) const {
    constexpr const char* where = "LstmClassifier::forward";
    check_batch(tokens, where);
    trunk.tok_emb.check_tokens(tokens, where);
    const std::size_t b = tokens.shape(0), t = tokens.shape(1), c = config_.d_model;
    const bool padded = padding.size() > 0;
    if (padded && (padding.shape(0) != b || padding.shape(1) != t)) {
        fail<ShapeError>(where, ": padding (", padding.shape(0), ", ", padding.shape(1), ") must have the shape of tokens (",
                         b, ", ", t, ")");
    }
    cache.last.assign(b, t - 1);
    if (padded) {
        for (std::size_t r = 0; r < b; ++r) {
            std::size_t n = 0;
            while (n < t && padding(r, n) == 0) ++n;
            if (n == 0) fail<ValueError>(where, ": row ", r, " is all padding");
            for (std::size_t j = n; j < t; ++j) {
                if (padding(r, j) == 0) {
                    fail<ValueError>(where, ": row ", r, " has a token at ", j, " after padding at ", n,
                                     "; an LSTM classifier needs trailing padding");
                }
            }
            cache.last[r] = n - 1;
        }
    }
    trunk_forward(trunk, tokens, cache.trunk, training);
    cache.pooled.resize({b, c});  // (B, C) h at each row's last non-padding step
    for (std::size_t r = 0; r < b; ++r) {
        const float* h = cache.trunk.out.output.data() + (r * t + cache.last[r]) * c;
        std::copy_n(h, c, cache.pooled.data() + r * c);
    }
    return head.forward(cache.pooled);  // (B, K)
}

Tensor2 LstmClassifier::forward(const Index2& tokens, const Mask2& padding) {
    return run(tokens, padding, cache_, training_);
}

Tensor2 LstmClassifier::logits(const Index2& tokens, const Mask2& padding) const {
    Cache local;
    return run(tokens, padding, local, false);
}

void LstmClassifier::backward(const Tensor2& dlogits) {
    LstmTrunkCache& trunk_cache = cache_.trunk;
    if (!trunk_cache.valid) fail<ValueError>("LstmClassifier::backward: no training-mode forward to differentiate");
    const std::size_t b = trunk_cache.tokens.shape(0), t = trunk_cache.tokens.shape(1), c = config_.d_model,
                      k = config_.num_classes;
    if (dlogits.shape(0) != b || dlogits.shape(1) != k) {
        fail<ShapeError>("LstmClassifier::backward: dlogits must be (", b, ", ", k, "), got (", dlogits.shape(0), ", ",
                         dlogits.shape(1), ")");
    }
    dpooled_.resize({b, c});
    linear_backward(head, cache_.pooled.data(), b, dlogits.data(), head_grad_, dpooled_.data());
    // Only the pooled step of each row receives a gradient from above.
    trunk_cache.dout.resize({b, t, c});
    trunk_cache.dout.fill(0.0f);
    for (std::size_t r = 0; r < b; ++r) {
        std::copy_n(dpooled_.data() + r * c, c, trunk_cache.dout.data() + (r * t + cache_.last[r]) * c);
    }
    trunk_backward(trunk, trunk_cache, grads_);
}

CrossEntropyResult LstmClassifier::loss_and_backward(const Index2& tokens, const Mask2& padding, const Index1& labels) {
    if (labels.size() != tokens.shape(0)) {
        fail<ShapeError>("LstmClassifier::loss_and_backward: labels (", labels.size(), ") must hold one per row of tokens (",
                         tokens.shape(0), ")");
    }
    const bool was_training = training_;
    training_ = true;
    try {
        logits_ = forward(tokens, padding);  // (B, K)
    } catch (...) {
        training_ = was_training;
        throw;
    }
    training_ = was_training;
    const CrossEntropyResult result = cross_entropy_forward(logits_, labels, &ce_);
    cross_entropy_backward(ce_, loss_scale_, dlogits_);  // (B, K)
    backward(dlogits_);
    return result;
}

std::vector<ParameterView> LstmClassifier::parameters() {
    std::vector<ParameterView> out;
    trunk.parameters(out);
    out.push_back(view_of("head.weight", head.weight));
    if (head.has_bias()) out.push_back(view_of("head.bias", head.bias));
    return out;
}

std::vector<ParameterView> LstmClassifier::gradients() {
    std::vector<ParameterView> out;
    grads_.views(out);
    out.push_back(view_of("head.weight", head_grad_.weight));
    if (head_grad_.bias.size() > 0) out.push_back(view_of("head.bias", head_grad_.bias));
    return out;
}

void LstmClassifier::zero_grad() {
    grads_.zero();
    head_grad_.zero();
}

}  // namespace attnlab
