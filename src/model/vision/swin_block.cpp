// The Swin block (model/vision/swin_block.hpp): the shift mask, the relative position index, and
// the block on windows of the rolled patch map.
#include "attnlab/model/vision/swin_block.hpp"

#include <algorithm>
#include <limits>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// rows (per image) of `from` (B, R, C) gathered into `to` (B, rows.size(), C): to[b][r] = from[b][rows[r]].
void gather_rows(const Tensor3& from, const std::vector<std::size_t>& rows, Tensor3& to) {
    const std::size_t batch = from.shape(0), n = from.shape(1), c = from.shape(2), m = rows.size();
    shape_to(to, {batch, m, c});
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t r = 0; r < m; ++r) {
            const float* src = from.data() + (b * n + rows[r]) * c;
            std::copy(src, src + c, to.data() + (b * m + r) * c);
        }
    }
}
// The inverse: to[b][rows[r]] = from[b][r] (rows is a permutation of 0..n-1). to: (B, n, C)
void scatter_rows(const Tensor3& from, const std::vector<std::size_t>& rows, std::size_t n, Tensor3& to) {
    const std::size_t batch = from.shape(0), m = from.shape(1), c = from.shape(2);
    shape_to(to, {batch, n, c});
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t r = 0; r < m; ++r) {
            const float* src = from.data() + (b * m + r) * c;
            std::copy(src, src + c, to.data() + (b * n + rows[r]) * c);
        }
    }
}

// The windows' batch: (B, nW·M², C) viewed as (B·nW, M², C) (same memory order).
void as_windows(Tensor3& t, std::size_t windows, std::size_t m2) {
    const std::size_t batch = t.shape(0), c = t.shape(2);
    t.reshape({batch * windows, m2, c});
}
void as_images(Tensor3& t, std::size_t windows) {
    const std::size_t bw = t.shape(0), m2 = t.shape(1), c = t.shape(2);
    t.reshape({bw / windows, windows * m2, c});
}

}  // namespace

Mask3 shifted_window_mask(std::size_t grid, std::size_t window, std::size_t shift) {
    if (window == 0 || grid % window != 0 || shift >= window) {
        fail<ConfigError>("shifted_window_mask: the window (", window, ") must divide the grid (", grid,
                          ") and the shift (", shift, ") be smaller than the window");
    }
    const std::size_t per_side = grid / window, m2 = window * window;
    // The region of a rolled coordinate along one axis (see the header).
    const auto region = [&](std::size_t r) -> int {
        if (shift == 0) return 0;
        return r < grid - window ? 0 : (r < grid - shift ? 1 : 2);
    };
    Mask3 mask = Mask3::from_shape({per_side * per_side, m2, m2});
    for (std::size_t w = 0; w < per_side * per_side; ++w) {
        const std::size_t wy = w / per_side, wx = w % per_side;
        for (std::size_t i = 0; i < m2; ++i) {
            const std::size_t yi = wy * window + i / window, xi = wx * window + i % window;
            for (std::size_t j = 0; j < m2; ++j) {
                const std::size_t yj = wy * window + j / window, xj = wx * window + j % window;
                const bool same = region(yi) == region(yj) && region(xi) == region(xj);
                mask(w, i, j) = same ? 0 : 1;
            }
        }
    }
    return mask;
}

Index2 relative_position_index(std::size_t window) {
    const std::size_t m2 = window * window, span = 2 * window - 1;
    Index2 index = Index2::from_shape({m2, m2});
    for (std::size_t i = 0; i < m2; ++i) {
        for (std::size_t j = 0; j < m2; ++j) {
            const std::size_t dy = i / window + window - 1 - j / window;  // yi - yj + M - 1
            const std::size_t dx = i % window + window - 1 - j % window;  // xi - xj + M - 1
            index(i, j) = static_cast<std::int32_t>(dy * span + dx);
        }
    }
    return index;
}

SwinBlock::SwinBlock(const ModelConfig& stage_config, std::size_t grid_, std::size_t window_, std::size_t shift_,
                     Rng& rng)
    : block(stage_config, rng), grid(grid_), window(window_), shift(shift_) {
    const std::size_t span = 2 * window - 1;
    rel_pos_table = Tensor2::from_shape({span * span, stage_config.num_heads});
    for (auto& v : rel_pos_table) v = 0.02f * rng.normal();
}

void SwinBlock::score_bias(Tensor4& bias) const {
    const std::size_t nw = windows(), heads = rel_pos_table.shape(1), m2 = window * window;
    if (bias.dimension() != 4 || bias.shape(0) != nw || bias.shape(1) != heads || bias.shape(2) != m2) {
        bias = Tensor4::from_shape({nw, heads, m2, m2});
    }
    const Index2 index = relative_position_index(window);
    const Mask3 mask = shifted_window_mask(grid, window, shift);
    for (std::size_t w = 0; w < nw; ++w)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t i = 0; i < m2; ++i)
                for (std::size_t j = 0; j < m2; ++j)
                    bias(w, h, i, j) = mask(w, i, j) ? kNegInf : rel_pos_table(static_cast<std::size_t>(index(i, j)), h);
}

std::vector<std::size_t> SwinBlock::window_rows() const {
    const std::size_t per_side = grid / window, m2 = window * window;
    std::vector<std::size_t> rows(grid * grid);
    for (std::size_t w = 0; w < per_side * per_side; ++w) {
        for (std::size_t i = 0; i < m2; ++i) {
            // Rolled coordinates (the map shifted by -shift), back to the map's.
            const std::size_t ry = (w / per_side) * window + i / window, rx = (w % per_side) * window + i % window;
            rows[w * m2 + i] = ((ry + shift) % grid) * grid + (rx + shift) % grid;
        }
    }
    return rows;
}

void SwinBlock::forward(const Tensor3& x, const AttentionOptions& options, StageObserver* observer,
                        SwinBlockCache* cache, Tensor3& y) const {
    SwinBlockCache local;
    SwinBlockCache& bc = cache ? *cache : local;
    const std::vector<std::size_t> rows = window_rows();
    const std::size_t nw = windows(), m2 = window * window;
    // (B, G·G, C) -> windows (B·nW, M², C) of the map rolled by -shift
    gather_rows(x, rows, bc.windows);
    as_windows(bc.windows, nw, m2);
    score_bias(bc.bias);
    AttentionOptions wo = options;
    wo.mask.score_bias = &bc.bias;
    if (cache) {
        // The attention cache keeps the mask it ran with, and its backward adds the bias's
        // gradient where this points (zeroed before each backward).
        if (bc.dbias.shape() != bc.bias.shape()) bc.dbias = Tensor4::from_shape(bc.bias.shape());
        wo.mask.score_bias_grad = &bc.dbias;
    }
    block.forward(bc.windows, wo, observer, cache ? &bc.block : nullptr, nullptr, bc.out);
    // windows -> the map, rolled back
    as_images(bc.out, nw);
    scatter_rows(bc.out, rows, grid * grid, y);
    as_windows(bc.out, nw, m2);
}

void SwinBlock::backward(const Tensor3& dy, SwinBlockCache& bc, const AttentionOptions& options, SwinBlockGrad& grads,
                         Tensor3& dx) const {
    const std::vector<std::size_t> rows = window_rows();
    const std::size_t nw = windows(), m2 = window * window;
    gather_rows(dy, rows, bc.dwindows);
    as_windows(bc.dwindows, nw, m2);
    bc.dbias.fill(0.0f);
    AttentionOptions wo = options;
    wo.mask.score_bias = &bc.bias;
    wo.mask.score_bias_grad = &bc.dbias;
    block.backward(bc.dwindows, bc.block, wo, grads.block, bc.dx);
    // bias[w][h][i][j] = table[index(i, j)][h] (or -inf, a constant)  =>  dtable += Σ_w dbias
    const Index2 index = relative_position_index(window);
    const std::size_t heads = bc.bias.shape(1);
    for (std::size_t w = 0; w < nw; ++w)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t p = 0; p < m2; ++p)
                for (std::size_t q = 0; q < m2; ++q)
                    grads.rel_pos_table(static_cast<std::size_t>(index(p, q)), h) += bc.dbias(w, h, p, q);
    as_images(bc.dx, nw);
    scatter_rows(bc.dx, rows, grid * grid, dx);
}

}  // namespace attnlab
