#include "attnlab/nn/feed_forward.hpp"

#include "attnlab/kernels/elementwise.hpp"

namespace attnlab {

FeedForward::FeedForward(std::size_t width, std::size_t hidden, Activation activation, bool bias, Rng& rng)
    : fc1(width, hidden, bias, rng), fc2(hidden, width, bias, rng), activation_(activation) {}

Tensor3 FeedForward::forward(const Tensor3& x, FeedForwardCache* cache) const {
    Tensor3 y;
    forward(x, cache, y);
    return y;
}

void FeedForward::forward(const Tensor3& x, FeedForwardCache* cache, Tensor3& y, const Tensor3* residual) const {
    require_shape(x, {-1, -1, static_cast<std::ptrdiff_t>(width())}, "FeedForward::forward", "x (B, T, C)");
    if (residual) require_shape_like(*residual, x, "FeedForward::forward", "residual (B, T, C) like x");
    const std::size_t batch = x.shape(0), t = x.shape(1), rows = batch * t;
    // With a cache, the fc1 output and the activation are written straight into its buffers
    // (reused from the last call when the shape is unchanged).
    Tensor3 local_hidden, local_act;
    Tensor3& hidden = cache ? cache->hidden : local_hidden;  // (B, T, F)
    Tensor3& act = cache ? cache->act : local_act;           // (B, T, F)
    act.resize({batch, t, this->hidden()});
    if (activation_ != Activation::relu) {
        hidden.resize({batch, t, this->hidden()});
        fc1.forward(x.data(), rows, hidden.data());
        if (activation_ == Activation::gelu) kernels::gelu_forward(hidden.data(), act.data(), hidden.size());
        else kernels::gelu_tanh_forward(hidden.data(), act.data(), hidden.size());
    } else {
        // act = max(x·W1ᵀ + b1, 0) in fc1's store: the pre-activation is never written (a pass
        // over (B, T, F) less; relu_forward took 2% of the tiny encoder's training step).
        hidden.resize({0, 0, 0});
        fc1.forward(x.data(), rows, act.data(), kernels::Epilogue::relu());
    }
    y.resize(x.shape());  // (B, T, C)
    // y = act·W2ᵀ + b2 (+ residual, in the store)
    fc2.forward(act.data(), rows, y.data(),
                residual ? kernels::Epilogue::adding(residual->data()) : kernels::Epilogue{});
    if (cache) copy_into(x, cache->x);
}

void FeedForward::backward(const Tensor3& dout, const FeedForwardCache& cache, FeedForwardGrad& grad,
                           Tensor3& dx, const Tensor3* residual) const {
    require_shape(dout, {static_cast<std::ptrdiff_t>(cache.x.shape(0)), static_cast<std::ptrdiff_t>(cache.x.shape(1)),
                         static_cast<std::ptrdiff_t>(width())},
                  "FeedForward::backward", "dout (B, T, C)");
    if (residual) require_shape_like(*residual, dout, "FeedForward::backward", "residual (B, T, C) like dout");
    const std::size_t rows = cache.x.shape(0) * cache.x.shape(1);
    // y = act·W2ᵀ + b2
    Tensor3& dact = cache.dhidden;  // (B, T, F)
    dact.resize(cache.act.shape());
    Tensor3& dhidden = dact;  // (B, T, F)
    if (activation_ != Activation::relu) {
        linear_backward(fc2, cache.act.data(), rows, dout.data(), grad.fc2, dact.data());
        // act = gelu(hidden): dhidden = gelu'(hidden) ⊙ dact, in place in dact (the kernels
        // allow dx aliasing dy elementwise)
        if (activation_ == Activation::gelu) {
            kernels::gelu_backward(cache.hidden.data(), dact.data(), dhidden.data(), dhidden.size());
        } else {
            kernels::gelu_tanh_backward(cache.hidden.data(), dact.data(), dhidden.data(), dhidden.size());
        }
    } else {
        // act = relu(hidden): dhidden = [hidden > 0] ⊙ dact = [act > 0] ⊙ dact, gated in the
        // store of fc2's dx (NaN and -0 give 0 either way).
        linear_backward(fc2, cache.act.data(), rows, dout.data(), grad.fc2, dhidden.data(), Accumulate::no,
                        kernels::Epilogue::gated_by(cache.act.data()));
    }
    // hidden = x·W1ᵀ + b1
    dx.resize(cache.x.shape());
    linear_backward(fc1, cache.x.data(), rows, dhidden.data(), grad.fc1, dx.data(), Accumulate::no,
                    residual ? kernels::Epilogue::adding(residual->data()) : kernels::Epilogue{});
}

std::vector<ParameterView> FeedForward::parameters(const std::string& prefix) {
    std::vector<ParameterView> out;
    for (const auto& [name, layer] : {std::pair<const char*, Linear*>{"fc1", &fc1}, {"fc2", &fc2}}) {
        out.push_back(view_of(prefix + name + ".weight", layer->weight));
        if (layer->has_bias()) out.push_back(view_of(prefix + name + ".bias", layer->bias));
    }
    return out;
}

FeedForwardGrad::FeedForwardGrad(const FeedForward& ffn) : fc1(ffn.fc1), fc2(ffn.fc2) {}

void FeedForwardGrad::zero() {
    fc1.zero();
    fc2.zero();
}

std::vector<ParameterView> FeedForwardGrad::views(const std::string& prefix) {
    std::vector<ParameterView> out;
    for (const auto& [name, grad] : {std::pair<const char*, LinearGrad*>{"fc1", &fc1}, {"fc2", &fc2}}) {
        out.push_back(view_of(prefix + name + ".weight", grad->weight));
        if (grad->bias.size() > 0) out.push_back(view_of(prefix + name + ".bias", grad->bias));
    }
    return out;
}

}  // namespace attnlab
