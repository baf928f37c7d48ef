#include "attnlab/nn/linear.hpp"

#include <cmath>

#include <xtensor/xbuilder.hpp>

#include "attnlab/core/column_sums.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/matmul.hpp"

namespace attnlab {

Linear::Linear(std::size_t in_features, std::size_t out_features, bool with_bias, Rng& rng) {
    if (in_features == 0 || out_features == 0) {
        fail<ConfigError>("Linear: features must be positive, got in=", in_features, ", out=", out_features);
    }
    require_allocatable({out_features, in_features}, "Linear", "the weight");
    const float bound = 1.0f / std::sqrt(static_cast<float>(in_features));
    weight = Tensor2::from_shape({out_features, in_features});
    for (auto& w : weight) w = rng.uniform(-bound, bound);
    if (with_bias) {
        bias = Tensor1::from_shape({out_features});
        for (auto& b : bias) b = rng.uniform(-bound, bound);
    }
}

Tensor2 Linear::forward(const Tensor2& x) const {
    if (x.shape(1) != in_features()) {
        fail<ShapeError>("Linear::forward: x must be (N, ", in_features(), "), got ", shape_string(x.shape()));
    }
    Tensor2 y = Tensor2::from_shape({x.shape(0), out_features()});
    forward(x.data(), x.shape(0), y.data());
    return y;
}

void Linear::forward(const float* x, std::size_t n, float* y, const kernels::Epilogue& epilogue) const {
    const std::size_t in = in_features(), out = out_features();
    // y = x·Wᵀ + b: the bias (and the epilogue) are applied as the matmul stores y, no pass of
    // their own.
    kernels::matmul_nt(x, in, weight.data(), in, y, out, n, out, in, Accumulate::no,
                       has_bias() ? bias.data() : nullptr, nullptr, epilogue);
}

void Linear::forward_tables(const TableRows& x, float* y, Tensor2& scratch) const {
    const std::size_t in = in_features(), out = out_features();
    ATTNLAB_DEBUG_ASSERT(x.width == in);
    scratch.resize({x.a_rows + x.b_rows, out});
    float* const aw = scratch.data();                 // (a_rows, out) = a·Wᵀ + bias
    float* const bw = aw + x.a_rows * out;            // (b_rows, out) = b·Wᵀ
    kernels::matmul_nt(x.a, in, weight.data(), in, aw, out, x.a_rows, out, in, Accumulate::no,
                       has_bias() ? bias.data() : nullptr);
    if (x.b) kernels::matmul_nt(x.b, in, weight.data(), in, bw, out, x.b_rows, out, in);
    // y[r] = aw[ia[r]] + bw[r mod b_rows]
    parallel_for(0, x.rows, [&](std::size_t begin, std::size_t end) {
        std::size_t p = x.b ? begin % x.b_rows : 0;
        for (std::size_t r = begin; r < end; ++r) {
            const float* ar = aw + static_cast<std::size_t>(x.ia[r]) * out;
            float* yr = y + r * out;
            if (!x.b) {
                std::copy_n(ar, out, yr);
                continue;
            }
            const float* br = bw + p * out;
            for (std::size_t j = 0; j < out; ++j) yr[j] = ar[j] + br[j];
            if (++p == x.b_rows) p = 0;
        }
    });
}

}  // namespace attnlab

namespace attnlab {

LinearGrad::LinearGrad(const Linear& layer) {
    weight = xt::zeros<float>(layer.weight.shape());
    if (layer.has_bias()) bias = xt::zeros<float>(layer.bias.shape());
}

void LinearGrad::zero() {
    weight.fill(0.0f);
    bias.fill(0.0f);
}

void linear_backward(const Linear& layer, const float* x, std::size_t n, const float* dy, LinearGrad& grad,
                     float* dx, Accumulate dx_acc, const kernels::Epilogue& dx_epilogue) {
    const std::size_t in = layer.in_features(), out = layer.out_features();
    // y = x·Wᵀ + b  =>  dx (+)= dy·W, dW += dyᵀ·x, db += Σ dy
    if (dx) {
        kernels::matmul_nn(dy, out, layer.weight.data(), in, dx, in, n, in, out, dx_acc, nullptr, nullptr, dx_epilogue);
    }
    kernels::matmul_tn(dy, out, x, in, grad.weight.data(), in, out, in, n, Accumulate::yes);
    if (layer.has_bias()) {
        // db += Σ_rows dy, in fixed row blocks (core/column_sums.hpp: the same sums for any
        // thread count, and a layer's few columns still split over threads).
        float* const outputs[1] = {grad.bias.data()};
        column_sums<float, 1>(n, out, outputs, [&](std::size_t r, std::size_t j0, std::size_t w, auto& sums) {
            const float* row = dy + r * out + j0;
            for (std::size_t j = 0; j < w; ++j) sums[0][j] += row[j];
        });
    }
}

void linear_backward_tables(const Linear& layer, const TableRows& x, const float* dy, LinearGrad& grad,
                            Tensor2& scratch) {
    const std::size_t in = layer.in_features(), out = layer.out_features();
    ATTNLAB_DEBUG_ASSERT(x.width == in);
    scratch.resize({x.a_rows + x.b_rows, out});
    scratch.fill(0.0f);
    float* const ga = scratch.data();       // (a_rows, out) Σ of dy over the rows of each a row
    float* const gb = ga + x.a_rows * out;  // (b_rows, out) and of each position
    // One pass, in row order (the sums do not depend on the thread count).
    std::size_t p = 0;
    for (std::size_t r = 0; r < x.rows; ++r) {
        const float* d = dy + r * out;
        float* gar = ga + static_cast<std::size_t>(x.ia[r]) * out;
        for (std::size_t j = 0; j < out; ++j) gar[j] += d[j];
        if (!x.b) continue;
        float* gbr = gb + p * out;
        for (std::size_t j = 0; j < out; ++j) gbr[j] += d[j];
        if (++p == x.b_rows) p = 0;
    }
    // y = (a·Wᵀ)[ia] + (b·Wᵀ)[r mod b_rows] + bias
    kernels::matmul_tn(ga, out, x.a, in, grad.weight.data(), in, out, in, x.a_rows, Accumulate::yes);
    if (x.b) kernels::matmul_tn(gb, out, x.b, in, grad.weight.data(), in, out, in, x.b_rows, Accumulate::yes);
    if (layer.has_bias()) {
        // Σ_r dy[r] = Σ_v ga[v]: every row is counted in exactly one row of ga.
        for (std::size_t v = 0; v < x.a_rows; ++v) {
            for (std::size_t j = 0; j < out; ++j) grad.bias(j) += ga[v * out + j];
        }
    }
    kernels::matmul_nn(ga, out, layer.weight.data(), in, x.da, in, x.a_rows, in, out, Accumulate::yes);
    if (x.b && x.db) kernels::matmul_nn(gb, out, layer.weight.data(), in, x.db, in, x.b_rows, in, out, Accumulate::yes);
}

}  // namespace attnlab
