#include "attnlab/model/decoder_lm.hpp"

#include <cmath>
#include <optional>

#include <xtensor/xbuilder.hpp>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "trunk.hpp"

namespace attnlab {

namespace {
// The next token from one row of logits (V): argmax (first maximum) when greedy, else a draw
// from softmax(logits / temperature) by inverting the cumulative sum (in double) at rng.uniform().
std::int32_t choose_token(const float* logits, std::size_t v, float temperature, Rng& rng) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < v; ++j) {
        if (logits[j] > logits[best]) best = j;
    }
    if (temperature == 0.0f) return static_cast<std::int32_t>(best);
    std::vector<double> p(v);
    double total = 0.0;
    for (std::size_t j = 0; j < v; ++j) {
        p[j] = std::exp((double(logits[j]) - double(logits[best])) / double(temperature));
        total += p[j];
    }
    const double u = double(rng.uniform()) * total;
    double cumulative = 0.0;
    for (std::size_t j = 0; j < v; ++j) {
        cumulative += p[j];
        if (u < cumulative) return static_cast<std::int32_t>(j);
    }
    return static_cast<std::int32_t>(best);  // u rounded up to total: fall back to the mode
}

Index2 as_row(const std::vector<std::int32_t>& tokens) {
    Index2 out = Index2::from_shape({1, tokens.size()});
    std::copy(tokens.begin(), tokens.end(), out.begin());
    return out;
}
}  // namespace

DecoderLMGrad::DecoderLMGrad(const DecoderLM& model) : tok_emb(model.tok_emb) {
    if (model.pos_emb.table.size() > 0) pos_emb = xt::zeros<float>(model.pos_emb.table.shape());
    for (const auto& block : model.blocks) blocks.emplace_back(block);
    if (model.ln_f.width() > 0) ln_f = LayerNormGrad(model.ln_f);
    if (model.head.weight.size() > 0) head = xt::zeros<float>(model.head.weight.shape());
}

void DecoderLMGrad::zero() {
    tok_emb.zero();
    pos_emb.fill(0.0f);
    for (auto& block : blocks) block.zero();
    ln_f.zero();
    head.fill(0.0f);
}

void DecoderLMGrad::add(const DecoderLMGrad& other) {
    detail::add_gradient_tensor(tok_emb.weight, other.tok_emb.weight);
    detail::add_gradient_tensor(pos_emb, other.pos_emb);
    for (std::size_t l = 0; l < blocks.size(); ++l) detail::add_gradients(blocks[l], other.blocks[l]);
    detail::add_gradients(ln_f, other.ln_f);
    detail::add_gradient_tensor(head, other.head);
}

DecoderLM::DecoderLM(const ModelConfig& config, Rng& rng) : config_(config) {
    config_.validate();
    if (config_.kind != ModelKind::decoder) {
        fail<ConfigError>("DecoderLM: config.kind must be decoder, got ", model_kind_name(config_.kind));
    }
    const std::size_t c = config_.d_model;
    tok_emb = Embedding(config_.vocab_size, c, rng);
    if (config_.positional == PositionalKind::learned) pos_emb = LearnedPositionalEmbedding(config_.max_len, c, rng);
    for (std::size_t l = 0; l < config_.num_layers; ++l) blocks.emplace_back(config_, rng);
    if (config_.norm == NormPlacement::pre) ln_f = LayerNorm(c);
    if (!config_.tie_weights) head = Linear(c, config_.vocab_size, /*with_bias=*/false, rng);
    dropout_rng_ = Rng(rng.next_u64());
    grads_ = DecoderLMGrad(*this);
}

void DecoderLM::set_gradient_checkpointing(bool on) {
    config_.gradient_checkpointing = on;
    for (auto& block : blocks) block.set_gradient_checkpointing(on);
}

Tensor3 DecoderLM::logits_of(const Tensor3& h) const {
    const Tensor2& w = head_weight();  // (V, C)
    const std::size_t rows = h.shape(0) * h.shape(1), c = h.shape(2), v = w.shape(0);
    Tensor3 logits = Tensor3::from_shape({h.shape(0), h.shape(1), v});  // (B, T, V)
    kernels::matmul_nt(h.data(), c, w.data(), c, logits.data(), v, rows, v, c);
    return logits;
}

const Tensor3& DecoderLM::run(const Index2& tokens, const std::vector<StageObserver*>& observers,
                              DecoderLMCache* cache, Rng* dropout_rng, DecoderLMCache& buffers) const {
    constexpr const char* where = "DecoderLM::forward";
    if (tokens.shape(0) == 0 || tokens.shape(1) == 0) {
        fail<ShapeError>(where, ": tokens must be non-empty (B, T), got ", shape_string(tokens.shape()));
    }
    if (config_.positional == PositionalKind::learned) pos_emb.check_range(tokens.shape(1), 0, where);
    TrunkBuffers& trunk = buffers.trunk;
    Tensor3& x = trunk.x;
    tok_emb.forward(tokens, x);  // (B, T, C)
    detail::add_positional(x, config_.positional, pos_emb, 0);
    AttentionOptions& options = buffers.options;
    detail::set_attention_options(config_, options);
    options.mask.causal = config_.causal;
    if (cache) {
        cache->tokens = tokens;  // the first block's input tables point into this copy
        detail::set_input_tables(config_, blocks, tok_emb, pos_emb, cache->tokens, buffers.blocks, trunk);
    }
    Tensor3 h_inference;
    const Tensor3& h = cache ? detail::blocks_forward(blocks, x, options, observers, buffers.blocks, dropout_rng, trunk)
                             : (h_inference = detail::blocks_forward(blocks, std::move(x), options, observers));  // (B, T, C)
    if (config_.norm == NormPlacement::pre) {
        ln_f.forward(h, cache ? &buffers.ln_f : nullptr, buffers.hidden);
    } else {
        buffers.hidden = h;  // copied into the kept buffer
    }
    if (cache) cache->valid = true;
    return buffers.hidden;
}

Tensor3 DecoderLM::run_logits(const Index2& tokens, const std::vector<StageObserver*>& observers) const {
    DecoderLMCache local;
    return logits_of(run(tokens, observers, nullptr, nullptr, local));
}

const Tensor3& DecoderLM::forward_hidden(const Index2& tokens, DecoderLMCache& local) {
    static const std::vector<StageObserver*> kNoObservers;
    const std::vector<StageObserver*>& observers =
        record_stats_ ? stats_collector_.start(blocks.size(), config_.num_heads, tokens.shape(1) * tokens.shape(1))
                      : kNoObservers;
    const Tensor3& h = training_ ? run(tokens, observers, &cache_, &dropout_rng_, cache_)
                                 : run(tokens, observers, nullptr, nullptr, local);
    if (record_stats_) stats_collector_.finish(stats_);
    return h;
}

Tensor3 DecoderLM::forward(const Index2& tokens) {
    DecoderLMCache local;
    return logits_of(forward_hidden(tokens, local));
}

void DecoderLM::backward(const Tensor3& dlogits) {
    constexpr const char* where = "DecoderLM::backward";
    if (!cache_.valid) fail<ValueError>(where, ": no training-mode forward to differentiate (call train() and forward first)");
    require_shape(dlogits, {static_cast<std::ptrdiff_t>(cache_.tokens.shape(0)),
                            static_cast<std::ptrdiff_t>(cache_.tokens.shape(1)),
                            static_cast<std::ptrdiff_t>(config_.vocab_size)},
                  where, "dlogits (B, T, V)");
    backward_rows(cache_, dlogits.data(), grads_);
}

void DecoderLM::backward_rows(DecoderLMCache& cache, const float* dlogits, DecoderLMGrad& grads) const {
    const std::size_t batch = cache.tokens.shape(0), t = cache.tokens.shape(1), c = config_.d_model;
    const std::size_t v = config_.vocab_size, rows = batch * t;
    TrunkBuffers& trunk = cache.trunk;
    // logits = hidden·Wᵀ with W the head, or the token embedding when tied (dW then also
    // collects the embedding's own gradient below)
    const Tensor2& w = head_weight();
    Tensor2& dw = config_.tie_weights ? grads.tok_emb.weight : grads.head;
    Tensor3& dh = trunk.dh;  // (B, T, C)
    dh.resize({batch, t, c});
    kernels::matmul_nn(dlogits, v, w.data(), c, dh.data(), c, rows, c, v);
    kernels::matmul_tn(dlogits, v, cache.hidden.data(), c, dw.data(), c, v, c, rows, Accumulate::yes);
    const Tensor3* dblocks = &dh;
    if (config_.norm == NormPlacement::pre) {
        ln_f.backward(dh, cache.ln_f, grads.ln_f, trunk.dnorm);
        dblocks = &trunk.dnorm;
    }
    Tensor3& dx = trunk.dx;
    detail::set_input_table_gradients(trunk, grads.tok_emb.weight,
                                      config_.positional == PositionalKind::learned ? &grads.pos_emb : nullptr);
    detail::blocks_backward(blocks, *dblocks, cache.blocks, cache.options, grads.blocks, dx, trunk);  // (B, T, C)
    if (config_.positional == PositionalKind::learned) detail::learned_positional_backward(dx, 0, grads.pos_emb);
    tok_emb.backward(cache.tokens, dx, grads.tok_emb);
}

CrossEntropyResult DecoderLM::loss_rows_and_backward(DecoderLMCache& cache, const Tensor3& h, const Index2& targets,
                                                     std::size_t counted, DecoderLMGrad& grads) const {
    const std::size_t rows = targets.size(), v = config_.vocab_size, c = config_.d_model;
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
    cross_entropy_backward(cache.ce, 1.0f, cache.dlogits);
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
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1), v = config_.vocab_size;
    // What a slice would report with its own row numbers is checked here, against the batch's.
    tok_emb.check_tokens(tokens, where);
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
    static const std::vector<StageObserver*> kNoObservers;
    // The statistics recorders take stages from any thread; they add up over the slices.
    const std::vector<StageObserver*>& observers =
        record_stats_ ? stats_collector_.start(blocks.size(), config_.num_heads, t * t) : kNoObservers;
    detail::run_split_lanes(split_, lanes, *this, grads_,
                            [&](DecoderLMSlice& s, DecoderLMCache& cache, DecoderLMGrad& grads) {
                                const Tensor3& h = run(s.tokens, observers, &cache, &s.dropout, cache);
                                s.result = loss_rows_and_backward(cache, h, s.targets, counted, grads);
                            });
    if (record_stats_) stats_collector_.finish(stats_);
    cache_.valid = false;  // the whole batch's cache holds no forward of this step
    return detail::combined_result(split_.slices);
}

Tensor3 DecoderLM::forward_observed(const Index2& tokens, const std::vector<StageObserver*>& observers) const {
    if (!observers.empty() && observers.size() != blocks.size()) {
        fail<ValueError>("DecoderLM::forward_observed: need one observer per block (", blocks.size(), "), got ",
                         observers.size());
    }
    return run_logits(tokens, observers);
}

Tensor4 DecoderLM::attention_maps(const Index2& tokens, std::size_t batch) const {
    if (batch >= tokens.shape(0)) {
        fail<ValueError>("DecoderLM::attention_maps: batch ", batch, " out of range for B = ", tokens.shape(0));
    }
    detail::AttentionMapRecorder recorder(blocks.size());
    run_logits(tokens, recorder.observers());
    return recorder.maps(batch, config_.num_heads);
}

void DecoderLM::check_generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                               const GenerateOptions& options, const char* where) const {
    if (prompt.empty()) fail<ValueError>(where, ": the prompt must hold at least one token");
    if (!(options.temperature >= 0.0f) || !std::isfinite(options.temperature)) {
        fail<ValueError>(where, ": temperature must be finite and >= 0 (0 = greedy), got ", options.temperature);
    }
    if (config_.positional == PositionalKind::learned && prompt.size() + max_new_tokens > config_.max_len) {
        fail<ValueError>(where, ": prompt length ", prompt.size(), " + max_new_tokens ", max_new_tokens, " = ",
                         prompt.size() + max_new_tokens, " exceeds max_len ", config_.max_len,
                         " of the learned position table");
    }
    tok_emb.check_tokens(as_row(prompt), where);
}

GenerateResult DecoderLM::generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                   const GenerateOptions& options) const {
    check_generate(prompt, max_new_tokens, options, "DecoderLM::generate");
    // A KV cache assumes earlier positions never see later ones; a non-causal model must
    // recompute everything for every new token.
    if (!config_.causal) return generate_uncached(prompt, max_new_tokens, options);
    const std::size_t v = config_.vocab_size;
    GenerateResult result{prompt, Tensor2::from_shape({max_new_tokens, v})};
    Rng rng(options.seed);
    const AttentionOptions attention = detail::attention_options(config_);
    std::vector<KvCache> kv(blocks.size());
    // First the whole prompt, then one new token per step, each at its absolute position.
    Index2 feed = as_row(prompt);
    std::size_t offset = 0;
    for (std::size_t step = 0; step < max_new_tokens; ++step) {
        Tensor3 x = tok_emb.forward(feed);  // (1, T_new, C)
        detail::add_positional(x, config_.positional, pos_emb, offset);
        for (std::size_t l = 0; l < blocks.size(); ++l) x = blocks[l].forward_incremental(x, kv[l], attention);
        if (config_.norm == NormPlacement::pre) x = ln_f.forward(x);
        Tensor3 last = Tensor3::from_shape({1, 1, config_.d_model});  // (1, 1, C)
        std::copy_n(x.data() + (x.shape(1) - 1) * config_.d_model, config_.d_model, last.data());
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
    const std::size_t v = config_.vocab_size;
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
    std::vector<ParameterView> out = tok_emb.parameters("tok_emb.");
    if (pos_emb.table.size() > 0) out.push_back(view_of("pos_emb.weight", pos_emb.table));
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        const auto views = blocks[l].parameters("blocks." + std::to_string(l) + ".");
        out.insert(out.end(), views.begin(), views.end());
    }
    if (ln_f.width() > 0) {
        const auto views = ln_f.parameters("ln_f.");
        out.insert(out.end(), views.begin(), views.end());
    }
    if (head.weight.size() > 0) out.push_back(view_of("head.weight", head.weight));
    return out;
}

std::vector<ParameterView> DecoderLM::gradients() {
    std::vector<ParameterView> out = grads_.tok_emb.views("tok_emb.");
    if (grads_.pos_emb.size() > 0) out.push_back(view_of("pos_emb.weight", grads_.pos_emb));
    for (std::size_t l = 0; l < grads_.blocks.size(); ++l) {
        const auto views = grads_.blocks[l].views("blocks." + std::to_string(l) + ".");
        out.insert(out.end(), views.begin(), views.end());
    }
    if (grads_.ln_f.weight.size() > 0) {
        const auto views = grads_.ln_f.views("ln_f.");
        out.insert(out.end(), views.begin(), views.end());
    }
    if (grads_.head.size() > 0) out.push_back(view_of("head.weight", grads_.head));
    return out;
}

void DecoderLM::zero_grad() {
    // Tensor by tensor (not through gradients(), whose names would be built every step).
    grads_.zero();
}

}  // namespace attnlab
