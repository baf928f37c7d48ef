#include "attnlab/posenc/rope.hpp"

#include <cmath>

namespace attnlab {

RopeTable::RopeTable(std::size_t t_, std::size_t head_dim, std::size_t offset, double base)
    : t(t_), half(head_dim / 2), cos(t_ * (head_dim / 2)), sin(t_ * (head_dim / 2)) {
    if (head_dim % 2 != 0) fail<ConfigError>("RoPE: head dimension must be even, got ", head_dim);
    for (std::size_t p = 0; p < half; ++p) {
        const double theta = std::pow(base, -2.0 * static_cast<double>(p) / static_cast<double>(head_dim));
        for (std::size_t i = 0; i < t; ++i) {
            const double angle = static_cast<double>(i + offset) * theta;
            cos[i * half + p] = static_cast<float>(std::cos(angle));
            sin[i * half + p] = static_cast<float>(std::sin(angle));
        }
    }
}

void rope_rotate(float* x, std::size_t t, std::size_t d, std::size_t ld, const RopeTable& table, bool inverse) {
    const std::size_t half = d / 2;
    const float sign = inverse ? -1.0f : 1.0f;
    for (std::size_t i = 0; i < t; ++i) {
        float* row = x + i * ld;
        const float* c = table.cos.data() + i * half;
        const float* s = table.sin.data() + i * half;
        for (std::size_t p = 0; p < half; ++p) {
            const float a = row[p], b = row[p + half], sn = sign * s[p];
            row[p] = a * c[p] - b * sn;
            row[p + half] = b * c[p] + a * sn;
        }
    }
}

namespace {
// The table of the last (T, D, offset, base) this thread asked for: a training step rotates
// q, k and their gradients with the same table, so it is built once, not four times a layer.
const RopeTable& cached_table(std::size_t t, std::size_t d, std::size_t offset, double base) {
    struct Key {
        std::size_t t, d, offset;
        double base;
        bool operator==(const Key& o) const { return t == o.t && d == o.d && offset == o.offset && base == o.base; }
    };
    thread_local Key key{0, 0, 0, 0.0};
    thread_local RopeTable table(0, 0, 0, kRopeDefaultBase);
    const Key want{t, d, offset, base};
    if (!(key == want)) {
        table = RopeTable(t, d, offset, base);
        key = want;
    }
    return table;
}
}  // namespace

void apply_rope(Tensor4& x, std::size_t offset, double base, bool inverse) {
    const std::size_t outer = x.shape(0) * x.shape(1), t = x.shape(2), d = x.shape(3);
    const RopeTable& table = cached_table(t, d, offset, base);
    for (std::size_t o = 0; o < outer; ++o) rope_rotate(x.data() + o * t * d, t, d, d, table, inverse);
}

}  // namespace attnlab
