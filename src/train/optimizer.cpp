#include "attnlab/train/optimizer.hpp"

#include <cmath>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/adamw.hpp"

namespace attnlab {
namespace {

void require_in_range(float value, float lo, bool lo_closed, float hi, bool hi_closed, const char* where,
                      const char* option) {
    const bool ok = std::isfinite(value) && (lo_closed ? value >= lo : value > lo) &&
                    (hi_closed ? value <= hi : value < hi);
    if (!ok) {
        fail<ConfigError>(where, ": ", option, " must be in ", lo_closed ? "[" : "(", lo, ", ", hi,
                          hi_closed ? "]" : ")", ", got ", option, "=", value);
    }
}

constexpr float kInf = INFINITY;

bool decays(const DecayPredicate& decay, const ParameterView& p) { return !decay || decay(p); }

}  // namespace

bool decay_matrices_only(const ParameterView& p) { return p.shape.size() >= 2; }

// --------------------------------------------------------------------------------------------
// Optimizer: validation and state lifetime shared by every optimizer.

void Optimizer::step(const std::vector<ParameterView>& params, const std::vector<ParameterView>& grads, float lr) {
    // Built only to report an error: a step allocates nothing.
    const auto where = [this] { return "Optimizer::step (" + name() + ")"; };
    if (!std::isfinite(lr) || lr < 0.0f) fail<ValueError>(where(), ": lr must be finite and >= 0, got lr=", lr);
    if (params.size() != grads.size()) {
        fail<ConfigError>(where(), ": ", params.size(), " parameters but ", grads.size(), " gradients");
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i].name != grads[i].name) {
            fail<ConfigError>(where(), ": parameter ", i, " is '", params[i].name, "' but gradient ", i, " is '",
                              grads[i].name, "'");
        }
        if (params[i].shape != grads[i].shape) {
            fail<ConfigError>(where(), ": parameter '", params[i].name, "' has shape ", shape_string(params[i].shape),
                              " but its gradient has shape ", shape_string(grads[i].shape));
        }
    }
    if (steps_ == 0) {
        names_.clear();
        shapes_.clear();
        for (const auto& p : params) {
            names_.push_back(p.name);
            shapes_.push_back(p.shape);
        }
        init_state(params);
    } else {
        if (params.size() != names_.size()) {
            fail<ConfigError>(where(), ": ", params.size(), " parameters, but the first step had ", names_.size(),
                              " (call reset() to start over with a new list)");
        }
        for (std::size_t i = 0; i < params.size(); ++i) {
            if (params[i].name != names_[i] || params[i].shape != shapes_[i]) {
                fail<ConfigError>(where(), ": parameter ", i, " is '", params[i].name, "' ",
                                  shape_string(params[i].shape), ", but at the first step it was '", names_[i],
                                  "' ", shape_string(shapes_[i]), " (call reset() to start over with a new list)");
            }
        }
    }
    ++steps_;
    // Parameters are independent (update(i) touches only parameter i and its state), so they
    // are spread over the pool; each element's arithmetic is the same for any thread count.
    parallel_for(0, params.size(), [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) update(i, params[i], grads[i].data, lr, steps_);
    });
}

void Optimizer::reset() {
    steps_ = 0;
    names_.clear();
    shapes_.clear();
    clear_state();
}

// --------------------------------------------------------------------------------------------
// AdamW

AdamW::AdamW(const AdamWOptions& options) : options_(options) {
    require_in_range(options.beta1, 0.0f, true, 1.0f, false, "AdamW", "beta1");
    require_in_range(options.beta2, 0.0f, true, 1.0f, false, "AdamW", "beta2");
    require_in_range(options.eps, 0.0f, true, kInf, false, "AdamW", "eps");
    require_in_range(options.weight_decay, 0.0f, true, kInf, false, "AdamW", "weight_decay");
}

void AdamW::init_state(const std::vector<ParameterView>& params) {
    m_.clear();
    v_.clear();
    for (const auto& p : params) {
        m_.emplace_back(p.size(), 0.0f);
        v_.emplace_back(p.size(), 0.0f);
    }
}

void AdamW::clear_state() {
    m_.clear();
    v_.clear();
}

void AdamW::update(std::size_t i, const ParameterView& param, const float* grad, float lr, std::size_t t) {
    // Scalars in double then rounded once, as PyTorch computes its Python-float coefficients.
    const double beta1 = options_.beta1, beta2 = options_.beta2;
    const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(t));
    const double bias_correction2 = 1.0 - std::pow(beta2, static_cast<double>(t));
    const auto step_size = static_cast<float>(lr / bias_correction1);
    const auto bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
    const bool decay = options_.weight_decay > 0.0f && decays(options_.decay, param);
    const auto keep = static_cast<float>(1.0 - static_cast<double>(lr) * options_.weight_decay);
    kernels::AdamWStep step;
    step.decay = decay;
    step.keep = keep;
    step.one_minus_beta1 = static_cast<float>(1.0 - beta1);
    step.beta2 = static_cast<float>(beta2);
    step.one_minus_beta2 = static_cast<float>(1.0 - beta2);
    step.bias_correction2_sqrt = bias_correction2_sqrt;
    step.eps = options_.eps;
    step.step_size = step_size;
    // Per element (kernels/adamw.hpp): p *= keep; m.lerp_(g, 1 - beta1) as torch's exp_avg;
    // v = beta2·v + (1 - beta2)·g²; p -= step_size·m / (√v / √(1 - beta2^t) + eps).
    kernels::adamw_update(param.data, grad, m_[i].data(), v_[i].data(), param.size(), step);
}

// --------------------------------------------------------------------------------------------
// SGD

Sgd::Sgd(const SgdOptions& options) : options_(options) {
    require_in_range(options.momentum, 0.0f, true, kInf, false, "Sgd", "momentum");
    require_in_range(options.dampening, 0.0f, true, kInf, false, "Sgd", "dampening");
    require_in_range(options.weight_decay, 0.0f, true, kInf, false, "Sgd", "weight_decay");
    if (options.nesterov && (options.momentum <= 0.0f || options.dampening != 0.0f)) {
        fail<ConfigError>("Sgd: nesterov requires momentum > 0 and dampening = 0, got momentum=", options.momentum,
                          ", dampening=", options.dampening);
    }
}

void Sgd::init_state(const std::vector<ParameterView>& params) {
    buf_.clear();
    if (options_.momentum == 0.0f) return;
    for (const auto& p : params) buf_.emplace_back(p.size(), 0.0f);
}

void Sgd::clear_state() { buf_.clear(); }

void Sgd::update(std::size_t i, const ParameterView& param, const float* grad, float lr, std::size_t t) {
    const float wd = options_.weight_decay > 0.0f && decays(options_.decay, param) ? options_.weight_decay : 0.0f;
    const float mu = options_.momentum;
    const auto one_minus_dampening = static_cast<float>(1.0 - static_cast<double>(options_.dampening));
    float* p = param.data;
    float* buf = mu > 0.0f ? buf_[i].data() : nullptr;
    const std::size_t n = param.size();
    for (std::size_t j = 0; j < n; ++j) {
        float d = grad[j] + wd * p[j];
        if (buf) {
            buf[j] = t == 1 ? d : mu * buf[j] + one_minus_dampening * d;  // the first buffer is undamped
            d = options_.nesterov ? d + mu * buf[j] : buf[j];
        }
        p[j] -= lr * d;
    }
}

// --------------------------------------------------------------------------------------------
// Factory

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, const OptimizerOptions& options) {
    auto reject = [&](bool set, const char* option) {
        if (set) fail<ConfigError>("make_optimizer(\"", name, "\"): option ", option, " does not apply to ", name);
    };
    if (name == "adamw") {
        reject(options.momentum.has_value(), "momentum");
        reject(options.dampening.has_value(), "dampening");
        reject(options.nesterov.has_value(), "nesterov");
        AdamWOptions o;
        o.beta1 = options.beta1.value_or(o.beta1);
        o.beta2 = options.beta2.value_or(o.beta2);
        o.eps = options.eps.value_or(o.eps);
        o.weight_decay = options.weight_decay.value_or(o.weight_decay);
        o.decay = options.decay;
        return std::make_unique<AdamW>(o);
    }
    if (name == "sgd") {
        reject(options.beta1.has_value(), "beta1");
        reject(options.beta2.has_value(), "beta2");
        reject(options.eps.has_value(), "eps");
        SgdOptions o;
        o.momentum = options.momentum.value_or(o.momentum);
        o.dampening = options.dampening.value_or(o.dampening);
        o.nesterov = options.nesterov.value_or(o.nesterov);
        o.weight_decay = options.weight_decay.value_or(o.weight_decay);
        o.decay = options.decay;
        return std::make_unique<Sgd>(o);
    }
    fail<ConfigError>("make_optimizer: unknown optimizer '", name, "'; valid names: adamw, sgd");
}

// --------------------------------------------------------------------------------------------
// Gradient norms

float global_grad_norm(const std::vector<ParameterView>& grads) {
    double sum = 0.0;
    for (const auto& g : grads) {
        const std::size_t n = g.size();
        for (std::size_t j = 0; j < n; ++j) sum += static_cast<double>(g.data[j]) * g.data[j];
    }
    return static_cast<float>(std::sqrt(sum));
}

float clip_grad_norm(const std::vector<ParameterView>& grads, float max_norm) {
    require_in_range(max_norm, 0.0f, false, kInf, false, "clip_grad_norm", "max_norm");
    const float norm = global_grad_norm(grads);
    if (std::isfinite(norm) && norm > max_norm) {
        const auto scale = static_cast<float>(static_cast<double>(max_norm) / (static_cast<double>(norm) + 1e-6));
        for (const auto& g : grads) {
            const std::size_t n = g.size();
            for (std::size_t j = 0; j < n; ++j) g.data[j] *= scale;
        }
    }
    return norm;
}

void require_finite_gradients(const std::vector<ParameterView>& grads, std::size_t step) {
    for (const auto& g : grads) {
        const std::size_t n = g.size();
        for (std::size_t j = 0; j < n; ++j) {
            if (!std::isfinite(g.data[j])) {
                fail<ValueError>("step ", step, ": gradient of '", g.name, "' (shape ", shape_string(g.shape), ") has ",
                                 g.data[j], " at index ", j);
            }
        }
    }
}

}  // namespace attnlab
