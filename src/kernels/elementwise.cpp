// Activations and layer normalisation, forward and backward side by side. The SIMD loops of
// ReLU, GELU and the layer-norm rows are in elementwise_arch.hpp, compiled per ISA and chosen
// at run time (kernels/isa.hpp); this file holds validation and threading.
//
// Legend: n elements (any shape, flattened); rows x cols for layer norm, normalised over cols
// (rows = B·T tokens, cols = C model width).
#include "attnlab/kernels/elementwise.hpp"

#include "attnlab/kernels/adamw.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attnlab/core/column_sums.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "kernel_table.hpp"

namespace attnlab {
namespace kernels {
namespace {

// Elements per chunk before an elementwise loop is split across threads: ReLU is memory
// bound and cheap, GELU pays for an erf (and an exp in backward) per element.
constexpr std::size_t kReluGrain = std::size_t{1} << 16;
constexpr std::size_t kGeluGrain = std::size_t{1} << 13;
constexpr std::size_t kNormEntriesPerChunk = std::size_t{1} << 14;
// Hidden units per chunk of an LSTM cell step (four exps and a tanh's exp each).
constexpr std::size_t kLstmCellGrain = std::size_t{1} << 13;

// Rows (or columns) per chunk so that a chunk holds at least kNormEntriesPerChunk entries.
std::size_t grain_for(std::size_t line_length) {
    return std::max<std::size_t>(1, kNormEntriesPerChunk / std::max<std::size_t>(line_length, 1));
}

}  // namespace

// y = max(x, 0), NaN propagating (elementwise_arch.hpp).
void relu_forward(const float* x, float* y, std::size_t n) {
    parallel_for(
        0, n, [&](std::size_t begin, std::size_t end) { table().relu_forward(x + begin, y + begin, end - begin); },
        kReluGrain);
}

// dx (+)= dy · [x > 0] (elementwise_arch.hpp).
void relu_backward(const float* x, const float* dy, float* dx, std::size_t n, Accumulate acc) {
    const bool add = acc == Accumulate::yes;
    parallel_for(
        0, n,
        [&](std::size_t begin, std::size_t end) {
            table().relu_backward(x + begin, dy + begin, dx + begin, end - begin, add);
        },
        kReluGrain);
}

// y = x·Φ(x), the exact erf form (elementwise_arch.hpp).
void gelu_forward(const float* x, float* y, std::size_t n) {
    parallel_for(
        0, n, [&](std::size_t begin, std::size_t end) { table().gelu_forward(x + begin, y + begin, end - begin); },
        kGeluGrain);
}

// dx (+)= dy · (Φ(x) + x·φ(x)) (elementwise_arch.hpp).
void gelu_backward(const float* x, const float* dy, float* dx, std::size_t n, Accumulate acc) {
    const bool add = acc == Accumulate::yes;
    parallel_for(
        0, n,
        [&](std::size_t begin, std::size_t end) {
            table().gelu_backward(x + begin, dy + begin, dx + begin, end - begin, add);
        },
        kGeluGrain);
}

// y = x·σ(2u), GELU's tanh form (elementwise_arch.hpp).
void gelu_tanh_forward(const float* x, float* y, std::size_t n) {
    parallel_for(
        0, n,
        [&](std::size_t begin, std::size_t end) { table().gelu_tanh_forward(x + begin, y + begin, end - begin); },
        kGeluGrain);
}

// dx (+)= dy · d/dx[x·σ(2u)] (elementwise_arch.hpp).
void gelu_tanh_backward(const float* x, const float* dy, float* dx, std::size_t n, Accumulate acc) {
    const bool add = acc == Accumulate::yes;
    parallel_for(
        0, n,
        [&](std::size_t begin, std::size_t end) {
            table().gelu_tanh_backward(x + begin, dy + begin, dx + begin, end - begin, add);
        },
        kGeluGrain);
}

// Per row: mean = Σx/N, var = Σ(x - mean)²/N (biased, as torch), rstd = 1/√(var + eps),
//          y = (x - mean)·rstd·gamma + beta.
// Float SIMD in two passes, the mean summed as x - x₀ so that rows with a large offset
// (|mean| >> std) keep their variance (elementwise_arch.hpp).
void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                        std::size_t rows, std::size_t cols, float eps) {
    parallel_for(
        0, rows,
        [&](std::size_t begin, std::size_t end) {
            table().layer_norm_forward(x + begin * cols, gamma, beta, y + begin * cols, mean ? mean + begin : nullptr,
                                       rstd ? rstd + begin : nullptr, end - begin, cols, eps);
        },
        grain_for(cols));
}

// Differentiates y = xhat·gamma + beta with xhat = (x - mean)·rstd, per row (N = cols):
//   dbeta += Σ_rows dy,  dgamma += Σ_rows dy·xhat,
//   g = dy·gamma,  dx = rstd·(g - mean(g) - xhat·mean(g·xhat)).
// dx rows are independent (parallel over rows, float SIMD in elementwise_arch.hpp); dgamma/dbeta
// sum over rows, so they run as a
// second pass of column sums in fixed row blocks (core/column_sums.hpp: the same sums for any
// thread count).
void layer_norm_backward(const float* x, const float* gamma, const float* mean, const float* rstd, const float* dy,
                         float* dx, float* dgamma, float* dbeta, std::size_t rows, std::size_t cols) {
    parallel_for(
        0, rows,
        [&](std::size_t begin, std::size_t end) {
            table().layer_norm_backward_rows(x + begin * cols, gamma, mean + begin, rstd + begin, dy + begin * cols,
                                             dx + begin * cols, end - begin, cols);
        },
        grain_for(cols));

    // dgamma and dbeta: column sums over all rows (core/column_sums.hpp), in float within each
    // block of kColumnSumRows rows and in double over the blocks (all in double, the
    // conversions would make these sums slower than the dx rows).
    float* const outputs[2] = {dgamma, dbeta};
    column_sums<float, 2>(rows, cols, outputs, [&](std::size_t r, std::size_t j0, std::size_t w, auto& sums) {
        const float m = mean[r], rs = rstd[r];
        for (std::size_t j = 0; j < w; ++j) {
            const float d = dy[r * cols + j0 + j];
            sums[0][j] += d * ((x[r * cols + j0 + j] - m) * rs);
            sums[1][j] += d;
        }
    });
}

// The LSTM cell of one time step (elementwise_arch.hpp), rows split across threads once a chunk
// holds kLstmCellGrain hidden units: a step of a small batch (B·H of a few thousand) runs on the
// calling thread, where waking the pool would cost more than the cell.
void lstm_cell_forward(float* gates, const float* c_prev, float* c, float* tanh_c, float* h, std::size_t rows,
                       std::size_t hidden) {
    parallel_for(
        0, rows,
        [&](std::size_t begin, std::size_t end) {
            const std::size_t o = begin * hidden;
            table().lstm_cell_forward(gates + 4 * o, c_prev + o, c + o, tanh_c + o, h + o, end - begin, hidden);
        },
        std::max<std::size_t>(1, kLstmCellGrain / std::max<std::size_t>(hidden, 1)));
}

void lstm_cell_backward(const float* gates, const float* c_prev, const float* tanh_c, const float* dh, float* dc,
                        float* dgates, std::size_t rows, std::size_t hidden) {
    parallel_for(
        0, rows,
        [&](std::size_t begin, std::size_t end) {
            const std::size_t o = begin * hidden;
            table().lstm_cell_backward(gates + 4 * o, c_prev + o, tanh_c + o, dh + o, dc + o, dgates + 4 * o,
                                       end - begin, hidden);
        },
        std::max<std::size_t>(1, kLstmCellGrain / std::max<std::size_t>(hidden, 1)));
}

// The AdamW update of one tensor (elementwise_arch.hpp), serial: the optimizer runs tensors in
// parallel.
void adamw_update(float* p, const float* g, float* m, float* v, std::size_t n, const AdamWStep& step) {
    table().adamw_update(p, g, m, v, n, step);
}

}  // namespace kernels

// x: (R, N) -> (R, N)
Tensor2 relu(const Tensor2& x) {
    Tensor2 y = Tensor2::from_shape(x.shape());
    kernels::relu_forward(x.data(), y.data(), x.size());
    return y;
}

// x: (R, N) -> (R, N)
Tensor2 gelu(const Tensor2& x) {
    Tensor2 y = Tensor2::from_shape(x.shape());
    kernels::gelu_forward(x.data(), y.data(), x.size());
    return y;
}

// x: (R, N), gamma: (N), beta: (N) -> (R, N)
Tensor2 layer_norm(const Tensor2& x, const Tensor1& gamma, const Tensor1& beta, float eps) {
    const std::size_t rows = x.shape(0), cols = x.shape(1);
    if (gamma.shape(0) != cols) {
        fail<ShapeError>("layer_norm: gamma must be (", cols, ") to match x ", shape_string(x.shape()), ", got ",
                         shape_string(gamma.shape()));
    }
    if (beta.shape(0) != cols) {
        fail<ShapeError>("layer_norm: beta must be (", cols, ") to match x ", shape_string(x.shape()), ", got ",
                         shape_string(beta.shape()));
    }
    if (!(eps >= 0.0f) || !std::isfinite(eps)) fail<ValueError>("layer_norm: eps must be finite and >= 0, got ", eps);
    Tensor2 y = Tensor2::from_shape(x.shape());
    kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), nullptr, nullptr, rows, cols, eps);
    return y;
}

}  // namespace attnlab
