// The normalisers (attention/normalizer.hpp): n_i, and the row and column loops the
// recorded path (scaled_dot_product.cpp) and the tiled path (src/attention/flash/) share.
#include "attnlab/attention/normalizer.hpp"

#include <algorithm>

#include "attnlab/attention/mask.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/kernels/elementwise.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "visible_counts.hpp"

namespace attnlab {

void visible_key_counts(const AttentionMask& mask, std::size_t batch, std::size_t t, std::size_t s, float* counts) {
    if (mask.at_most_causal()) {  // n_i then has a closed form
        // Causal: query i sees keys j <= i + S - T (bottom-right aligned, mask.hpp).
        const std::ptrdiff_t shift = static_cast<std::ptrdiff_t>(s) - static_cast<std::ptrdiff_t>(t);
        for (std::size_t i = 0; i < t; ++i) {
            const std::ptrdiff_t seen =
                mask.causal ? std::clamp<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(i) + shift + 1, 0,
                                                         static_cast<std::ptrdiff_t>(s))
                            : static_cast<std::ptrdiff_t>(s);
            for (std::size_t b = 0; b < batch; ++b) counts[b * t + i] = static_cast<float>(seen);
        }
        return;
    }
    // Batch rows differ only by their key padding; without it, count once and copy.
    const std::size_t distinct = mask.key_padding.size() > 0 ? batch : std::min<std::size_t>(batch, 1);
    for (std::size_t b = 0; b < distinct; ++b) {
        for (std::size_t i = 0; i < t; ++i) {
            std::size_t seen = 0;
            for (std::size_t j = 0; j < s; ++j) seen += mask.is_masked(b, i, j, t, s) ? 0 : 1;
            counts[b * t + i] = static_cast<float>(seen);
        }
    }
    for (std::size_t b = distinct; b < batch; ++b) {
        for (std::size_t i = 0; i < t; ++i) counts[b * t + i] = counts[i];
    }
}

Tensor2 visible_key_counts(const AttentionMask& mask, std::size_t batch, std::size_t t, std::size_t s) {
    Tensor2 counts = Tensor2::from_shape({batch, t});
    visible_key_counts(mask, batch, t, s, counts.data());
    return counts;
}

void normalize_rows(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                    const float* visible) {
    if (normalizer == Normalizer::softmax) {
        kernels::softmax_rows(x, rows, cols, ld);
        return;
    }
    kernels::pointwise_weight_rows(normalizer, x, rows, cols, ld, visible);
}

void normalize_columns(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                       const float* visible) {
    if (normalizer == Normalizer::softmax) {
        fail<ConfigError>("normalize_columns: softmax needs the online softmax of the tiled path, not a "
                          "pointwise pass");
    }
    kernels::pointwise_weight_columns(normalizer, x, rows, cols, ld, visible);
}

void normalize_rows_backward(Normalizer normalizer, const float* w, float* dw, std::size_t rows, std::size_t cols,
                             std::size_t ld, const float* visible) {
    switch (normalizer) {
        case Normalizer::softmax: kernels::softmax_rows_backward(w, dw, dw, rows, cols, ld); return;
        case Normalizer::sigmoid:
            // w = σ(s − ln n)  =>  dw/ds = w·(1 − w)
            for (std::size_t r = 0; r < rows; ++r) {
                const float* wr = w + r * ld;
                float* dr = dw + r * ld;
                for (std::size_t c = 0; c < cols; ++c) dr[c] *= wr[c] * (1.0f - wr[c]);
            }
            return;
        case Normalizer::relu:
            // w = max(s, 0) / n  =>  dw/ds = 1/n where s > 0 (where w > 0), else 0
            for (std::size_t r = 0; r < rows; ++r) {
                const float* wr = w + r * ld;
                float* dr = dw + r * ld;
                const float slope = visible[r] > 0.0f ? 1.0f / visible[r] : 0.0f;
                // dr = dr ⊙ [w > 0] by the SIMD relu kernel (a scalar loop compiles to a branch
                // that the unpredictable sign of s mispredicts), then times 1/n.
                kernels::relu_backward(wr, dr, dr, cols);
                for (std::size_t c = 0; c < cols; ++c) dr[c] *= slope;
            }
            return;
    }
}

}  // namespace attnlab
