// attnlab/train/optimizer.hpp: AdamW and SGD with momentum, gradient norms and clipping.
//
// What it is for: updating a model's parameters in place from its gradients with exactly the
// arithmetic of torch.optim.AdamW / torch.optim.SGD, so a run can be compared number for number
// with a PyTorch one. Parameters and gradients are two parallel vectors of ParameterView (same
// names, same shapes, same order); optimizer state (moments, momentum buffers) is stored per
// parameter index and sized at the first step. Not for: parameter groups with different
// learning rates (the schedule gives one lr per step), sparse gradients, or mixed precision.
//
//   attnlab::AdamWOptions o;
//   o.weight_decay = 0.1f;
//   o.decay = attnlab::decay_matrices_only;          // no decay on biases and LayerNorm gains
//   attnlab::AdamW opt(o);
//   float norm = attnlab::clip_grad_norm(grads, 1.0f);
//   opt.step(params, grads, schedule.lr_at(step));   // params -= update; grads untouched
//
// Weight decay is decoupled (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", 2019)
// exactly as torch.optim.AdamW: p <- p * (1 - lr * wd) before the Adam update, for every
// parameter the decay predicate accepts. SGD's weight_decay is torch's coupled L2 term
// (g <- g + wd * p).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/nn/parameter.hpp"

namespace attnlab {

// Whether a parameter receives weight decay. An empty predicate means every parameter does.
using DecayPredicate = std::function<bool(const ParameterView&)>;

// nanoGPT's rule (configure_optimizers): decay tensors of rank >= 2 (weights of Linear layers and
// embeddings), not biases or LayerNorm gains/shifts (rank 1).
bool decay_matrices_only(const ParameterView& p);

class Optimizer {
public:
    virtual ~Optimizer() = default;

    // One update of every parameter from its gradient. Throws ConfigError naming the first
    // mismatch if params and grads differ in count, name or shape, or if they differ from the
    // list of the first step (state is per index); ValueError if lr is negative or not finite.
    void step(const std::vector<ParameterView>& params, const std::vector<ParameterView>& grads, float lr);
    // Forgets all state (moments, momentum buffers, step count): the next step is a first step.
    void reset();
    virtual std::string name() const = 0;
    // Number of completed steps since construction or reset().
    std::size_t steps() const { return steps_; }

protected:
    // Sizes per-parameter state for `params` (called once, at the first step after a reset).
    virtual void init_state(const std::vector<ParameterView>& params) = 0;
    virtual void clear_state() = 0;
    // Updates parameter i; t is the 1-based step number. Called for different i concurrently
    // (from the thread pool), so it may touch only parameter i and its own state.
    virtual void update(std::size_t i, const ParameterView& param, const float* grad, float lr, std::size_t t) = 0;

private:
    std::size_t steps_ = 0;
    std::vector<std::string> names_;                // of the first step
    std::vector<std::vector<std::size_t>> shapes_;  // of the first step
};

struct AdamWOptions {
    float beta1 = 0.9f;           // in [0, 1)
    float beta2 = 0.999f;         // in [0, 1)
    float eps = 1e-8f;            // >= 0, added to sqrt(v_hat)
    float weight_decay = 0.01f;   // >= 0; torch.optim.AdamW's default
    DecayPredicate decay;         // who is decayed; empty = everyone
};

// torch.optim.AdamW (amsgrad=False, maximize=False), step t from 1:
//   p = p * (1 - lr * wd)                     if decay(p)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
class AdamW final : public Optimizer {
public:
    // Throws ConfigError naming any option outside its range.
    explicit AdamW(const AdamWOptions& options = {});
    std::string name() const override { return "adamw"; }
    const AdamWOptions& options() const { return options_; }

private:
    void init_state(const std::vector<ParameterView>& params) override;
    void clear_state() override;
    void update(std::size_t i, const ParameterView& param, const float* grad, float lr, std::size_t t) override;

    AdamWOptions options_;
    std::vector<std::vector<float>> m_, v_;  // first and second moments, per parameter index
};

struct SgdOptions {
    float momentum = 0.0f;      // >= 0; 0 = plain SGD
    float dampening = 0.0f;     // >= 0; must be 0 with nesterov
    bool nesterov = false;      // requires momentum > 0
    float weight_decay = 0.0f;  // >= 0, coupled L2: g = g + wd * p
    DecayPredicate decay;       // who is decayed; empty = everyone
};

// torch.optim.SGD (maximize=False):
//   d = g + wd * p                              (if decay(p))
//   buf = d at the first step, else buf = momentum * buf + (1 - dampening) * d   (momentum > 0)
//   d = nesterov ? d + momentum * buf : buf                                       (momentum > 0)
//   p = p - lr * d
class Sgd final : public Optimizer {
public:
    // Throws ConfigError naming any option outside its range.
    explicit Sgd(const SgdOptions& options = {});
    std::string name() const override { return "sgd"; }
    const SgdOptions& options() const { return options_; }

private:
    void init_state(const std::vector<ParameterView>& params) override;
    void clear_state() override;
    void update(std::size_t i, const ParameterView& param, const float* grad, float lr, std::size_t t) override;

    SgdOptions options_;
    std::vector<std::vector<float>> buf_;  // momentum buffers, per parameter index (empty if momentum == 0)
};

// Options for make_optimizer. An unset field takes the optimizer's default; setting a field the
// chosen optimizer does not have (momentum for adamw, beta1 for sgd) is a ConfigError.
struct OptimizerOptions {
    std::optional<float> beta1, beta2, eps;         // adamw
    std::optional<float> momentum, dampening;       // sgd
    std::optional<bool> nesterov;                   // sgd
    std::optional<float> weight_decay;              // both (default 0.01 adamw, 0 sgd)
    DecayPredicate decay;                           // both
};

// "adamw" or "sgd"; anything else throws ConfigError listing the valid names.
std::unique_ptr<Optimizer> make_optimizer(const std::string& name, const OptimizerOptions& options = {});

// sqrt of the sum of squares of every gradient element, accumulated in double.
float global_grad_norm(const std::vector<ParameterView>& grads);

// torch.nn.utils.clip_grad_norm_: if the global norm exceeds max_norm, scales every gradient by
// max_norm / (norm + 1e-6). Returns the norm before clipping. A non-finite norm leaves the
// gradients as they are (check with require_finite_gradients). Throws ConfigError unless
// max_norm > 0.
float clip_grad_norm(const std::vector<ParameterView>& grads, float max_norm);

// Throws ValueError naming the step, the parameter and the index of the first NaN or Inf:
//   "step 12: gradient of 'blocks.0.attn.q_proj.weight' (shape (4, 4)) has nan at index 5"
void require_finite_gradients(const std::vector<ParameterView>& grads, std::size_t step);

}  // namespace attnlab
