// The Swin block (model/vision/swin_block.hpp): its shifted-window mask against an explicit
// construction, the block against dense attention over all patches with the equivalent mask and
// bias, and the block's finite differences.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "attnlab/model/vision/swin_block.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

// The blocks' config below: width 8, 2 heads, windows of 4 x 4 patches on an 8 x 8 patch grid.
ModelConfig swin_config() {
    ModelConfig c;
    c.kind = ModelKind::encoder;
    c.architecture = Architecture::swin;
    c.image_size = 8;
    c.patch_size = 1;
    c.swin_window = 4;
    c.d_model = 8;
    c.num_heads = 2;
    c.ff_dim = 16;
    c.num_layers = 2;
    c.num_classes = 3;
    return c;
}

// Map coordinate y of a G-row map rolled by -shift: its row in the rolled map.
std::size_t rolled(std::size_t y, std::size_t shift, std::size_t grid) { return (y + grid - shift) % grid; }

// Two patches of one window of the rolled map are neighbours in the image only if the roll did
// not separate them: their offset in the map equals their offset in the rolled map, on both axes.
bool rolled_apart(std::size_t yi, std::size_t xi, std::size_t yj, std::size_t xj, std::size_t shift, std::size_t grid) {
    const auto off = [](std::size_t a, std::size_t b) { return static_cast<long>(a) - static_cast<long>(b); };
    return off(yi, yj) != off(rolled(yi, shift, grid), rolled(yj, shift, grid)) ||
           off(xi, xj) != off(rolled(xi, shift, grid), rolled(xj, shift, grid));
}

TEST(SwinMask, ShiftedWindowMaskEqualsAnExplicitConstruction) {
    for (std::size_t grid : {4, 8, 12}) {
        const std::size_t window = 4, shift = 2, per_side = grid / window;
        const Mask3 mask = shifted_window_mask(grid, window, shift);
        ASSERT_EQ(mask.shape(0), per_side * per_side);
        std::size_t hidden = 0;
        for (std::size_t w = 0; w < per_side * per_side; ++w)
            for (std::size_t i = 0; i < window * window; ++i)
                for (std::size_t j = 0; j < window * window; ++j) {
                    // rolled coordinates of the two patches, then the map coordinates they came from
                    const std::size_t ryi = (w / per_side) * window + i / window, rxi = (w % per_side) * window + i % window;
                    const std::size_t ryj = (w / per_side) * window + j / window, rxj = (w % per_side) * window + j % window;
                    const bool apart = rolled_apart((ryi + shift) % grid, (rxi + shift) % grid, (ryj + shift) % grid,
                                                    (rxj + shift) % grid, shift, grid);
                    EXPECT_EQ(mask(w, i, j) != 0, apart) << "grid " << grid << " window " << w << " (" << i << ", " << j << ")";
                    hidden += apart;
                }
        EXPECT_GT(hidden, 0u);
    }
    const Mask3 unshifted = shifted_window_mask(8, 4, 0);
    for (auto m : unshifted) EXPECT_EQ(m, 0);
}

TEST(SwinMask, RelativePositionIndexCoversTheTableSymmetrically) {
    const Index2 index = relative_position_index(3);
    std::set<std::int32_t> seen(index.begin(), index.end());
    EXPECT_EQ(seen.size(), 25u);  // (2M - 1)²
    for (std::size_t i = 0; i < 9; ++i) {
        EXPECT_EQ(index(i, i), 12);  // offset (0, 0): the centre of the table
        for (std::size_t j = 0; j < 9; ++j) EXPECT_EQ(index(i, j) + index(j, i), 24);
    }
}

// The dense equivalent of a Swin block: the same TransformerBlock over all G² patches, where
// patch p sees patch q only if both fall in one window of the rolled map and the roll did not
// separate them, with bias table[(dy + M-1)(2M-1) + dx + M-1][h] for their offset (dy, dx).
TEST(SwinBlock, EqualsDenseAttentionWithTheEquivalentMaskAndBias) {
    const ModelConfig config = swin_config();
    for (std::size_t shift : {0, 2}) {
        Rng rng(11 + shift);
        SwinBlock blk(config, /*grid=*/8, /*window=*/4, shift, rng);
        const std::size_t grid = 8, m = 4, n = grid * grid, heads = 2;
        const Tensor3 x = random_normal<Tensor3>({2, n, 8}, 12);
        Tensor3 y;
        blk.forward(x, {}, nullptr, nullptr, y);

        AttentionOptions dense;
        dense.mask.explicit_mask = Mask2::from_shape({n, n});
        Tensor4 bias = Tensor4::from_shape({1, heads, n, n});
        bias.fill(0.0f);
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t q = 0; q < n; ++q) {
                const std::size_t ryp = rolled(p / grid, shift, grid), rxp = rolled(p % grid, shift, grid);
                const std::size_t ryq = rolled(q / grid, shift, grid), rxq = rolled(q % grid, shift, grid);
                const bool same_window = ryp / m == ryq / m && rxp / m == rxq / m;
                const bool sees = same_window && !rolled_apart(p / grid, p % grid, q / grid, q % grid, shift, grid);
                dense.mask.explicit_mask(p, q) = sees ? 0 : 1;
                const std::size_t row = (ryp % m + m - 1 - ryq % m) * (2 * m - 1) + (rxp % m + m - 1 - rxq % m);
                for (std::size_t h = 0; h < heads; ++h) bias(0, h, p, q) = sees ? blk.rel_pos_table(row, h) : 0.0f;
            }
        dense.mask.score_bias = &bias;
        const Tensor3 want = blk.block.forward(x, dense);
        ASSERT_EQ(want.shape(), y.shape());
        for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y.data()[i], want.data()[i], 2e-5f) << "shift " << shift << " at " << i;
    }
}

TEST(SwinBlock, BackwardMatchesFiniteDifferences) {
    ModelConfig config = swin_config();
    Rng rng(21);
    SwinBlock blk(config, /*grid=*/4, /*window=*/2, /*shift=*/1, rng);
    for (auto& v : blk.rel_pos_table) v *= 20.0f;  // a bias large enough to matter
    Tensor3 x = random_normal<Tensor3>({2, 16, 8}, 22);
    const Tensor3 w = random_normal<Tensor3>({2, 16, 8}, 23);
    SwinBlockCache cache;
    Tensor3 y, dx;
    blk.forward(x, {}, nullptr, &cache, y);
    SwinBlockGrad grads;
    grads.block = TransformerBlockGrad(blk.block);
    grads.rel_pos_table = Tensor2::from_shape(blk.rel_pos_table.shape());
    grads.rel_pos_table.fill(0.0f);
    blk.backward(w, cache, {}, grads, dx);
    auto loss = [&] {
        Tensor3 out;
        blk.forward(x, {}, nullptr, nullptr, out);
        return testutil::dot(out, w);
    };
    EXPECT_TRUE(testutil::check_gradient("swin dx", loss, x.data(), dx.data(), x.size()));
    EXPECT_TRUE(testutil::check_gradient("rel_pos_table", loss, blk.rel_pos_table.data(), grads.rel_pos_table.data(),
                                         blk.rel_pos_table.size()));
    EXPECT_TRUE(testutil::check_gradient("attn.q_proj.weight", loss, blk.block.attn.q_proj.weight.data(),
                                         grads.block.attn.q_proj.weight.data(), blk.block.attn.q_proj.weight.size()));
}

}  // namespace
}  // namespace attnlab
