#include "attnlab/nn/dropout.hpp"

namespace attnlab {

Tensor3 dropout_forward(const Tensor3& x, float p, Rng& rng, DropoutCache* cache) {
    Tensor3 y;
    dropout_forward(x, p, rng, cache, y);
    return y;
}

void dropout_forward(const Tensor3& x, float p, Rng& rng, DropoutCache* cache, Tensor3& y) {
    if (!(p >= 0.0f && p < 1.0f)) fail<ValueError>("dropout_forward: p must be in [0, 1), got ", p);
    if (p == 0.0f) {
        if (cache) *cache = DropoutCache{};
        if (&y != &x) y = x;
        return;
    }
    const float scale = 1.0f / (1.0f - p);
    Array<std::uint8_t, 3> local_keep;
    Array<std::uint8_t, 3>& keep = cache ? cache->keep : local_keep;  // (B, T, C)
    keep.resize(x.shape());
    if (&y != &x) y.resize(x.shape());  // (B, T, C)
    for (std::size_t i = 0; i < x.size(); ++i) {
        const bool kept = rng.uniform() >= p;
        keep.data()[i] = kept ? 1 : 0;
        y.data()[i] = kept ? x.data()[i] * scale : 0.0f;
    }
    if (cache) cache->scale = scale;
}

void dropout_backward(const Tensor3& dout, const DropoutCache& cache, Tensor3& dx) {
    if (cache.keep.size() == 0) {  // p = 0: the forward was the identity
        dx = dout;
        return;
    }
    if (dout.shape() != cache.keep.shape()) {
        fail<ShapeError>("dropout_backward: dout must be ", shape_string(cache.keep.shape()), ", got ",
                         shape_string(dout.shape()));
    }
    dx.resize(dout.shape());
    // y = x ⊙ keep · scale  =>  dx = dy ⊙ keep · scale
    for (std::size_t i = 0; i < dout.size(); ++i) dx.data()[i] = cache.keep.data()[i] ? dout.data()[i] * cache.scale : 0.0f;
}

}  // namespace attnlab
