#include "attnlab/attention/mask.hpp"

#include <limits>

namespace attnlab {

void AttentionMask::validate(std::size_t batch, std::size_t t, std::size_t s, const char* where,
                             std::size_t heads) const {
    for (const Tensor4* bias : {static_cast<const Tensor4*>(score_bias), static_cast<const Tensor4*>(score_bias_grad)}) {
        if (!bias) continue;
        const char* what = bias == score_bias ? "score_bias" : "score_bias_grad";
        const auto& sh = bias->shape();
        if (sh[0] == 0 || batch % sh[0] != 0 || (heads > 0 && sh[1] != heads) || sh[2] != t || sh[3] != s) {
            fail<ShapeError>(where, ": ", what, " must be (G, H=", heads, ", T=", t, ", S=", s,
                             ") with G dividing the batch B=", batch, ", got ", shape_string(sh));
        }
    }
    if (score_bias_grad && !score_bias) fail<ShapeError>(where, ": score_bias_grad is set without a score_bias");
    if (score_bias_grad && score_bias_grad->shape() != score_bias->shape()) {
        fail<ShapeError>(where, ": score_bias_grad must have score_bias's shape ", shape_string(score_bias->shape()),
                         ", got ", shape_string(score_bias_grad->shape()));
    }
    if (key_padding.size() > 0) {
        if (key_padding.shape(0) != batch || key_padding.shape(1) != s) {
            fail<ShapeError>(where, ": key_padding mask must be (B=", batch, ", S=", s, "), got ",
                             shape_string(key_padding.shape()));
        }
    }
    if (explicit_mask.size() > 0) {
        if (explicit_mask.shape(0) != t || explicit_mask.shape(1) != s) {
            fail<ShapeError>(where, ": explicit mask must be (T=", t, ", S=", s, "), got ",
                             shape_string(explicit_mask.shape()));
        }
    }
    if (block_layout.size() > 0) {
        if (block_size == 0) fail<ConfigError>(where, ": a block layout needs a block size > 0, got 0");
        const std::size_t rows = (block_row_offset + t + block_size - 1) / block_size;
        const std::size_t cols = (s + block_size - 1) / block_size;
        if (block_layout.shape(0) < rows || block_layout.shape(1) != cols) {
            fail<ShapeError>(where, ": block layout must be (at least ", rows, ", ", cols, ") for T=", t, ", S=", s,
                             ", b=", block_size, ", row offset ", block_row_offset, ", got ",
                             shape_string(block_layout.shape()));
        }
    }
}

bool AttentionMask::outside_window(std::size_t i, std::size_t j, std::size_t t, std::size_t s) const {
    if (window == 0) return false;
    const std::ptrdiff_t pos_i = static_cast<std::ptrdiff_t>(i) + static_cast<std::ptrdiff_t>(s) - static_cast<std::ptrdiff_t>(t);
    const std::ptrdiff_t pos_j = static_cast<std::ptrdiff_t>(j);
    const auto g = static_cast<std::ptrdiff_t>(global_tokens);
    if (pos_i < g || pos_j < g) return false;
    const std::ptrdiff_t distance = pos_i > pos_j ? pos_i - pos_j : pos_j - pos_i;
    return distance > static_cast<std::ptrdiff_t>(window);
}

bool AttentionMask::is_masked(std::size_t b, std::size_t i, std::size_t j, std::size_t t, std::size_t s) const {
    if (causal && static_cast<std::ptrdiff_t>(j) > static_cast<std::ptrdiff_t>(i) + static_cast<std::ptrdiff_t>(s) -
                                                       static_cast<std::ptrdiff_t>(t)) {
        return true;
    }
    if (outside_window(i, j, t, s)) return true;
    if (outside_layout(i, j)) return true;
    if (key_padding.size() > 0 && key_padding(b, j)) return true;
    if (explicit_mask.size() > 0 && explicit_mask(i, j)) return true;
    return false;
}

void AttentionMask::apply(float* scores, std::size_t b, std::size_t t, std::size_t s, std::size_t ld) const {
    constexpr float kMasked = -std::numeric_limits<float>::infinity();
    const std::ptrdiff_t shift = static_cast<std::ptrdiff_t>(s) - static_cast<std::ptrdiff_t>(t);
    const std::uint8_t* pad = key_padding.size() > 0 ? key_padding.data() + b * s : nullptr;
    for (std::size_t i = 0; i < t; ++i) {
        float* row = scores + i * ld;
        if (causal) {
            // Keys j > i + shift are in the future of query i.
            const std::ptrdiff_t first_hidden = static_cast<std::ptrdiff_t>(i) + shift + 1;
            for (std::ptrdiff_t j = first_hidden < 0 ? 0 : first_hidden; j < static_cast<std::ptrdiff_t>(s); ++j) {
                row[j] = kMasked;
            }
        }
        if (window > 0) {
            for (std::size_t j = 0; j < s; ++j) {
                if (outside_window(i, j, t, s)) row[j] = kMasked;
            }
        }
        if (block_layout.size() > 0) {
            for (std::size_t j = 0; j < s; ++j) {
                if (outside_layout(i, j)) row[j] = kMasked;
            }
        }
        if (pad) {
            for (std::size_t j = 0; j < s; ++j) {
                if (pad[j]) row[j] = kMasked;
            }
        }
        if (explicit_mask.size() > 0) {
            const std::uint8_t* em = explicit_mask.data() + i * s;
            for (std::size_t j = 0; j < s; ++j) {
                if (em[j]) row[j] = kMasked;
            }
        }
    }
}

void AttentionMask::add_score_bias(float* scores, std::size_t b, std::size_t h, std::size_t i0, std::size_t rows,
                                   std::size_t j0, std::size_t cols, std::size_t ld, float multiplier) const {
    if (!score_bias) return;
    const std::size_t g = b % score_bias->shape(0), heads = score_bias->shape(1);
    const std::size_t t = score_bias->shape(2), s = score_bias->shape(3);
    const float* bias = score_bias->data() + ((g * heads + h) * t + i0) * s + j0;  // (rows, cols) with s
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) scores[r * ld + c] += multiplier * bias[r * s + c];
    }
}

void AttentionMask::accumulate_score_bias_grad(const float* dscores, std::size_t batch) const {
    if (!score_bias_grad) return;
    const std::size_t groups = score_bias_grad->shape(0);
    const std::size_t per_row = score_bias_grad->size() / groups;  // H·T·S
    for (std::size_t b = 0; b < batch; ++b) {
        float* out = score_bias_grad->data() + (b % groups) * per_row;
        const float* in = dscores + b * per_row;
        for (std::size_t i = 0; i < per_row; ++i) out[i] += in[i];
    }
}

Mask2 padding_mask_from_lengths(const std::vector<std::size_t>& lengths, std::size_t max_len) {
    Mask2 mask = Mask2::from_shape({lengths.size(), max_len});
    for (std::size_t b = 0; b < lengths.size(); ++b) {
        if (lengths[b] > max_len) {
            fail<ValueError>("padding_mask_from_lengths: length ", lengths[b], " of batch row ", b,
                             " exceeds max_len ", max_len);
        }
        for (std::size_t j = 0; j < max_len; ++j) mask(b, j) = j >= lengths[b] ? 1 : 0;
    }
    return mask;
}

}  // namespace attnlab
