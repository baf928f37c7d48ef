// attnlab/nn/feed_forward.hpp: the position-wise feed-forward network of a Transformer block.
//
// What it is for: FFN(x) = fc2(act(fc1(x))), applied to every position independently
// (Vaswani et al. 2017, eq. 2), with act = GELU (exact erf form, BERT), GELU's tanh approximation
// (GPT-2's gelu_new) or ReLU (the original paper). fc1 is Linear(C, F), fc2 is Linear(F, C), both with PyTorch's layout, so a
// state_dict maps one to one: "fc1.weight" (F, C), "fc1.bias" (F), "fc2.weight" (C, F), "fc2.bias" (C).
// Not for: gated variants (SwiGLU) or mixtures of experts.
//
//   attnlab::Rng rng(1);
//   attnlab::FeedForward ffn(/*width=*/64, /*hidden=*/256, attnlab::Activation::gelu, /*bias=*/true, rng);
//   attnlab::FeedForwardCache cache;
//   attnlab::Tensor3 y = ffn.forward(x, &cache);                // (B, T, 64)
//   attnlab::FeedForwardGrad g(ffn);
//   ffn.backward(dy, cache, g, dx);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/core/choice.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab {

#define ATTNLAB_ACTIVATION_VALUES(X)                                                          \
    X(gelu, "x * Phi(x), the exact erf form (BERT)")                                           \
    X(relu, "max(x, 0) (the original Transformer)")                                            \
    X(gelu_tanh, "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2's gelu_new")
ATTNLAB_CHOICE(Activation, "activation", ATTNLAB_ACTIVATION_VALUES, "the feed-forward non-linearity")

// "gelu", "relu", "gelu_tanh" and back (ConfigError listing the valid names for an unknown one).
inline std::string_view activation_name(Activation activation) { return choice_name(activation); }
inline Activation activation_from_name(std::string_view name) { return choice_from_name<Activation>(name); }

class FeedForward;

// What backward needs from the forward pass.
struct FeedForwardCache {
    Tensor3 x;       // (B, T, C) input: dW1 = dhᵀ·x
    Tensor3 hidden;  // (B, T, F) fc1 output before the activation: act'(hidden). GELUs only: a
                     // ReLU is fused into fc1's store, and its backward gates by act > 0
    Tensor3 act;     // (B, T, F) activation output, fc2's input: dW2 = doutᵀ·act
    mutable Tensor3 dhidden;  // (B, T, F) backward's scratch, kept so a training loop allocates nothing

    std::size_t bytes() const { return (x.size() + hidden.size() + act.size()) * sizeof(float); }
};

struct FeedForwardGrad {
    LinearGrad fc1, fc2;

    FeedForwardGrad() = default;
    explicit FeedForwardGrad(const FeedForward& ffn);  // zeros
    void zero();
    // Same names and order as FeedForward::parameters(prefix).
    std::vector<ParameterView> views(const std::string& prefix = "");
};

class FeedForward {
public:
    FeedForward() = default;
    // fc1, fc2 initialised like torch.nn.Linear.
    FeedForward(std::size_t width, std::size_t hidden, Activation activation, bool bias, Rng& rng);

    std::size_t width() const { return fc1.in_features(); }
    std::size_t hidden() const { return fc1.out_features(); }
    Activation activation() const { return activation_; }

    // x: (B, T, C) -> (B, T, C); fills cache when non-null. ShapeError if the width differs.
    Tensor3 forward(const Tensor3& x, FeedForwardCache* cache = nullptr) const;
    // The same into y (resized; not x): with a cache and y reused, nothing is allocated. With a
    // residual (B, T, C) (not y), y = residual + FFN(x), the sum made in fc2's store.
    void forward(const Tensor3& x, FeedForwardCache* cache, Tensor3& y, const Tensor3* residual = nullptr) const;
    // dout: (B, T, C) -> dx: (B, T, C) (resized and overwritten); grad += ... With a residual
    // (B, T, C) (not dx), dx = residual + FFNᵀ(dout), the sum made in fc1's dx store.
    void backward(const Tensor3& dout, const FeedForwardCache& cache, FeedForwardGrad& grad, Tensor3& dx,
                  const Tensor3* residual = nullptr) const;

    // fc1.weight, fc1.bias, fc2.weight, fc2.bias (biases only when present), after `prefix`.
    std::vector<ParameterView> parameters(const std::string& prefix = "");

    Linear fc1;  // (F, C)
    Linear fc2;  // (C, F)

private:
    Activation activation_ = Activation::gelu;
};

}  // namespace attnlab
