// attnlab/kernels/elementwise.hpp: activations (GELU, ReLU), layer normalisation and LSTM cell kernels.
//
// What it is for: the non-attention pieces of a Transformer block, forward and backward side by
// side. GELU is the exact erf form, as torch.nn.GELU() default: 0.5·x·(1 + erf(x/√2)).
// Layer norm normalises each row over its last dimension with biased variance and eps inside
// the square root, as torch.nn.LayerNorm: y = (x - mean) / sqrt(var + eps) · gamma + beta.
//
//   attnlab::Tensor2 y = attnlab::gelu(x);                        // (R, N) -> (R, N)
//   attnlab::Tensor2 z = attnlab::layer_norm(x, gamma, beta);     // (R, N) -> (R, N)
#pragma once

#include <cstddef>

#include "attnlab/core/tensor.hpp"
#include "attnlab/kernels/matmul.hpp"  // Accumulate

namespace attnlab {
namespace kernels {
// y[i] = relu(x[i]); x, y: n elements (may alias).
void relu_forward(const float* x, float* y, std::size_t n);
// dx[i] (+)= dy[i] * (x[i] > 0); x is the forward input; dx may alias dy.
void relu_backward(const float* x, const float* dy, float* dx, std::size_t n, Accumulate acc = Accumulate::no);
void gelu_forward(const float* x, float* y, std::size_t n);
// dx[i] (+)= dy[i] * gelu'(x[i]); x is the forward input; dx may alias dy.
void gelu_backward(const float* x, const float* dy, float* dx, std::size_t n, Accumulate acc = Accumulate::no);
// GELU's tanh approximation (GPT-2's gelu_new): y[i] = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
void gelu_tanh_forward(const float* x, float* y, std::size_t n);
// dx[i] (+)= dy[i] * gelu_tanh'(x[i]); x is the forward input; dx may alias dy.
void gelu_tanh_backward(const float* x, const float* dy, float* dx, std::size_t n,
                        Accumulate acc = Accumulate::no);

// x: (rows, cols) -> y: (rows, cols); gamma, beta: (cols). Writes per-row mean and rstd
// (1 / sqrt(var + eps)), each (rows), when the pointers are non-null (backward needs them).
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                        std::size_t rows, std::size_t cols, float eps);
// Given the forward input x, gamma, the saved mean and rstd, and dy: (rows, cols),
// writes dx (rows, cols) and accumulates dgamma, dbeta (cols) with +=.
void layer_norm_backward(const float* x, const float* gamma, const float* mean, const float* rstd, const float* dy,
                         float* dx, float* dgamma, float* dbeta, std::size_t rows, std::size_t cols);

// One time step of an LSTM cell for `rows` sequences (nn/lstm.hpp), gates in torch.nn.LSTM's
// order i, f, g, o, each H wide. gates: (rows, 4H) holds the pre-activations
// x·W_ihᵀ + h_prev·W_hhᵀ + b and is overwritten with the activations i = σ, f = σ, g = tanh,
// o = σ (what backward needs); c_prev: (rows, H) -> c = f·c_prev + i·g, tanh_c = tanh(c) and
// h = o·tanh_c: (rows, H). c, tanh_c, h must not alias gates or c_prev.
void lstm_cell_forward(float* gates, const float* c_prev, float* c, float* tanh_c, float* h, std::size_t rows,
                       std::size_t hidden);
// Its backward. gates: (rows, 4H) the activations the forward left; c_prev, tanh_c: (rows, H)
// from the forward; dh: (rows, H) the gradient of h; dc: (rows, H) the gradient of c from later
// steps, replaced by the gradient of c_prev -> dgates: (rows, 4H) the pre-activation gradients.
void lstm_cell_backward(const float* gates, const float* c_prev, const float* tanh_c, const float* dh, float* dc,
                        float* dgates, std::size_t rows, std::size_t hidden);
}  // namespace kernels

// x: (R, N) -> (R, N)
Tensor2 relu(const Tensor2& x);
// x: (R, N) -> (R, N)
Tensor2 gelu(const Tensor2& x);
// x: (R, N), gamma: (N), beta: (N) -> (R, N)
Tensor2 layer_norm(const Tensor2& x, const Tensor1& gamma, const Tensor1& beta, float eps = 1e-5f);

}  // namespace attnlab
