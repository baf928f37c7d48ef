// attnlab/nn/layer_norm.hpp: the LayerNorm module (Ba et al. 2016) over the model width.
//
// What it is for: the normalisation of Transformer blocks and the final norm of pre-LN models,
// as torch.nn.LayerNorm(C): y = (x - mean) / sqrt(var + eps) · weight + bias per (b, t) row,
// biased variance, eps = 1e-5. The arithmetic lives in kernels::layer_norm_forward/backward;
// this module owns the parameters (weight = gamma, bias = beta, PyTorch's names) and the cache.
// Not for: RMSNorm or normalising over other axes.
//
//   attnlab::LayerNorm ln(64);                      // weight ones, bias zeros
//   attnlab::LayerNormCache cache;
//   attnlab::Tensor3 y = ln.forward(x, &cache);     // (B, T, 64)
//   attnlab::LayerNormGrad g(ln);
//   ln.backward(dy, cache, g, dx);                  // dx (B, T, 64) overwritten; g += ...
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/core/tensor.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab {

class LayerNorm;

// What backward needs from the forward pass.
struct LayerNormCache {
    Tensor3 x;     // (B, T, C) input: x̂ = (x - mean)·rstd is recomputed from it
    Tensor2 mean;  // (B, T) row means
    Tensor2 rstd;  // (B, T) 1 / sqrt(var + eps), the factor every gradient term carries

    std::size_t bytes() const { return (x.size() + mean.size() + rstd.size()) * sizeof(float); }
};

struct LayerNormGrad {
    Tensor1 weight;  // (C)
    Tensor1 bias;    // (C)

    LayerNormGrad() = default;
    explicit LayerNormGrad(const LayerNorm& layer);  // zeros
    void zero();
    // Same names and order as LayerNorm::parameters(prefix).
    std::vector<ParameterView> views(const std::string& prefix = "");
};

class LayerNorm {
public:
    LayerNorm() = default;
    explicit LayerNorm(std::size_t width, float eps = 1e-5f);

    std::size_t width() const { return weight.size(); }
    float eps() const { return eps_; }

    // x: (B, T, C) -> (B, T, C); fills cache when non-null. ShapeError if the width differs.
    Tensor3 forward(const Tensor3& x, LayerNormCache* cache = nullptr) const;
    // The same, moving x into the cache instead of copying it (a residual sum nobody else keeps).
    Tensor3 forward(Tensor3&& x, LayerNormCache* cache = nullptr) const;
    // The same into y (resized; not x): with a cache and y reused from call to call, nothing
    // is allocated.
    void forward(const Tensor3& x, LayerNormCache* cache, Tensor3& y) const;
    // Normalises cache.x, which the caller wrote there (a residual sum computed straight into
    // the cache), into y (resized; not cache.x), filling the rest of the cache.
    void forward_cached_input(LayerNormCache& cache, Tensor3& y) const;
    // dout: (B, T, C) -> dx: (B, T, C) (resized and overwritten); grad.weight, grad.bias += ...
    void backward(const Tensor3& dout, const LayerNormCache& cache, LayerNormGrad& grad, Tensor3& dx) const;

    // "<prefix>weight", "<prefix>bias"
    std::vector<ParameterView> parameters(const std::string& prefix = "");

    Tensor1 weight;  // (C) gamma, initialised to ones
    Tensor1 bias;    // (C) beta, initialised to zeros

private:
    void normalize(const Tensor3& x, LayerNormCache* cache, Tensor3& y) const;

    float eps_ = 1e-5f;
};

}  // namespace attnlab
