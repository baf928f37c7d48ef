// attnlab/nn/linear.hpp: the affine layer y = x·Wᵀ + b, with PyTorch's weight layout.
//
// What it is for: every projection of the model (W_Q, W_K, W_V, W_O, feed-forward, heads).
// weight is (out_features, in_features) exactly like torch.nn.Linear, so state_dicts map one to
// one and y = x·Wᵀ is a single matmul_nt. Not for: batched weights (one W per call).
//
//   attnlab::Rng rng(1);
//   attnlab::Linear proj(64, 16, /*bias=*/true, rng);  // weight (16, 64), bias (16)
//   attnlab::Tensor2 y = proj.forward(x);              // (N, 64) -> (N, 16)
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/kernels/matmul.hpp"  // Accumulate

namespace attnlab {

// Rows made from two tables: x[r] = a[ia[r]] + b[r mod period] (b optional), r < rows, each row
// `width` floats. What it is for: a model's first block, whose input is a token embedding plus
// a position table. A Linear of such rows is (a·Wᵀ)[ia] + (b·Wᵀ)[r mod period]: its products run
// over the tables' rows (vocabulary and positions) instead of every row of the batch, and so
// do its gradients: with Ga = Σ_{r: ia[r] = v} dy[r] (a_rows, out) and Gb likewise by position,
// dW = Gaᵀ·a + Gbᵀ·b and the gradient of the a rows Ga·W, of the b rows Gb·W. The same
// values as through x itself, summed in another order.
struct TableRows {
    const float* a = nullptr;          // (a_rows, width)
    std::size_t a_rows = 0;
    const std::int32_t* ia = nullptr;  // (rows) each in [0, a_rows)
    const float* b = nullptr;          // (b_rows, width), or null
    std::size_t b_rows = 0;            // the period: row r adds b[r mod b_rows]
    std::size_t rows = 0, width = 0;
    float* da = nullptr;  // (a_rows, width): linear_backward_tables adds the gradient of a's rows
    float* db = nullptr;  // (b_rows, width) or null (b's gradient not wanted)
};

struct Linear {
    Tensor2 weight;  // (out, in)
    Tensor1 bias;    // (out), or size 0 when the layer has no bias

    Linear() = default;
    // torch.nn.Linear's default initialisation: weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)).
    Linear(std::size_t in_features, std::size_t out_features, bool with_bias, Rng& rng);

    std::size_t in_features() const { return weight.shape(1); }
    std::size_t out_features() const { return weight.shape(0); }
    bool has_bias() const { return bias.size() > 0; }

    // x: (N, in) -> (N, out). Throws ShapeError naming the widths on mismatch.
    Tensor2 forward(const Tensor2& x) const;
    // x: (n, in) rows at stride in -> y: (n, out) rows at stride out, then the epilogue (a fused
    // ReLU, or an added (n, out) residual: kernels/epilogue.hpp). No validation (kernel use).
    void forward(const float* x, std::size_t n, float* y, const kernels::Epilogue& epilogue = {}) const;
    // The rows of x (width in) -> y: (x.rows, out) = x·Wᵀ + b. scratch: resized to
    // (a_rows + b_rows, out), the tables' products. No validation (kernel use).
    void forward_tables(const TableRows& x, float* y, Tensor2& scratch) const;
};

// Gradients of a Linear, same shapes as its parameters.
struct LinearGrad {
    Tensor2 weight;  // (out, in)
    Tensor1 bias;    // (out) or empty

    LinearGrad() = default;
    explicit LinearGrad(const Linear& layer);  // zeros shaped like layer's parameters
    void zero();
};

// Backward of y = x·Wᵀ + b.
// x: (n, in) forward input, dy: (n, out) -> dx: (n, in) (overwritten, or added to with
// dx_acc = yes; skipped if null); grad.weight += dyᵀ·x, grad.bias += Σ_rows dy. dx_epilogue
// is applied in dx's store (kernels/epilogue.hpp; its operand (n, in) at stride in): a gate,
// dx = [gate > 0]·(dy·W), the backward of a ReLU whose output the gate is (a ConfigError with
// dx_acc = yes), or an added matrix R, dx = (dx +) dy·W + R, a residual connection's gradient.
void linear_backward(const Linear& layer, const float* x, std::size_t n, const float* dy, LinearGrad& grad,
                     float* dx, Accumulate dx_acc = Accumulate::no, const kernels::Epilogue& dx_epilogue = {});
// The backward of forward_tables, with the input's gradient going to the tables: dy (x.rows, out)
// -> grad.weight += Gaᵀ·a + Gbᵀ·b, grad.bias += Σ dy, x.da += Ga·W, x.db += Gb·W (if non-null).
// scratch: resized to (a_rows + b_rows, out) for Ga and Gb.
void linear_backward_tables(const Linear& layer, const TableRows& x, const float* dy, LinearGrad& grad,
                            Tensor2& scratch);

}  // namespace attnlab
