#include "attnlab/model/token/decoder_lm.hpp"

#include <cmath>
#include <optional>

#include <xtensor/xbuilder.hpp>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "micro_batches.hpp"
#include "../sampling.hpp"

namespace attnlab {

namespace {
using detail::as_row;
using detail::choose_token;

// config, validated, if it describes a decoder (ConfigError otherwise).
const ModelConfig& decoder_config(const ModelConfig& config) {
    config.validate();
    if (config.kind != ModelKind::decoder) {
        fail<ConfigError>("DecoderLM: config.kind must be decoder, got ", model_kind_name(config.kind));
    }
    if (config.architecture != Architecture::transformer) {
        fail<ConfigError>("DecoderLM: config.architecture must be transformer, got ",
                          architecture_name(config.architecture), " (see LstmLM)");
    }
    return config;
}

}  // namespace

DecoderLMGrad::DecoderLMGrad(const DecoderLM& model) : trunk(model.trunk) {
    if (model.head.weight.size() > 0) head = xt::zeros<float>(model.head.weight.shape());
}

void DecoderLMGrad::zero() {
    trunk.zero();
    head.fill(0.0f);
}

void DecoderLMGrad::add(const DecoderLMGrad& other) {
    trunk.add(other.trunk);
    detail::add_gradient_tensor(head, other.head);
}

DecoderLM::DecoderLM(const ModelConfig& config, Rng& rng) : trunk(decoder_config(config), rng) {
    if (!config.tie_weights) head = Linear(config.d_model, config.vocab_size, /*with_bias=*/false, rng);
    dropout_rng_ = Rng(rng.next_u64());
    grads_ = DecoderLMGrad(*this);
}

void DecoderLM::set_gradient_checkpointing(bool on) { trunk.set_gradient_checkpointing(on); }

Tensor3 DecoderLM::logits_of(const Tensor3& h) const {
    const Tensor2& w = head_weight();  // (V, C)
    const std::size_t rows = h.shape(0) * h.shape(1), c = h.shape(2), v = w.shape(0);
    Tensor3 logits = Tensor3::from_shape({h.shape(0), h.shape(1), v});  // (B, T, V)
    kernels::matmul_nt(h.data(), c, w.data(), c, logits.data(), v, rows, v, c);
    return logits;
}

const Tensor3& DecoderLM::run(const Index2& tokens, const std::vector<StageObserver*>& observers,
                              DecoderLMCache& cache, bool training, Rng* dropout_rng) const {
    trunk.check_input(tokens, Mask2(), "DecoderLM::forward");
    const Tensor3& h = trunk.forward(tokens, Mask2(), config().causal, observers, cache.trunk, training, dropout_rng);
    if (training) cache.valid = true;
    return h;  // (B, T, C)
}

Tensor3 DecoderLM::run_logits(const Index2& tokens, const std::vector<StageObserver*>& observers) const {
    DecoderLMCache local;
    return logits_of(run(tokens, observers, local, false, nullptr));
}

const Tensor3& DecoderLM::forward_hidden(const Index2& tokens, DecoderLMCache& local) {
    const std::vector<StageObserver*>& observers = trunk.start_attention_stats(tokens.shape(1));
    const Tensor3& h = training_ ? run(tokens, observers, cache_, true, &dropout_rng_)
                                 : run(tokens, observers, local, false, nullptr);
    trunk.finish_attention_stats();
    return h;
}

Tensor3 DecoderLM::forward(const Index2& tokens) {
    DecoderLMCache local;
    return logits_of(forward_hidden(tokens, local));
}

void DecoderLM::backward(const Tensor3& dlogits) {
    constexpr const char* where = "DecoderLM::backward";
    if (!cache_.valid) fail<ValueError>(where, ": no training-mode forward to differentiate (call train() and forward first)");
    const Index2& tokens = cache_.trunk.tokens;
    require_shape(dlogits, {static_cast<std::ptrdiff_t>(tokens.shape(0)), static_cast<std::ptrdiff_t>(tokens.shape(1)),
                            static_cast<std::ptrdiff_t>(config().vocab_size)},
                  where, "dlogits (B, T, V)");
    backward_rows(cache_, dlogits.data(), grads_);
}

void DecoderLM::backward_rows(DecoderLMCache& cache, const float* dlogits, DecoderLMGrad& grads) const {
    const std::size_t batch = cache.trunk.tokens.shape(0), t = cache.trunk.tokens.shape(1), c = config().d_model;
    const std::size_t v = config().vocab_size, rows = batch * t;
    // logits = h·Wᵀ with W the head, or the token embedding when tied (dW then also collects the
    // embedding's own gradient in the trunk's backward)
    const Tensor2& w = head_weight();
    Tensor2& dw = config().tie_weights ? grads.trunk.tok_emb.weight : grads.head;
    Tensor3& dh = cache.trunk.dh;  // (B, T, C)
    dh.resize({batch, t, c});
    kernels::matmul_nn(dlogits, v, w.data(), c, dh.data(), c, rows, c, v);
    kernels::matmul_tn(dlogits, v, trunk.output(cache.trunk).data(), c, dw.data(), c, v, c, rows, Accumulate::yes);
    trunk.backward(cache.trunk, grads.trunk);
}

CrossEntropyResult DecoderLM::loss_rows_and_backward(DecoderLMCache& cache, const Tensor3& h, const Index2& targets,
                                                     std::size_t counted, DecoderLMGrad& grads) const {
    const std::size_t rows = targets.size(), v = config().vocab_size, c = config().d_model;
    // Cross-entropy over (B·T, V) rows, computed straight into the cache's buffers.
    const Tensor2& w = head_weight();
    Tensor2& logits = cache.logits;
    logits.resize({rows, v});
    kernels::matmul_nt(h.data(), c, w.data(), c, logits.data(), v, rows, v, c);
    Index1& flat_targets = cache.targets;
    flat_targets.resize({rows});
    std::copy(targets.begin(), targets.end(), flat_targets.begin());
    const CrossEntropyResult result = cross_entropy_forward(logits, flat_targets, &cache.ce);
    cache.ce.count = counted;  // dlogits = (p - onehot) / counted
    cross_entropy_backward(cache.ce, loss_scale_, cache.dlogits);
    backward_rows(cache, cache.dlogits.data(), grads);
    return result;
}

CrossEntropyResult DecoderLM::loss_and_backward(const Index2& tokens, const Index2& targets) {
    constexpr const char* where = "DecoderLM::loss_and_backward";
    require_shape(targets, {static_cast<std::ptrdiff_t>(tokens.shape(0)), static_cast<std::ptrdiff_t>(tokens.shape(1))},
                  where, "targets (B, T) matching tokens");
    // An evaluation forward keeps no cache: differentiating would read the last training
    // step's cache with this call's gradient rows.
    if (!training_) {
        fail<ValueError>(where, ": the model is in evaluation mode (eval()), whose forward keeps nothing to "
                         "differentiate; call train() first");
    }
    const std::size_t threads = available_threads();
    const std::size_t split = detail::micro_batch_count(tokens.shape(0), tokens.shape(1), threads);
    if (split > 1) return loss_and_backward_split(tokens, targets, split, std::min(threads, split));
    DecoderLMCache local;
    const Tensor3& h = forward_hidden(tokens, local);  // (B, T, C)
    std::size_t counted = 0;
    for (const std::int32_t y : targets) counted += y != kIgnoreTarget;
    return loss_rows_and_backward(cache_, h, targets, counted, grads_);
}

CrossEntropyResult DecoderLM::loss_and_backward_split(const Index2& tokens, const Index2& targets, std::size_t count,
                                                      std::size_t lanes) {
    constexpr const char* where = "DecoderLM::loss_and_backward";
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1), v = config().vocab_size;
    // What a slice would report with its own row numbers is checked here, against the batch's.
    trunk.tok_emb.check_tokens(tokens, where);
    // The loss is the mean over the whole batch's counted targets.
    const std::size_t counted = detail::counted_targets(targets.data(), targets.size(), v, where, "target",
                                                        [&](std::size_t i) {
                                                            return "at (" + std::to_string(i / t) + ", " +
                                                                   std::to_string(i % t) + ")";
                                                        });
    detail::fill_slices(split_, count, batch, dropout_rng_, [&](DecoderLMSlice& s, std::size_t b0, std::size_t b1) {
        detail::copy_sequences(tokens, b0, b1, s.tokens);
        detail::copy_sequences(targets, b0, b1, s.targets);
    });
    const std::vector<StageObserver*>& observers = trunk.start_attention_stats(t);
    detail::run_split_lanes(split_, lanes, *this, grads_,
                            [&](DecoderLMSlice& s, DecoderLMCache& cache, DecoderLMGrad& grads) {
                                const Tensor3& h = run(s.tokens, observers, cache, true, &s.dropout);
                                s.result = loss_rows_and_backward(cache, h, s.targets, counted, grads);
                            });
    trunk.finish_attention_stats();
    cache_.valid = false;  // the whole batch's cache holds no forward of this step
    return detail::combined_result(split_.slices);
}

Tensor3 DecoderLM::forward_observed(const Index2& tokens, const std::vector<StageObserver*>& observers) const {
    if (!observers.empty() && observers.size() != trunk.blocks.size()) {
        fail<ValueError>("DecoderLM::forward_observed: need one observer per block (", trunk.blocks.size(), "), got ",
                         observers.size());
    }
    return run_logits(tokens, observers);
}

Tensor3 DecoderLM::forward_hooked(const Index2& tokens, const std::vector<StageObserver*>& observers,
                                  ResidualHook* residuals) const {
    constexpr const char* where = "DecoderLM::forward_hooked";
    if (!observers.empty() && observers.size() != trunk.blocks.size()) {
        fail<ValueError>(where, ": need one observer per block (", trunk.blocks.size(), "), got ", observers.size());
    }
    trunk.check_input(tokens, Mask2(), where);
    DecoderLMCache local;
    return logits_of(trunk.forward(tokens, Mask2(), config().causal, observers, local.trunk, /*training=*/false,
                                   nullptr, residuals));
}

Tensor4 DecoderLM::attention_maps(const Index2& tokens, std::size_t batch) const {
    return trunk.attention_maps(tokens, Mask2(), config().causal, batch, "DecoderLM::attention_maps", "DecoderLM::forward");
}

void DecoderLM::check_generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                               const GenerateOptions& options, const char* where) const {
    if (prompt.empty()) fail<ValueError>(where, ": the prompt must hold at least one token");
    if (!(options.temperature >= 0.0f) || !std::isfinite(options.temperature)) {
        fail<ValueError>(where, ": temperature must be finite and >= 0 (0 = greedy), got ", options.temperature);
    }
    if (config().positional == PositionalKind::learned && prompt.size() + max_new_tokens > config().max_len) {
        fail<ValueError>(where, ": prompt length ", prompt.size(), " + max_new_tokens ", max_new_tokens, " = ",
                         prompt.size() + max_new_tokens, " exceeds max_len ", config().max_len,
                         " of the learned position table");
    }
    trunk.tok_emb.check_tokens(as_row(prompt), where);
}

GenerateResult DecoderLM::generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                   const GenerateOptions& options) const {
    check_generate(prompt, max_new_tokens, options, "DecoderLM::generate");
    // A KV cache assumes earlier positions never see later ones; a non-causal model must
    // recompute everything for every new token.
    if (!config().causal) return generate_uncached(prompt, max_new_tokens, options);
    const std::size_t v = config().vocab_size, c = config().d_model;
    GenerateResult result{prompt, Tensor2::from_shape({max_new_tokens, v})};
    Rng rng(options.seed);
    std::vector<KvCache> kv(trunk.blocks.size());
    // First the whole prompt, then one new token per step, each at its absolute position.
    Index2 feed = as_row(prompt);
    std::size_t offset = 0;
    for (std::size_t step = 0; step < max_new_tokens; ++step) {
        const Tensor3 x = trunk.forward_incremental(feed, offset, kv);  // (1, T_new, C)
        Tensor3 last = Tensor3::from_shape({1, 1, c});               // (1, 1, C)
        std::copy_n(x.data() + (x.shape(1) - 1) * c, c, last.data());
        const Tensor3 logits = logits_of(last);  // (1, 1, V)
        std::copy_n(logits.data(), v, result.logits.data() + step * v);
        const std::int32_t token = choose_token(logits.data(), v, options.temperature, rng);
        offset = result.tokens.size();
        result.tokens.push_back(token);
        feed = as_row({token});
    }
    return result;
}

GenerateResult DecoderLM::generate_uncached(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                            const GenerateOptions& options) const {
    check_generate(prompt, max_new_tokens, options, "DecoderLM::generate_uncached");
    const std::size_t v = config().vocab_size;
    GenerateResult result{prompt, Tensor2::from_shape({max_new_tokens, v})};
    Rng rng(options.seed);
    for (std::size_t step = 0; step < max_new_tokens; ++step) {
        const Tensor3 logits = run_logits(as_row(result.tokens), {});  // (1, T, V)
        const float* row = logits.data() + (logits.shape(1) - 1) * v;
        std::copy_n(row, v, result.logits.data() + step * v);
        result.tokens.push_back(choose_token(row, v, options.temperature, rng));
    }
    return result;
}

std::vector<ParameterView> DecoderLM::parameters() {
    std::vector<ParameterView> out;
    trunk.parameters(out);
    if (head.weight.size() > 0) out.push_back(view_of("head.weight", head.weight));
    return out;
}

std::vector<ParameterView> DecoderLM::gradients() {
    std::vector<ParameterView> out;
    grads_.trunk.views(out);
    if (grads_.head.size() > 0) out.push_back(view_of("head.weight", grads_.head));
    return out;
}

void DecoderLM::zero_grad() {
    // Tensor by tensor (not through gradients(), whose names would be built every step).
    grads_.zero();
}

}  // namespace attnlab
