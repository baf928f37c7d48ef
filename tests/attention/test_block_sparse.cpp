// Block-sparse attention (attention/block_sparse.hpp; BigBird, article §5.3): the layout's rules
// (window, global blocks both ways, random blocks: count, seed, causal candidates, running out);
// the output is dense attention under the layout expanded to an explicit (T, S) mask, on the
// recorded path (bit for bit) and the tiled path (1e-5), forward and backward, for block sizes
// that do and do not divide the tiles; central finite differences through MultiHeadAttention
// with causal, padding and GQA; fully masked rows give zeros; refused combinations; models train
// with it, record it in their checkpoints and generate the same tokens with and without a KV cache.
#include "attnlab/attention/block_sparse.hpp"

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/core/flop_counter.hpp"
#include "attnlab/kernels/flash_tiles.hpp"
#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"
#include "support/attention_paths.hpp"
#include "support/fixtures.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

BlockSparseOptions options_of(std::size_t b, std::size_t w, std::size_t g, std::size_t r, std::size_t seed = 0) {
    BlockSparseOptions o;
    o.block_size = b;
    o.window_blocks = w;
    o.global_blocks = g;
    o.random_blocks = r;
    o.seed = seed;
    return o;
}

std::string row_string(const Mask2& layout, std::size_t i) {
    std::string s;
    for (std::size_t j = 0; j < layout.shape(1); ++j) s += layout(i, j) ? '1' : '0';
    return s;
}

std::size_t live_in_row(const Mask2& layout, std::size_t i) {
    std::size_t n = 0;
    for (std::size_t j = 0; j < layout.shape(1); ++j) n += layout(i, j);
    return n;
}

TEST(BlockSparseLayout, ShapeIsBlocksOfQueriesByBlocksOfKeys) {
    const Mask2 layout = sparse_layout(100, 33, options_of(16, 1, 1, 0));
    EXPECT_EQ(layout.shape(0), 7u);  // ⌈100/16⌉
    EXPECT_EQ(layout.shape(1), 3u);  // ⌈33/16⌉
}

TEST(BlockSparseLayout, WindowAloneIsABandOfBlocks) {
    const Mask2 layout = sparse_layout(64, 64, options_of(8, 1, 0, 0));  // (8, 8)
    for (std::size_t i = 0; i < 8; ++i)
        for (std::size_t j = 0; j < 8; ++j) EXPECT_EQ(layout(i, j), (i > j ? i - j : j - i) <= 1) << i << "," << j;
    const Mask2 wide = sparse_layout(64, 64, options_of(8, 2, 0, 0));
    EXPECT_EQ(row_string(wide, 4), "00111110");
    EXPECT_EQ(row_string(sparse_layout(64, 64, options_of(8, 0, 0, 0)), 3), "00010000");
}

TEST(BlockSparseLayout, GlobalBlocksSeeAndAreSeenByEveryBlock) {
    const Mask2 layout = sparse_layout(80, 80, options_of(8, 0, 2, 0));  // (10, 10)
    for (std::size_t i = 0; i < 10; ++i) {
        for (std::size_t j = 0; j < 10; ++j) {
            const bool expected = i < 2 || j < 2 || i == j;
            EXPECT_EQ(layout(i, j), expected) << i << "," << j;
        }
    }
}

TEST(BlockSparseLayout, RandomBlocksAddExactlyRDeadBlocksPerRowAndFollowTheSeed) {
    const BlockSparseOptions base = options_of(4, 1, 1, 0);
    const Mask2 plain = sparse_layout(128, 128, base);  // (32, 32)
    for (std::size_t r : {1, 3}) {
        BlockSparseOptions o = base;
        o.random_blocks = r;
        o.seed = 11;
        const Mask2 a = sparse_layout(128, 128, o);
        EXPECT_TRUE(a == sparse_layout(128, 128, o)) << "the same seed draws the same blocks";
        for (std::size_t i = 1; i < 32; ++i) {
            EXPECT_EQ(live_in_row(a, i), live_in_row(plain, i) + r) << "row " << i << ", r " << r;
            for (std::size_t j = 0; j < 32; ++j) EXPECT_GE(a(i, j), plain(i, j)) << "a live block stays live";
        }
        o.seed = 12;
        EXPECT_FALSE(a == sparse_layout(128, 128, o)) << "another seed draws other blocks";
    }
}

TEST(BlockSparseLayout, CausalDrawsOnlyEarlierBlocksAndIsTheSameForEveryLength) {
    const BlockSparseOptions o = options_of(4, 1, 1, 2, 5);
    const Mask2 whole = sparse_layout(160, 160, o, /*causal=*/true);  // (40, 40)
    for (std::size_t i = 1; i < 40; ++i)  // row 0 is global: it sees every block
        for (std::size_t j = i + 2; j < 40; ++j) EXPECT_EQ(whole(i, j), 0) << "row " << i << " drew later block " << j;
    const Mask2 prefix = sparse_layout(60, 60, o, true);  // (15, 15): the first rows of `whole`
    for (std::size_t i = 0; i < 15; ++i)
        for (std::size_t j = 0; j < 15; ++j) EXPECT_EQ(prefix(i, j), whole(i, j)) << i << "," << j;
}

TEST(BlockSparseLayout, WithFewerThanRDeadBlocksAllOfThemBecomeLive) {
    const Mask2 layout = sparse_layout(24, 24, options_of(4, 1, 0, 10));  // (6, 6): at most 3 dead per row
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(live_in_row(layout, i), 6u) << row_string(layout, i);
    const Mask2 causal = sparse_layout(24, 24, options_of(4, 0, 0, 10), true);
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(live_in_row(causal, i), i + 1) << row_string(causal, i);
}

// The same matrix tests/wasm/block_sparse.test.mjs pins for the WebAssembly build: native and
// WebAssembly draw the same blocks.
TEST(BlockSparseLayout, PinnedLayoutForSeven) {
    const std::vector<std::string> expected = {"1111111111", "1110001100", "1111001001", "1111100001", "1101110010",
                                               "1110111000", "1001111100", "1010001111", "1110000111", "1001010011"};
    const Mask2 layout = sparse_layout(150, 150, options_of(16, 1, 1, 2, 7));
    ASSERT_EQ(layout.shape(0), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(row_string(layout, i), expected[i]) << "row " << i;
}

TEST(BlockSparseLayout, ExpandedMaskHidesExactlyTheDeadBlocks) {
    const Mask2 layout = sparse_layout(10, 7, options_of(3, 0, 0, 0));  // (4, 3)
    const Mask2 mask = expand_sparse_layout(layout, 3, 10, 7);
    for (std::size_t i = 0; i < 10; ++i)
        for (std::size_t j = 0; j < 7; ++j) EXPECT_EQ(mask(i, j), i / 3 == j / 3 ? 0 : 1) << i << "," << j;
    EXPECT_NEAR(live_block_fraction(layout), 3.0 / 12.0, 1e-12);
    EXPECT_THROW(expand_sparse_layout(layout, 3, 13, 7), ShapeError);
}

TEST(BlockSparseLayout, BlockSizeZeroIsAConfigError) {
    try {
        sparse_layout(8, 8, options_of(0, 1, 1, 0));
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("block size > 0, got 0"), std::string::npos) << e.what();
    }
}

// ---- the output equals dense attention under the expanded mask ------------------------------

struct Inputs {
    Tensor4 q, k, v, dctx;  // (B, H, T, D), (B, Hkv, S, D), (B, Hkv, S, D), (B, H, T, D)
};

Inputs make_inputs(std::size_t t, std::size_t s, std::uint64_t seed) {
    return {test::random_normal<Tensor4>({2, 2, t, 8}, seed), test::random_normal<Tensor4>({2, 1, s, 8}, seed + 1),
            test::random_normal<Tensor4>({2, 1, s, 8}, seed + 2), test::random_normal<Tensor4>({2, 2, t, 8}, seed + 3)};
}

// mask with the layout of o as its block component, and the same mask with the layout expanded
// into the explicit component instead.
struct MaskPair {
    AttentionMask layout, expanded;
};
MaskPair masks_for(std::size_t t, std::size_t s, const BlockSparseOptions& o, bool causal, bool padding) {
    MaskPair m;
    m.layout.causal = m.expanded.causal = causal;
    if (padding) m.layout.key_padding = m.expanded.key_padding = padding_mask_from_lengths({s, s - s / 3}, s);
    m.layout.block_layout = sparse_layout(t, s, o, causal);
    m.layout.block_size = o.block_size;
    m.expanded.explicit_mask = expand_sparse_layout(m.layout.block_layout, o.block_size, t, s);
    return m;
}

bool all_finite(const Tensor4& x) {
    for (float v : x) {
        if (!std::isfinite(v)) return false;
    }
    return true;
}

TEST(BlockSparseAttention, RecordedAndTiledPathsEqualDenseWithTheExpandedMask) {
    struct Case {
        std::size_t t, s, b, w, g, r;
    };
    // b = 16 and 64 divide the tiles, 48 and 100 do not; S = 100 is one key tile, 300 and 520 several.
    const Case cases[] = {{100, 100, 16, 1, 1, 1}, {300, 300, 64, 1, 1, 1}, {300, 300, 48, 0, 1, 2},
                          {520, 520, 100, 1, 0, 1}, {260, 390, 64, 1, 1, 1}, {300, 300, 16, 0, 0, 0}};
    for (const Case& c : cases) {
        for (int variant = 0; variant < 4; ++variant) {
            const bool causal = variant & 1, padding = variant & 2;
            if (causal && c.t != c.s) continue;
            const std::string what = "T=" + std::to_string(c.t) + " S=" + std::to_string(c.s) + " b=" +
                                     std::to_string(c.b) + (causal ? " causal" : "") + (padding ? " padding" : "");
            const Inputs in = make_inputs(c.t, c.s, 40 + c.t);
            const MaskPair m = masks_for(c.t, c.s, options_of(c.b, c.w, c.g, c.r, 3), causal, padding);
            const test::AttentionResults dense = test::math_path(in.q, in.k, in.v, m.expanded, in.dctx);
            const test::AttentionResults recorded = test::math_path(in.q, in.k, in.v, m.layout, in.dctx);
            const test::AttentionResults tiled = test::flash_path(in.q, in.k, in.v, m.layout, in.dctx);
            // The recorded path writes -inf at the same pairs: the same operations, bit for bit.
            EXPECT_TRUE(recorded.context == dense.context) << what;
            EXPECT_TRUE(recorded.dq == dense.dq && recorded.dk == dense.dk && recorded.dv == dense.dv) << what;
            ASSERT_TRUE(all_finite(tiled.context)) << what;
            EXPECT_TRUE(test::all_close(tiled.context, dense.context, 1e-5)) << what;
            EXPECT_TRUE(test::all_close(tiled.dq, dense.dq, 1e-5)) << what;
            EXPECT_TRUE(test::all_close(tiled.dk, dense.dk, 1e-5)) << what;
            EXPECT_TRUE(test::all_close(tiled.dv, dense.dv, 1e-5)) << what;
        }
    }
}

// The tiled path computes the live blocks and nothing of the dead ones: with blocks of whole
// query tiles and key tiles (no tile straddles two blocks, no padding is counted) and head dims
// of whole packed value rows, its counted multiply-adds are the live-block formula. Per live
// block pair: forward s = q·kᵀ and o += p·v, b²·(D + Dv); backward, the dk/dv pass's s,
// dp = dO·vᵀ, dv += pᵀ·dO, dk += dsᵀ·q, b²·(2D + 2Dv), and the dq pass's s, dp, dq += ds·k,
// b²·(2D + Dv); plus T·Dv per head for delta = rowsum(dO ⊙ o). Under the causal mask the blocks
// above the diagonal are hidden whole, and the forward and the dq pass stop each query tile's
// keys after its last row, so a diagonal block counts only keys < i0 + br of each query tile
// (rows i0 .. i0 + br - 1). The dk/dv pass walks key tiles instead: in a diagonal block each key
// tile of bc keys from j0 meets the query tiles from the one holding row j0 (the first row that
// sees it) to the block's end, whole, and skips the tiles before it.
TEST(BlockSparseAttention, TiledWorkIsTheLiveBlocksFormula) {
    const std::size_t b = std::lcm(flash_query_tile(), kFlashKeyTile), d = kernels::flash_padded_value_dim(8);
    const std::size_t heads = 2, t = 5 * b;
    const BlockSparseOptions o = options_of(b, 0, 1, 1, 3);  // row i: key blocks 0, i and one random
    for (const bool causal : {true, false}) {
        const std::string what = "b=" + std::to_string(b) + (causal ? " causal" : "");
        const Tensor4 q = test::random_normal<Tensor4>({1, heads, t, d}, 7);
        const Tensor4 k = test::random_normal<Tensor4>({1, heads, t, d}, 8);
        const Tensor4 v = test::random_normal<Tensor4>({1, heads, t, d}, 9);
        const Tensor4 dctx = test::random_normal<Tensor4>({1, heads, t, d}, 10);
        const MaskPair m = masks_for(t, t, o, causal, false);
        const std::size_t br = flash_query_tile();
        const std::size_t bc = kFlashKeyTile;
        // (query, key) pairs of all blocks, of the live blocks as the forward and the dq pass count
        // them (trimmed), and as the dk/dv pass does (by key tile)
        std::uint64_t all = 0, live = 0, trimmed = 0, by_key_tile = 0;
        for (std::size_t r = 0; r < 5; ++r) {
            for (std::size_t c = 0; c < 5 && (!causal || c <= r); ++c) {
                std::uint64_t rows_keys = 0;  // keys < i0 + br of each query tile when causal
                for (std::size_t i0 = r * b; i0 < (r + 1) * b; i0 += br) {
                    rows_keys += br * (causal ? std::min(b, i0 + br - c * b) : b);
                }
                std::uint64_t tile_pairs = b * b;  // rows from the tile holding the key tile's first key
                if (causal && c == r) {
                    tile_pairs = 0;
                    for (std::size_t j0 = c * b; j0 < (c + 1) * b; j0 += bc) tile_pairs += bc * ((r + 1) * b - j0 / br * br);
                }
                all += b * b;
                if (m.layout.block_layout(r, c)) {
                    live += b * b;
                    trimmed += rows_keys;
                    by_key_tile += tile_pairs;
                }
            }
        }
        ASSERT_LT(live, all) << what << ": the layout must leave dead blocks";
        Tensor4 ctx, dq, dk, dv;
        Tensor3 lse;
        FlopScope forward;
        flash_attention_forward(q, k, v, m.layout, {}, &lse, nullptr, ctx);
        EXPECT_EQ(forward.multiply_adds(), heads * trimmed * (d + d)) << what;
        FlopScope backward;
        flash_attention_backward(dctx, q, k, v, ctx, lse, m.layout, {}, dq, dk, dv);
        EXPECT_EQ(backward.multiply_adds(), heads * (by_key_tile * (2 * d + 2 * d) + trimmed * (2 * d + d) + t * d))
            << what;
        // and the skipped work changes no result
        const test::AttentionResults dense = test::math_path(q, k, v, m.expanded, dctx);
        EXPECT_TRUE(test::all_close(ctx, dense.context, 1e-5)) << what;
        EXPECT_TRUE(test::all_close(dq, dense.dq, 1e-5)) << what;
        EXPECT_TRUE(test::all_close(dk, dense.dk, 1e-5)) << what;
        EXPECT_TRUE(test::all_close(dv, dense.dv, 1e-5)) << what;
    }
}

TEST(BlockSparseAttention, RowsWithNoVisibleKeyAreZeroNotNaN) {
    // w = 0, no globals: each query block sees only its own key block; batch row 1 pads the
    // last 150 keys, so its queries from 150 on (several key tiles) see nothing at all.
    const std::size_t t = 300;
    const Inputs in = make_inputs(t, t, 9);
    AttentionMask mask;
    mask.key_padding = padding_mask_from_lengths({t, 150}, t);
    mask.block_layout = sparse_layout(t, t, options_of(50, 0, 0, 0));
    mask.block_size = 50;
    const test::AttentionResults tiled = test::flash_path(in.q, in.k, in.v, mask, in.dctx);
    const test::AttentionResults recorded = test::math_path(in.q, in.k, in.v, mask, in.dctx);
    for (const Tensor4* x : {&tiled.context, &tiled.dq, &tiled.dk, &recorded.context, &recorded.dq}) {
        ASSERT_TRUE(all_finite(*x));
    }
    for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t i = 150; i < t; ++i)
            for (std::size_t c = 0; c < 8; ++c) {
                EXPECT_EQ(tiled.context(1, h, i, c), 0.0f) << h << " " << i;
                EXPECT_EQ(recorded.context(1, h, i, c), 0.0f) << h << " " << i;
                EXPECT_EQ(tiled.dq(1, h, i, c), 0.0f) << h << " " << i;
            }
    EXPECT_TRUE(test::all_close(tiled.context, recorded.context, 1e-5));
}

// ---- through MultiHeadAttention ---------------------------------------------------------------

MultiHeadAttention make_mha(std::size_t c, std::size_t heads, std::size_t kv_heads, std::uint64_t seed) {
    MultiHeadAttentionConfig config;
    config.d_model = c;
    config.num_heads = heads;
    config.num_kv_heads = kv_heads;
    Rng rng(seed);
    MultiHeadAttention mha(config, rng);
    for (auto& p : mha.parameters()) {  // non-zero biases
        Rng r(p.size() + seed);
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.1f * r.normal();
    }
    return mha;
}

// A TraceRecorder that wants the weights forces the recorded path.
TraceRecorder wants_weights() { return TraceRecorder(std::vector<Stage>{Stage::weights}); }

TEST(BlockSparseAttention, MultiHeadAttentionEqualsFullAttentionWithTheExpandedMask) {
    const std::size_t t = 40;
    for (bool causal : {false, true}) {
        for (std::size_t kv_heads : {4, 2, 1}) {  // MHA, GQA, MQA
            const MultiHeadAttention mha = make_mha(16, 4, kv_heads, 2);
            const Tensor3 x = test::random_normal<Tensor3>({2, t, 16}, 5);
            AttentionOptions sparse;
            sparse.variant = AttentionVariant::block_sparse;
            sparse.block_sparse = options_of(8, 1, 1, 1, 4);
            sparse.mask.causal = causal;
            sparse.mask.key_padding = padding_mask_from_lengths({t, 31}, t);
            AttentionOptions dense = sparse;
            dense.variant = AttentionVariant::full;
            dense.mask.explicit_mask = expand_sparse_layout(sparse_layout(t, t, sparse.block_sparse, causal), 8, t, t);
            const Tensor3 want = mha.forward(x, nullptr, dense);
            EXPECT_TRUE(test::all_close(mha.forward(x, nullptr, sparse), want, 1e-5)) << causal << kv_heads;
            TraceRecorder trace = wants_weights();
            EXPECT_TRUE(test::all_close(mha.forward(x, nullptr, sparse, &trace), want, 1e-5)) << causal << kv_heads;
        }
    }
}

TEST(BlockSparseAttention, CrossAttentionUsesTheQueriesByKeysLayout) {
    MultiHeadAttentionConfig config;
    config.d_model = 8;
    config.num_heads = 2;
    config.kv_dim = 6;
    Rng rng(3);
    const MultiHeadAttention mha(config, rng);
    const Tensor3 x = test::random_normal<Tensor3>({1, 12, 8}, 1);
    const Tensor3 memory = test::random_normal<Tensor3>({1, 20, 6}, 2);
    AttentionOptions sparse;
    sparse.variant = AttentionVariant::block_sparse;
    sparse.block_sparse = options_of(4, 0, 1, 1, 9);
    AttentionOptions dense;
    dense.mask.explicit_mask = expand_sparse_layout(sparse_layout(12, 20, sparse.block_sparse), 4, 12, 20);
    EXPECT_TRUE(test::all_close(mha.forward(x, &memory, sparse), mha.forward(x, &memory, dense), 1e-5));
}

struct GradCase {
    const char* name;
    std::size_t heads, kv_heads;
    bool causal, padding, recorded;
};

TEST(BlockSparseAttention, MatchesFiniteDifferences) {
    const GradCase cases[] = {{"causal_padding", 2, 2, true, true, false},
                              {"gqa", 4, 2, false, true, false},
                              {"causal_recorded", 2, 2, true, false, true},
                              {"mqa_recorded", 4, 1, false, true, true}};
    for (const GradCase& tc : cases) {
        const std::size_t batch = 2, t = 10, c = 8;
        MultiHeadAttention mha = make_mha(c, tc.heads, tc.kv_heads, 7);
        Tensor3 x = test::random_normal<Tensor3>({batch, t, c}, 1);
        const Tensor3 w = test::random_normal<Tensor3>({batch, t, c}, 3);
        AttentionOptions options;
        options.variant = AttentionVariant::block_sparse;
        options.block_sparse = options_of(3, 0, 1, 1, 2);
        options.mask.causal = tc.causal;
        if (tc.padding) options.mask.key_padding = padding_mask_from_lengths({t, t - 3}, t);
        TraceRecorder trace = wants_weights();
        StageObserver* observer = tc.recorded ? &trace : nullptr;

        MultiHeadAttentionCache cache;
        mha.forward(x, nullptr, options, observer, &cache);
        MultiHeadAttentionGrad grads(mha);
        Tensor3 dx;
        mha.backward(w, cache, options, grads, dx);
        auto loss = [&] { return testutil::dot(mha.forward(x, nullptr, options), w); };
        const testutil::GradCheckOptions tol{1e-2, 2e-3, 1e-2};
        EXPECT_TRUE(testutil::check_gradient(std::string(tc.name) + " dx", loss, x.data(), dx.data(), x.size(), tol));
        auto params = mha.parameters();
        auto views = grads.views();
        for (std::size_t i = 0; i < params.size(); ++i) {
            EXPECT_TRUE(testutil::check_gradient(std::string(tc.name) + " d" + params[i].name, loss, params[i].data,
                                                 views[i].data, params[i].size(), tol));
        }
    }
}

TEST(BlockSparseAttention, RefusedCombinationsSayWhy) {
    const MultiHeadAttention mha = make_mha(8, 2, 2, 1);
    const Tensor3 x = test::random_normal<Tensor3>({1, 8, 8}, 1);
    AttentionOptions options;
    options.variant = AttentionVariant::block_sparse;
    options.mask.window = 2;
    try {
        mha.forward(x, nullptr, options);
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("block_sparse attention with a sliding window (window 2)"),
                  std::string::npos)
            << e.what();
    }
    options.mask.window = 0;
    options.block_sparse.block_size = 0;
    EXPECT_THROW(mha.forward(x, nullptr, options), ConfigError);
    KvCache kv;
    EXPECT_THROW(mha.forward_incremental(x, kv, options), ConfigError);
}

// ---- models ---------------------------------------------------------------------------------

ModelConfig sparse_model(ModelKind kind, const Task& task) {
    ModelConfig c;
    c.kind = kind;
    c.vocab_size = task.vocab_size();
    c.num_classes = kind == ModelKind::encoder ? task.num_classes() : 0;
    c.max_len = 32;
    c.d_model = 16;
    c.num_heads = 2;
    c.num_layers = 2;
    c.ff_dim = 32;
    c.positional = PositionalKind::rope;
    c.variant = AttentionVariant::block_sparse;
    c.sparse_block_size = 4;
    c.sparse_window_blocks = 1;
    c.sparse_global_blocks = 1;
    c.sparse_random_blocks = 1;
    c.sparse_seed = 3;
    return c;
}

TEST(BlockSparseModels, DecoderAndClassifierTrainWithFallingLoss) {
    for (const char* name : {"reverse", "brackets"}) {
        TaskOptions task_options;
        task_options.length = 8;
        const auto task = make_task(name, task_options);
        const ModelKind kind = std::string(name) == "reverse" ? ModelKind::decoder : ModelKind::encoder;
        Model model(sparse_model(kind, *task), 1);
        TrainerOptions options;
        options.batch_size = 16;
        options.warmup_steps = 5;
        options.lr = 3e-3f;
        Trainer trainer(model, *task, options);
        StepMetrics m;
        float first = 0.0f, last_mean = 0.0f;
        for (std::size_t i = 0; i < 40; ++i) {
            trainer.step(m);
            if (i == 0) first = m.loss;
            if (i >= 30) last_mean += m.loss / 10.0f;
            ASSERT_TRUE(std::isfinite(m.loss)) << name << " step " << i;
        }
        EXPECT_LT(last_mean, first) << name;
    }
}

TEST(BlockSparseModels, CheckpointMetadataRoundTrips) {
    TaskOptions task_options;
    task_options.length = 8;
    const auto task = make_task("reverse", task_options);
    const ModelConfig config = sparse_model(ModelKind::decoder, *task);
    const auto meta = config.to_metadata();
    EXPECT_EQ(meta.at("variant"), "block_sparse");
    EXPECT_EQ(meta.at("sparse_block_size"), "4");
    EXPECT_EQ(meta.at("sparse_seed"), "3");
    EXPECT_TRUE(ModelConfig::from_metadata(meta) == config);
    const Model model(config, 2);
    const Model again = Model::load(model.save());
    EXPECT_TRUE(again.config() == config);
    auto older = meta;  // checkpoints written before the fields load with the defaults
    for (const char* key : {"sparse_block_size", "sparse_window_blocks", "sparse_global_blocks", "sparse_random_blocks",
                            "sparse_seed"}) {
        older.erase(key);
    }
    EXPECT_EQ(ModelConfig::from_metadata(older).sparse_block_size, BlockSparseOptions{}.block_size);
}

TEST(BlockSparseModels, ConfigValidationRefusesBadFields) {
    TaskOptions task_options;
    task_options.length = 8;
    const auto task = make_task("reverse", task_options);
    ModelConfig c = sparse_model(ModelKind::decoder, *task);
    c.sparse_block_size = 0;
    EXPECT_THROW(c.validate(), ConfigError);
    c.sparse_block_size = 4;
    c.attention_window = 3;
    try {
        c.validate();
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("variant block_sparse with attention_window 3"), std::string::npos)
            << e.what();
    }
}

TEST(BlockSparseModels, DecoderCachedGenerationEqualsUncached) {
    TaskOptions task_options;
    task_options.length = 8;
    const auto task = make_task("reverse", task_options);
    ModelConfig config = sparse_model(ModelKind::decoder, *task);
    config.sparse_block_size = 3;
    config.sparse_window_blocks = 0;
    config.sparse_random_blocks = 2;
    Rng rng(3);
    DecoderLM model(config, rng);
    for (auto& p : model.parameters()) {
        Rng r(5 + p.size());
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.3f * r.normal();
    }
    for (float temperature : {0.0f, 1.0f}) {
        const GenerateOptions options{temperature, 7};
        const GenerateResult cached = model.generate({1, 4, 2, 7}, 20, options);
        const GenerateResult uncached = model.generate_uncached({1, 4, 2, 7}, 20, options);
        EXPECT_EQ(cached.tokens, uncached.tokens) << "temperature " << temperature;
        EXPECT_TRUE(test::all_close(cached.logits, uncached.logits, 1e-5)) << "temperature " << temperature;
    }
}

}  // namespace
}  // namespace attnlab
