#include "attnlab/attention/heads.hpp"

#include <algorithm>

#include "attnlab/core/thread_pool.hpp"

namespace attnlab {
namespace {
// Rows of (B, T) per pool chunk: a few KiB of copying, so a chunk outweighs handing it out.
constexpr std::size_t kRowsPerChunk = 64;

// dst[0, n) = src[0, n) for one head's row (D floats, typically 8-64): a loop the compiler
// vectorises in place, where std::copy became a memmove call per row. Clang (Emscripten)
// would turn the loop back into a memcpy call, hence no_builtin there.
#if defined(__clang__)
__attribute__((no_builtin("memcpy")))
#endif
inline void copy_row(const float* __restrict src, std::size_t n, float* __restrict dst) {
    for (std::size_t k = 0; k < n; ++k) dst[k] = src[k];
}
}  // namespace

Tensor4 split_heads(const Tensor3& x, std::size_t num_heads) {
    Tensor4 out;
    split_heads(x, num_heads, out);
    return out;
}

void split_heads(const Tensor3& x, std::size_t num_heads, Tensor4& out) {
    const std::size_t batch = x.shape(0), t = x.shape(1), c = x.shape(2);
    if (num_heads == 0 || c % num_heads != 0) {
        fail<ConfigError>("split_heads: width ", c, " is not divisible by num_heads ", num_heads);
    }
    const std::size_t d = c / num_heads;
    out.resize({batch, num_heads, t, d});
    // One row (b, i) per step, split over the pool: a training step copies a few MiB this way,
    // which on one thread would be a serial stretch between the parallel matmuls.
    parallel_for(
        0, batch * t,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t row = begin; row < end; ++row) {
                const std::size_t b = row / t, i = row % t;
                for (std::size_t h = 0; h < num_heads; ++h) {
                    const float* src = x.data() + row * c + h * d;  // x[b, i, h*D : (h+1)*D]
                    copy_row(src, d, out.data() + ((b * num_heads + h) * t + i) * d);
                }
            }
        },
        kRowsPerChunk);
}

Tensor3 merge_heads(const Tensor4& x) {
    Tensor3 out;
    merge_heads(x, out);
    return out;
}

void merge_heads(const Tensor4& x, Tensor3& out) {
    const std::size_t batch = x.shape(0), heads = x.shape(1), t = x.shape(2), d = x.shape(3);
    out.resize({batch, t, heads * d});
    parallel_for(
        0, batch * t,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t row = begin; row < end; ++row) {
                const std::size_t b = row / t, i = row % t;
                for (std::size_t h = 0; h < heads; ++h) {
                    const float* src = x.data() + ((b * heads + h) * t + i) * d;  // x[b, h, i, :]
                    copy_row(src, d, out.data() + row * heads * d + h * d);
                }
            }
        },
        kRowsPerChunk);
}

namespace {
template <class View, class T4>
View heads_of_impl(T4& x) {
    const std::size_t b = x.shape(0), h = x.shape(1), n = x.shape(2), d = x.shape(3);
    return View{x.data(), b, h, n, d, h * n * d, n * d, d};
}
template <class View, class T3>
View heads_in_rows_impl(T3& x, std::size_t num_heads) {
    const std::size_t b = x.shape(0), n = x.shape(1), c = x.shape(2);
    if (num_heads == 0 || c % num_heads != 0) {
        fail<ConfigError>("heads_in_rows: width ", c, " is not divisible by num_heads ", num_heads);
    }
    return View{x.data(), b, num_heads, n, c / num_heads, n * c, c / num_heads, c};
}
}  // namespace

HeadsView heads_of(Tensor4& x) { return heads_of_impl<HeadsView>(x); }
ConstHeadsView heads_of(const Tensor4& x) { return heads_of_impl<ConstHeadsView>(x); }
HeadsView heads_in_rows(Tensor3& x, std::size_t num_heads) { return heads_in_rows_impl<HeadsView>(x, num_heads); }
ConstHeadsView heads_in_rows(const Tensor3& x, std::size_t num_heads) {
    return heads_in_rows_impl<ConstHeadsView>(x, num_heads);
}

}  // namespace attnlab
