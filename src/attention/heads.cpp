#include "attnlab/attention/heads.hpp"

#include <algorithm>

namespace attnlab {

Tensor4 split_heads(const Tensor3& x, std::size_t num_heads) {
    const std::size_t batch = x.shape(0), t = x.shape(1), c = x.shape(2);
    if (num_heads == 0 || c % num_heads != 0) {
        fail<ConfigError>("split_heads: width ", c, " is not divisible by num_heads ", num_heads);
    }
    const std::size_t d = c / num_heads;
    Tensor4 out = Tensor4::from_shape({batch, num_heads, t, d});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < t; ++i)
            for (std::size_t h = 0; h < num_heads; ++h) {
                const float* src = x.data() + (b * t + i) * c + h * d;   // x[b, i, h*D : (h+1)*D]
                std::copy(src, src + d, out.data() + ((b * num_heads + h) * t + i) * d);
            }
    return out;
}

Tensor3 merge_heads(const Tensor4& x) {
    const std::size_t batch = x.shape(0), heads = x.shape(1), t = x.shape(2), d = x.shape(3);
    Tensor3 out = Tensor3::from_shape({batch, t, heads * d});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t i = 0; i < t; ++i) {
                const float* src = x.data() + ((b * heads + h) * t + i) * d;
                std::copy(src, src + d, out.data() + (b * t + i) * heads * d + h * d);
            }
    return out;
}

}  // namespace attnlab
