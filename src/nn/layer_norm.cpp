#include "attnlab/nn/layer_norm.hpp"

#include <xtensor/xbuilder.hpp>

#include "attnlab/kernels/elementwise.hpp"

namespace attnlab {

LayerNorm::LayerNorm(std::size_t width, float eps) : eps_(eps) {
    if (width == 0) fail<ConfigError>("LayerNorm: width must be positive, got 0");
    if (!(eps > 0.0f)) fail<ConfigError>("LayerNorm: eps must be positive, got ", eps);
    weight = xt::ones<float>({width});
    bias = xt::zeros<float>({width});
}

Tensor3 LayerNorm::forward(const Tensor3& x, LayerNormCache* cache) const {
    require_shape(x, {-1, -1, static_cast<std::ptrdiff_t>(width())}, "LayerNorm::forward", "x (B, T, C)");
    Tensor3 y;
    forward(x, cache, y);
    return y;
}

void LayerNorm::forward(const Tensor3& x, LayerNormCache* cache, Tensor3& y) const {
    require_shape(x, {-1, -1, static_cast<std::ptrdiff_t>(width())}, "LayerNorm::forward", "x (B, T, C)");
    if (cache) copy_into(x, cache->x);  // reuses the cache's buffer when the shape is unchanged
    normalize(x, cache, y);
}

void LayerNorm::forward_cached_input(LayerNormCache& cache, Tensor3& y) const {
    require_shape(cache.x, {-1, -1, static_cast<std::ptrdiff_t>(width())}, "LayerNorm::forward", "x (B, T, C)");
    normalize(cache.x, &cache, y);
}

Tensor3 LayerNorm::forward(Tensor3&& x, LayerNormCache* cache) const {
    require_shape(x, {-1, -1, static_cast<std::ptrdiff_t>(width())}, "LayerNorm::forward", "x (B, T, C)");
    Tensor3 y;
    if (!cache) {
        normalize(x, nullptr, y);
        return y;
    }
    cache->x = std::move(x);
    normalize(cache->x, cache, y);
    return y;
}

// x: (B, T, C) -> (B, T, C); mean and rstd into the cache when non-null (x is already there).
void LayerNorm::normalize(const Tensor3& x, LayerNormCache* cache, Tensor3& y) const {
    const std::size_t batch = x.shape(0), t = x.shape(1), rows = batch * t;
    y.resize(x.shape());  // (B, T, C)
    float* mean = nullptr;
    float* rstd = nullptr;
    if (cache) {
        cache->mean.resize({batch, t});
        cache->rstd.resize({batch, t});
        mean = cache->mean.data();
        rstd = cache->rstd.data();
    }
    kernels::layer_norm_forward(x.data(), weight.data(), bias.data(), y.data(), mean, rstd, rows, width(), eps_);
}

void LayerNorm::backward(const Tensor3& dout, const LayerNormCache& cache, LayerNormGrad& grad, Tensor3& dx) const {
    require_shape(dout, {static_cast<std::ptrdiff_t>(cache.x.shape(0)), static_cast<std::ptrdiff_t>(cache.x.shape(1)),
                         static_cast<std::ptrdiff_t>(width())},
                  "LayerNorm::backward", "dout (B, T, C)");
    dx.resize(cache.x.shape());
    kernels::layer_norm_backward(cache.x.data(), weight.data(), cache.mean.data(), cache.rstd.data(), dout.data(),
                                 dx.data(), grad.weight.data(), grad.bias.data(), cache.x.shape(0) * cache.x.shape(1),
                                 width());
}

std::vector<ParameterView> LayerNorm::parameters(const std::string& prefix) {
    return {view_of(prefix + "weight", weight), view_of(prefix + "bias", bias)};
}

LayerNormGrad::LayerNormGrad(const LayerNorm& layer)
    : weight(xt::zeros<float>(layer.weight.shape())), bias(xt::zeros<float>(layer.bias.shape())) {}

void LayerNormGrad::zero() {
    weight.fill(0.0f);
    bias.fill(0.0f);
}

std::vector<ParameterView> LayerNormGrad::views(const std::string& prefix) {
    return {view_of(prefix + "weight", weight), view_of(prefix + "bias", bias)};
}

}  // namespace attnlab
