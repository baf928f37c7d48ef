#include "attnlab/posenc/learned.hpp"

namespace attnlab {

LearnedPositionalEmbedding::LearnedPositionalEmbedding(std::size_t max_len, std::size_t width, Rng& rng) {
    if (max_len == 0 || width == 0) {
        fail<ConfigError>("LearnedPositionalEmbedding: max_len and width must be positive, got ", max_len, " and ",
                          width);
    }
    require_allocatable({max_len, width}, "LearnedPositionalEmbedding", "the table");
    table = Tensor2::from_shape({max_len, width});
    for (auto& w : table) w = 0.02f * rng.normal();
}

void LearnedPositionalEmbedding::check_range(std::size_t t, std::size_t offset, const char* where) const {
    if (offset + t > max_len()) {
        fail<ValueError>(where, ": positions up to ", offset + t - 1, " requested but the learned table holds only ",
                         max_len(), " positions (0..", max_len() - 1, "); learned encodings cannot extrapolate");
    }
}

void LearnedPositionalEmbedding::add_to(Tensor3& x, std::size_t offset) const {
    const std::size_t batch = x.shape(0), t = x.shape(1), c = x.shape(2);
    if (c != width()) {
        fail<ShapeError>("LearnedPositionalEmbedding::add_to: x must be (B, T, ", width(), "), got ",
                         shape_string(x.shape()));
    }
    check_range(t, offset, "LearnedPositionalEmbedding::add_to");
    const float* rows = table.data() + offset * c;
    for (std::size_t b = 0; b < batch; ++b) {
        float* xb = x.data() + b * t * c;
        for (std::size_t i = 0; i < t * c; ++i) xb[i] += rows[i];
    }
}

}  // namespace attnlab
