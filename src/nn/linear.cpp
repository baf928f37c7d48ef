#include "attnlab/nn/linear.hpp"

#include <cmath>

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

void Linear::forward(const float* x, std::size_t n, float* y) const {
    const std::size_t in = in_features(), out = out_features();
    if (has_bias()) {
        for (std::size_t r = 0; r < n; ++r) std::copy(bias.begin(), bias.end(), y + r * out);
        kernels::matmul_nt(x, in, weight.data(), in, y, out, n, out, in, Accumulate::yes);
    } else {
        kernels::matmul_nt(x, in, weight.data(), in, y, out, n, out, in);
    }
}

}  // namespace attnlab
