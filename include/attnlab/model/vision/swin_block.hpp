// attnlab/model/vision/swin_block.hpp: the layers of a Swin Transformer (Liu et al. 2021) — a
// Transformer block on (shifted) windows with a learned relative position bias, and the patch
// merging between stages.
//
// What it is for: the swin architecture of ImageClassifier (image_classifier.hpp, article §7.1).
// A SwinBlock is a TransformerBlock run on windows (Liu et al. 2021): the (B, G·G, C) patch map
// is cut into nW = (G/M)² windows of M x M patches, after a cyclic shift by M/2 on odd blocks,
// and the block runs on (B·nW, M², C) — a batch of short sequences on the tiled attention path
// (one key tile per window). Its LayerNorms and feed-forward act per patch, so only attention
// sees the windows. Attention inside a window adds an additive score bias (AttentionMask::
// score_bias, (nW, H, M², M²), batch row b·nW + w using bias[w]): the learned relative position
// bias, table[(dy + M-1)·(2M-1) + (dx + M-1)][h] for the offset (dy, dx) between two patches of
// a window, plus -inf between patches that the shift brought together from opposite edges of
// the map (shifted_window_mask). The backward sums the bias's gradient over images and
// scatters it into the table.
// A PatchMerging concatenates each 2x2 group [x(2i,2j), x(2i+1,2j), x(2i,2j+1), x(2i+1,2j+1)]
// into 4C channels, normalises them (LayerNorm 4C) and projects them to 2C (Linear, no bias).
// Not for: token sequences (a window is a square of patches), dropout on windows.
//
//   attnlab::ModelConfig stage; stage.d_model = 16; stage.num_heads = 2; stage.ff_dim = 32;
//   attnlab::Rng rng(1);
//   attnlab::SwinBlock block(stage, /*grid=*/8, /*window=*/4, /*shift=*/2, rng);
//   attnlab::Tensor3 y;
//   block.forward(x, {}, nullptr, nullptr, y);   // x: (B, 64, 16) -> y (B, 64, 16)
#pragma once

#include <cstddef>
#include <vector>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/transformer_block.hpp"
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/linear.hpp"

namespace attnlab {

// The mask of a shifted window layer: (nW, M², M²), 1 where patch i of window w may not see
// patch j. The map is G x G patches rolled by -shift on both axes before the windows are cut;
// along each axis the rolled coordinates [0, G - M), [G - M, G - shift), [G - shift, G) are three
// regions (the last holds patches rolled in from the opposite edge), and two patches of one
// window see each other only if they share their region on both axes. shift = 0: no masking.
Mask3 shifted_window_mask(std::size_t grid, std::size_t window, std::size_t shift);

// The relative position index of an M x M window: (M², M²), entry (i, j) =
// (yi - yj + M - 1)·(2M - 1) + (xi - xj + M - 1), the row of the bias table the pair reads.
Index2 relative_position_index(std::size_t window);

struct SwinBlockGrad;
struct SwinBlockCache;

// One Swin block: a TransformerBlock on (shifted) windows with a relative position bias.
struct SwinBlock {
    TransformerBlock block;  // width C_k, H_k heads
    Tensor2 rel_pos_table;   // ((2M-1)², H_k) learned relative position bias, N(0, 0.02²)
    std::size_t grid = 0, window = 0, shift = 0;  // G, M, shift (0 or M/2)

    SwinBlock() = default;
    SwinBlock(const ModelConfig& stage_config, std::size_t grid, std::size_t window, std::size_t shift, Rng& rng);
    std::size_t windows() const { return (grid / window) * (grid / window); }  // nW
    // (nW, H, M², M²): table gathered by relative_position_index, -inf where the shift mask hides.
    void score_bias(Tensor4& bias) const;
    // The permutation from window order to the map: row r = (b·nW + w)·M² + i of the windowed
    // (B·nW, M², C) tensor holds row map_row[w·M² + i] of each image's (G·G) patch map. (M²·nW = G².)
    std::vector<std::size_t> window_rows() const;

    // x: (B, G·G, C) patch map -> y (B, G·G, C) (resized; not x): the block on the windows of the
    // map rolled by -shift, rolled back. options: the scale (its mask gets the score bias);
    // observer sees the attention stages with batch row b·nW + w. cache (optional) is filled for
    // backward.
    void forward(const Tensor3& x, const AttentionOptions& options, StageObserver* observer, SwinBlockCache* cache,
                 Tensor3& y) const;
    // dy: (B, G·G, C) -> dx (B, G·G, C) (resized, overwritten; not dy); grads += ..., the bias
    // table's gradient the sum over windows and images of the score bias's. options as in forward.
    void backward(const Tensor3& dy, SwinBlockCache& cache, const AttentionOptions& options, SwinBlockGrad& grads,
                  Tensor3& dx) const;
};

struct SwinBlockGrad {
    TransformerBlockGrad block;
    Tensor2 rel_pos_table;  // ((2M-1)², H)
};

// Per block: what backward needs, and buffers.
struct SwinBlockCache {
    Tensor3 windows;             // (B·nW, M², C) the block's input, windowed
    Tensor3 out;                 // (B·nW, M², C) its output
    Tensor4 bias;                // (nW, H, M², M²) the score bias the forward used
    Tensor4 dbias;               // (nW, H, M², M²) its gradient (backward)
    TransformerBlockCache block;
    Tensor3 dwindows, dx;        // backward buffers
};

struct PatchMerging {
    LayerNorm norm;    // (4C)
    Linear reduction;  // (2C, 4C), no bias
};
struct PatchMergingGrad {
    LayerNormGrad norm;
    LinearGrad reduction;
};
struct PatchMergingCache {
    LayerNormCache norm;
    Tensor3 gathered, normed;  // (B, G²/4, 4C)
    Tensor3 dnormed, dgathered;
};

}  // namespace attnlab
