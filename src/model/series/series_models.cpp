#include "attnlab/model/series/series_models.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <string>

#include "attnlab/core/error.hpp"
#include "attnlab/model/token/trunk.hpp"
#include "attnlab/posenc/sinusoidal.hpp"
#include "attnlab/posenc/time_encoding.hpp"

namespace attnlab {

// ---- ForecasterGrad ----

ForecasterGrad::ForecasterGrad(const Forecaster& model) : value_proj(model.value_proj), head(model.head) {
    if (model.pos_emb.table.size() > 0) {
        pos_emb = Tensor2::from_shape(model.pos_emb.table.shape());
        pos_emb.fill(0.0f);
    }
    for (const auto& b : model.blocks) blocks.emplace_back(b);
    if (model.ln_f.width() > 0) ln_f = LayerNormGrad(model.ln_f);
    if (!model.lstm.layers.empty()) lstm = LstmGrad(model.lstm);
}

void ForecasterGrad::zero() {
    value_proj.zero();
    pos_emb.fill(0.0f);
    for (auto& b : blocks) b.zero();
    if (ln_f.weight.size() > 0) ln_f.zero();
    lstm.zero();
    head.zero();
}

// ---- Forecaster ----

Forecaster::Forecaster(const ModelConfig& config, Rng& rng) : config_(config) {
    config.validate();
    if (!config.is_forecaster()) {
        fail<ConfigError>("Forecaster: kind must be forecaster, got ", model_kind_name(config.kind));
    }
    const std::size_t c = config.d_model;
    value_proj = Linear(config.forecast_input_width(), c, config.bias, rng);
    if (is_lstm()) {
        lstm = Lstm(LstmConfig{c, c, config.num_layers, config.bias}, rng);
    } else {
        if (config.positional == PositionalKind::learned) pos_emb = LearnedPositionalEmbedding(config.max_len, c, rng);
        for (std::size_t l = 0; l < config.num_layers; ++l) {
            blocks.emplace_back(config, rng);
            blocks.back().set_gradient_checkpointing(config.gradient_checkpointing);
        }
        if (config.norm == NormPlacement::pre) ln_f = LayerNorm(c, config.layer_norm_eps);
    }
    head = Linear(c, config.horizon, config.bias, rng);
    grads_ = ForecasterGrad(*this);
}

void Forecaster::check_input(const Tensor3& values, const Tensor2& time, const char* where) const {
    require_shape(values, {-1, -1, static_cast<std::ptrdiff_t>(config_.num_features)}, where, "values (B, T, F)");
    const std::size_t batch = values.shape(0), t = values.shape(1);
    if (batch == 0 || t == 0) fail<ShapeError>(where, ": values must be non-empty (B, T, F), got ", shape_string(values.shape()));
    if (config_.positional == PositionalKind::time || time.size() > 0) {
        if (time.dimension() != 2 || time.shape(0) != batch || time.shape(1) < t) {
            fail<ShapeError>(where, ": time must be (B, T') with T' >= T for values ", shape_string(values.shape()),
                             ", got ", shape_string(time.shape()),
                             config_.positional == PositionalKind::time ? " (pe time reads the timestamps)" : "");
        }
    }
    if (!is_lstm() && config_.positional == PositionalKind::learned) pos_emb.check_range(t, 0, where);
}

AttentionOptions Forecaster::attention_options() const {
    AttentionOptions options;
    set_attention_switches(config_, options);
    options.mask.causal = false;  // the whole context is known when forecasting
    return options;
}

void Forecaster::run(const Tensor3& values, const Tensor2& time, ForecasterCache& cache, bool training,
                     const std::vector<StageObserver*>& observers, Tensor2& pred) const {
    const std::size_t batch = values.shape(0), t = values.shape(1), f = values.shape(2), c = config_.d_model;
    const std::size_t fin = config_.forecast_input_width();
    // input = [values, time encoding of the context's timestamps]
    cache.input.resize({batch, t, fin});
    if (config_.positional == PositionalKind::time) {
        Tensor2 context_time = Tensor2::from_shape({batch, t});  // (B, T) the context's timestamps
        for (std::size_t b = 0; b < batch; ++b) std::copy_n(&time(b, 0), t, &context_time(b, 0));
        const std::vector<double> periods(config_.time_periods.begin(), config_.time_periods.end());
        const Tensor3 te = time_encoding(context_time, periods);  // (B, T, 2K)
        const std::size_t k2 = te.shape(2);
        for (std::size_t r = 0; r < batch * t; ++r) {
            std::copy_n(values.data() + r * f, f, cache.input.data() + r * fin);
            std::copy_n(te.data() + r * k2, k2, cache.input.data() + r * fin + f);
        }
    } else {
        std::copy(values.begin(), values.end(), cache.input.begin());
    }
    cache.x.resize({batch, t, c});
    value_proj.forward(cache.input.data(), batch * t, cache.x.data());  // (B·T, F_in) -> (B·T, C)
    const Tensor3* h = nullptr;  // (B, T, C) the trunk's output
    if (is_lstm()) {
        lstm.forward(cache.x, nullptr, nullptr, cache.lstm, cache.lstm_out);
        h = &cache.lstm_out.output;
    } else {
        if (config_.positional == PositionalKind::sinusoidal || config_.positional == PositionalKind::time) {
            add_sinusoidal(cache.x);
        } else if (config_.positional == PositionalKind::learned) {
            pos_emb.add_to(cache.x);
        }
        const AttentionOptions options = attention_options();
        cache.blocks.resize(blocks.size());
        cache.stream.resize(blocks.size());
        const Tensor3* x = &cache.x;
        for (std::size_t l = 0; l < blocks.size(); ++l) {
            StageObserver* observer = observers.empty() ? nullptr : observers[l];
            blocks[l].forward(*x, options, observer, training ? &cache.blocks[l] : nullptr, nullptr, cache.stream[l]);
            x = &cache.stream[l];
        }
        if (ln_f.width() > 0) {
            ln_f.forward(*x, &cache.ln_f, cache.normed);
            h = &cache.normed;
        } else {
            h = x;
        }
    }
    cache.last.resize({batch, c});  // (B, C) the last step's row
    for (std::size_t b = 0; b < batch; ++b) std::copy_n(h->data() + (b * t + t - 1) * c, c, cache.last.data() + b * c);
    pred.resize({batch, config_.horizon});
    head.forward(cache.last.data(), batch, pred.data());
    cache.valid = training;
}

Tensor2 Forecaster::forward(const Tensor3& values, const Tensor2& time) {
    check_input(values, time, "Forecaster::forward");
    Tensor2 pred;
    run(values, time, cache_, training_, {}, pred);
    return pred;
}

Tensor2 Forecaster::predict(const Tensor3& values, const Tensor2& time) const {
    check_input(values, time, "Forecaster::predict");
    ForecasterCache cache;
    Tensor2 pred;
    run(values, time, cache, false, {}, pred);
    return pred;
}

void Forecaster::backward(const Tensor2& dpred) {
    constexpr const char* where = "Forecaster::backward";
    ForecasterCache& cache = cache_;
    if (!cache.valid) fail<ValueError>(where, ": no training-mode forward to differentiate");
    const std::size_t batch = cache.x.shape(0), t = cache.x.shape(1), c = config_.d_model;
    require_shape(dpred, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(config_.horizon)}, where,
                  "dpred (B, N)");
    // pred = last·W_headᵀ + b
    cache.dlast.resize({batch, c});
    linear_backward(head, cache.last.data(), batch, dpred.data(), grads_.head, cache.dlast.data());
    // last = h[:, T-1]: only the last step's row receives a gradient
    cache.dh.resize({batch, t, c});
    cache.dh.fill(0.0f);
    for (std::size_t b = 0; b < batch; ++b) std::copy_n(cache.dlast.data() + b * c, c, cache.dh.data() + (b * t + t - 1) * c);
    Tensor3& dx = cache.dtmp;  // (B, T, C) gradient of the trunk's input x
    if (is_lstm()) {
        lstm.backward(cache.dh, nullptr, nullptr, cache.lstm, grads_.lstm, dx, nullptr, nullptr);
    } else {
        const AttentionOptions options = attention_options();
        Tensor3 a, b;  // the gradient of the current block's output, then of its input
        if (ln_f.width() > 0) {
            ln_f.backward(cache.dh, cache.ln_f, grads_.ln_f, a);
        } else {
            a = cache.dh;
        }
        for (std::size_t l = blocks.size(); l-- > 0;) {
            blocks[l].backward(a, cache.blocks[l], options, grads_.blocks[l], b);
            std::swap(a, b);
        }
        dx = std::move(a);
        // x += pos_emb.table[:T]  =>  dtable[i] += Σ_b dx[b, i]
        if (grads_.pos_emb.size() > 0) {
            for (std::size_t bb = 0; bb < batch; ++bb)
                for (std::size_t i = 0; i < t * c; ++i) grads_.pos_emb.data()[i] += dx.data()[bb * t * c + i];
        }
    }
    // x = input·W_projᵀ + b (the input is data: its gradient is not wanted)
    linear_backward(value_proj, cache.input.data(), batch * t, dx.data(), grads_.value_proj, nullptr);
}

RegressionResult Forecaster::loss_and_backward(const Tensor3& values, const Tensor2& time, const Tensor2& forecast) {
    constexpr const char* where = "Forecaster::loss_and_backward";
    check_input(values, time, where);
    require_shape(forecast, {static_cast<std::ptrdiff_t>(values.shape(0)), static_cast<std::ptrdiff_t>(config_.horizon)},
                  where, "forecast (B, N)");
    run(values, time, cache_, true, {}, cache_.pred);
    const RegressionResult r = mse_forward(cache_.pred, forecast, &cache_.mse);
    mse_backward(cache_.mse, loss_scale_, cache_.dpred);
    backward(cache_.dpred);
    return r;
}

void Forecaster::require_attention(const char* where) const {
    if (is_lstm()) fail<ConfigError>(where, ": this forecaster is an lstm; it has no attention to show");
}

Tensor4 Forecaster::attention_maps(const Tensor3& values, const Tensor2& time, std::size_t batch) const {
    constexpr const char* where = "Forecaster::attention_maps";
    require_attention(where);
    check_input(values, time, where);
    if (batch >= values.shape(0)) fail<ValueError>(where, ": batch ", batch, " out of range for B = ", values.shape(0));
    std::deque<TraceRecorder> recorders;
    std::vector<StageObserver*> observers;
    for (std::size_t l = 0; l < blocks.size(); ++l) observers.push_back(&recorders.emplace_back(std::vector<Stage>{Stage::weights}));
    ForecasterCache cache;
    Tensor2 pred;
    run(values, time, cache, false, observers, pred);
    const std::size_t heads = config_.num_heads, t = values.shape(1);
    Tensor4 maps = Tensor4::from_shape({blocks.size(), heads, t, t});  // (L, H, T, T)
    for (std::size_t l = 0; l < blocks.size(); ++l)
        for (std::size_t h = 0; h < heads; ++h) {
            const Tensor2& m = recorders[l].get(Stage::weights, batch, static_cast<std::ptrdiff_t>(h));
            std::copy(m.begin(), m.end(), maps.data() + (l * heads + h) * t * t);
        }
    return maps;
}

std::unique_ptr<TraceRecorder> Forecaster::trace_layer(const Tensor3& values, const Tensor2& time, std::size_t layer) const {
    constexpr const char* where = "Forecaster::trace_layer";
    require_attention(where);
    check_input(values, time, where);
    const std::size_t layers = blocks.size();
    if (layer >= layers) {
        fail<ConfigError>(where, ": layer ", layer, " is out of range: the model has ", layers, " layer",
                          layers == 1 ? "" : "s", " (0..", layers - 1, ")");
    }
    auto recorder = std::make_unique<TraceRecorder>();
    std::vector<StageObserver*> observers(layers, nullptr);
    observers[layer] = recorder.get();
    ForecasterCache cache;
    Tensor2 pred;
    run(values, time, cache, false, observers, pred);
    return recorder;
}

std::vector<ParameterView> Forecaster::parameters() {
    std::vector<ParameterView> out;
    out.push_back(view_of("value_proj.weight", value_proj.weight));
    if (value_proj.has_bias()) out.push_back(view_of("value_proj.bias", value_proj.bias));
    if (pos_emb.table.size() > 0) out.push_back(view_of("pos_emb.weight", pos_emb.table));
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        for (auto& v : blocks[l].parameters("blocks." + std::to_string(l) + ".")) out.push_back(v);
    }
    if (ln_f.width() > 0) {
        for (auto& v : ln_f.parameters("ln_f.")) out.push_back(v);
    }
    if (!lstm.layers.empty()) {
        for (auto& v : lstm.parameters("lstm.")) out.push_back(v);
    }
    out.push_back(view_of("head.weight", head.weight));
    if (head.has_bias()) out.push_back(view_of("head.bias", head.bias));
    return out;
}

std::vector<ParameterView> Forecaster::gradients() {
    std::vector<ParameterView> out;
    out.push_back(view_of("value_proj.weight", grads_.value_proj.weight));
    if (value_proj.has_bias()) out.push_back(view_of("value_proj.bias", grads_.value_proj.bias));
    if (grads_.pos_emb.size() > 0) out.push_back(view_of("pos_emb.weight", grads_.pos_emb));
    for (std::size_t l = 0; l < grads_.blocks.size(); ++l) {
        for (auto& v : grads_.blocks[l].views("blocks." + std::to_string(l) + ".")) out.push_back(v);
    }
    if (ln_f.width() > 0) {
        for (auto& v : grads_.ln_f.views("ln_f.")) out.push_back(v);
    }
    if (!lstm.layers.empty()) {
        for (auto& v : grads_.lstm.views("lstm.")) out.push_back(v);
    }
    out.push_back(view_of("head.weight", grads_.head.weight));
    if (head.has_bias()) out.push_back(view_of("head.bias", grads_.head.bias));
    return out;
}

void Forecaster::zero_grad() { grads_.zero(); }

}  // namespace attnlab
