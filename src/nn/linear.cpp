#include "attnlab/nn/linear.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/matmul.hpp"

namespace attnlab {

namespace {
// Columns of the bias gradient summed at once in local accumulators.
constexpr std::size_t kColumnBlock = 32;
// Rows per partial sum of the bias gradient: fixed, so the sums do not depend on the threads.
constexpr std::size_t kSumRows = 256;
}  // namespace

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

void Linear::forward(const float* x, std::size_t n, float* y) const {
    const std::size_t in = in_features(), out = out_features();
    // y = x·Wᵀ + b: the bias is added as the matmul stores y, no pass of its own.
    kernels::matmul_nt(x, in, weight.data(), in, y, out, n, out, in, Accumulate::no,
                       has_bias() ? bias.data() : nullptr);
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
                     float* dx, Accumulate dx_acc) {
    const std::size_t in = layer.in_features(), out = layer.out_features();
    // y = x·Wᵀ + b  =>  dx (+)= dy·W, dW += dyᵀ·x, db += Σ dy
    if (dx) kernels::matmul_nn(dy, out, layer.weight.data(), in, dx, in, n, in, out, dx_acc);
    kernels::matmul_tn(dy, out, x, in, grad.weight.data(), in, out, in, n, Accumulate::yes);
    if (layer.has_bias()) {
        // Fixed blocks of kSumRows rows x kColumnBlock columns, each summed in row order into a
        // local block (registers, not memory: db could alias dy for all the compiler knows) and
        // stored as a partial; the partials are then added to db in block order. The blocks do
        // not depend on the thread count, so neither do the sums, and a layer's few columns
        // still split over threads (split over columns only, out = 64 was one serial task).
        const std::size_t row_blocks = (n + kSumRows - 1) / kSumRows;
        const std::size_t col_blocks = (out + kColumnBlock - 1) / kColumnBlock;
        // (row_blocks, out): the calling thread's, grow-only (no allocation after the first step).
        thread_local std::vector<float> partials;
        if (partials.size() < row_blocks * out) partials.resize(row_blocks * out);
        float* const part = partials.data();
        parallel_for(
            0, row_blocks * col_blocks,
            [&](std::size_t begin, std::size_t end) {
                for (std::size_t task = begin; task < end; ++task) {
                    const std::size_t rb = task / col_blocks, j0 = (task % col_blocks) * kColumnBlock;
                    const std::size_t w = std::min(kColumnBlock, out - j0), r_end = std::min(n, (rb + 1) * kSumRows);
                    float sum[kColumnBlock] = {};
                    for (std::size_t r = rb * kSumRows; r < r_end; ++r) {
                        const float* row = dy + r * out + j0;
                        for (std::size_t j = 0; j < w; ++j) sum[j] += row[j];
                    }
                    std::copy(sum, sum + w, part + rb * out + j0);
                }
            },
            1);
        float* db = grad.bias.data();
        for (std::size_t j = 0; j < out; ++j) {
            float total = 0.0f;
            for (std::size_t rb = 0; rb < row_blocks; ++rb) total += part[rb * out + j];
            db[j] += total;
        }
    }
}

}  // namespace attnlab
