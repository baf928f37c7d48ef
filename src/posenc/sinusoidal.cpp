#include "attnlab/posenc/sinusoidal.hpp"

#include <cmath>

namespace attnlab {

Tensor2 sinusoidal_table(std::size_t t, std::size_t c, std::size_t offset, double base) {
    require_allocatable({t, c}, "sinusoidal_table", "the table");
    Tensor2 pe = Tensor2::from_shape({t, c});
    for (std::size_t p = 0; p < t; ++p) {
        const double pos = static_cast<double>(p + offset);
        for (std::size_t col = 0; col < c; col += 2) {
            const double angle = pos / std::pow(base, static_cast<double>(col) / static_cast<double>(c));
            pe(p, col) = static_cast<float>(std::sin(angle));
            if (col + 1 < c) pe(p, col + 1) = static_cast<float>(std::cos(angle));
        }
    }
    return pe;
}

void add_sinusoidal(Tensor3& x, std::size_t offset, double base) {
    const std::size_t batch = x.shape(0), t = x.shape(1), c = x.shape(2);
    // The last table this thread built is reused while (T, C, offset, base) stay the same
    // (every training step): no allocation, no sin/cos per step.
    thread_local Tensor2 pe;
    thread_local std::size_t key_offset = 0;
    thread_local double key_base = 0.0;
    if (pe.shape(0) != t || pe.shape(1) != c || key_offset != offset || key_base != base) {
        pe = sinusoidal_table(t, c, offset, base);
        key_offset = offset;
        key_base = base;
    }
    for (std::size_t b = 0; b < batch; ++b) {
        float* xb = x.data() + b * t * c;
        for (std::size_t i = 0; i < t * c; ++i) xb[i] += pe.data()[i];
    }
}

}  // namespace attnlab
