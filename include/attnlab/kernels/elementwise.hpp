// attnlab/kernels/elementwise.hpp: activations (GELU, ReLU) and layer normalisation kernels.
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

// x: (rows, cols) -> y: (rows, cols); gamma, beta: (cols). Writes per-row mean and rstd
// (1 / sqrt(var + eps)), each (rows), when the pointers are non-null (backward needs them).
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                        std::size_t rows, std::size_t cols, float eps);
// Given the forward input x, gamma, the saved mean and rstd, and dy: (rows, cols),
// writes dx (rows, cols) and accumulates dgamma, dbeta (cols) with +=.
void layer_norm_backward(const float* x, const float* gamma, const float* mean, const float* rstd, const float* dy,
                         float* dx, float* dgamma, float* dbeta, std::size_t rows, std::size_t cols);
}  // namespace kernels

// x: (R, N) -> (R, N)
Tensor2 relu(const Tensor2& x);
// x: (R, N) -> (R, N)
Tensor2 gelu(const Tensor2& x);
// x: (R, N), gamma: (N), beta: (N) -> (R, N)
Tensor2 layer_norm(const Tensor2& x, const Tensor1& gamma, const Tensor1& beta, float eps = 1e-5f);

}  // namespace attnlab
