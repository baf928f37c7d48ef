// Tiled (flash) attention against the recorded "math" path it replaces: tiled == full for many
// shapes, masks and scale options, forward and backward; finite differences; thread-count
// independence; O(T) memory; and the gate that routes scaled_dot_product_attention.
#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/kernels/flash_tiles.hpp"
#include "attnlab/kernels/isa.hpp"
#include "attnlab/kernels/matmul.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "support/attention_paths.hpp"
#include "support/fixtures.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

// The mask combinations every shape runs with.
enum class MaskKind { none, causal, padding, explicit_mask, all_with_empty_rows };
constexpr MaskKind kMaskKinds[] = {MaskKind::none, MaskKind::causal, MaskKind::padding, MaskKind::explicit_mask,
                                   MaskKind::all_with_empty_rows};

const char* mask_name(MaskKind kind) {
    switch (kind) {
        case MaskKind::none: return "none";
        case MaskKind::causal: return "causal";
        case MaskKind::padding: return "padding";
        case MaskKind::explicit_mask: return "explicit";
        case MaskKind::all_with_empty_rows: return "causal+padding+explicit, empty rows";
    }
    return "?";
}

// batch = 2: batch row 1 pads its last third of the keys; the explicit mask hides a pseudo-random
// ~30%; all_with_empty_rows also hides every key of query row 0 and pads batch row 1 entirely.
AttentionMask make_mask(MaskKind kind, std::size_t t, std::size_t s) {
    AttentionMask mask;
    const bool all = kind == MaskKind::all_with_empty_rows;
    mask.causal = kind == MaskKind::causal || all;
    if (kind == MaskKind::padding || all) {
        mask.key_padding = padding_mask_from_lengths({s, all ? 0 : s - s / 3}, s);
    }
    if (kind == MaskKind::explicit_mask || all) {
        mask.explicit_mask = Mask2::from_shape({t, s});
        for (std::size_t i = 0; i < t; ++i) {
            for (std::size_t j = 0; j < s; ++j) mask.explicit_mask(i, j) = ((i * 7 + j * 13) % 10) < 3 ? 1 : 0;
        }
        if (all) {
            for (std::size_t j = 0; j < s; ++j) mask.explicit_mask(0, j) = 1;
        }
    }
    return mask;
}

struct Inputs {
    Tensor4 q, k, v;
};

Inputs make_inputs(std::size_t batch, std::size_t heads, std::size_t kv_heads, std::size_t t, std::size_t s,
                   std::size_t d, std::uint64_t seed) {
    return {test::random_normal<Tensor4>({batch, heads, t, d}, seed),
            test::random_normal<Tensor4>({batch, kv_heads, s, d}, seed + 1),
            test::random_normal<Tensor4>({batch, kv_heads, s, d}, seed + 2)};
}

// The recorded path, with its weights cached for the math backward.
Tensor4 math_forward(const Inputs& in, const AttentionMask& mask, const ScaleOptions& scale, AttentionCache* cache) {
    return scaled_dot_product_attention(in.q, in.k, in.v, mask, scale, nullptr, cache, SdpBackend::math);
}

bool all_finite(const Tensor4& x) {
    for (float v : x) {
        if (!std::isfinite(v)) return false;
    }
    return true;
}

TEST(FlashAttention, ForwardEqualsTheMathPathForManyShapesAndMasks) {
    const std::size_t lengths[] = {1, 3, 17, 64, 65, 200};
    const std::size_t dims[] = {1, 5, 32, 64};
    const std::pair<std::size_t, std::size_t> head_layouts[] = {{1, 1}, {4, 2}, {4, 1}};
    std::uint64_t seed = 1;
    for (std::size_t t : lengths) {
        for (std::size_t s : lengths) {
            for (std::size_t d : dims) {
                for (auto [heads, kv_heads] : head_layouts) {
                    const Inputs in = make_inputs(2, heads, kv_heads, t, s, d, seed += 3);
                    for (MaskKind kind : kMaskKinds) {
                        const AttentionMask mask = make_mask(kind, t, s);
                        const Tensor4 expected = math_forward(in, mask, {}, nullptr);
                        Tensor3 lse;
                        const Tensor4 actual = flash_attention_forward(in.q, in.k, in.v, mask, {}, &lse);
                        ASSERT_TRUE(all_finite(actual));
                        ASSERT_TRUE(test::all_close(actual, expected, 1e-5))
                            << "T=" << t << " S=" << s << " D=" << d << " H=" << heads << " Hkv=" << kv_heads
                            << " mask " << mask_name(kind);
                    }
                }
            }
        }
    }
}

// The query tile depends on the kernel table (48 rows, or 64 with AVX-512's strips of 32):
// with every table, it is a whole number of strips, and query counts on either side of one and
// two tiles give the math path's results, forward and backward.
TEST(FlashAttention, EveryKernelTableTilesQueriesInWholeStripsAndMatchesTheMathPath) {
    const std::string previous = kernels::active_isa();
    for (const std::string& isa : kernels::available_isas()) {
        kernels::set_isa(isa);
        const std::size_t tile = flash_query_tile(), strip = kernels::flash_strip();
        EXPECT_EQ(tile % strip, 0u) << isa;
        EXPECT_GE(tile, kFlashQueryRows) << isa;
        EXPECT_LT(tile, kFlashQueryRows + strip) << isa;
        std::uint64_t seed = 500;
        for (std::size_t t : {tile - 1, tile, tile + 1, 2 * tile + 1}) {
            const Inputs in = make_inputs(1, 2, 2, t, 200, 32, seed += 4);
            const Tensor4 dctx = test::random_normal<Tensor4>({1, 2, t, 32}, seed + 3);
            for (MaskKind kind : {MaskKind::none, MaskKind::causal}) {
                const AttentionMask mask = make_mask(kind, t, 200);
                const test::AttentionResults ref = test::math_path(in.q, in.k, in.v, mask, dctx);
                const test::AttentionResults got = test::flash_path(in.q, in.k, in.v, mask, dctx);
                const std::string where = isa + " T=" + std::to_string(t) + " mask " + mask_name(kind);
                EXPECT_TRUE(test::all_close(got.context, ref.context, 1e-5)) << where;
                EXPECT_TRUE(test::all_close(got.dq, ref.dq, 1e-4, 1e-4)) << "dq " << where;
                EXPECT_TRUE(test::all_close(got.dk, ref.dk, 1e-4, 1e-4)) << "dk " << where;
                EXPECT_TRUE(test::all_close(got.dv, ref.dv, 1e-4, 1e-4)) << "dv " << where;
            }
        }
    }
    kernels::set_isa(previous);
}

// With all keys in one tile the flash forward runs the recorded path's operations in its order
// (scale, mask, softmax, p·V): equal bit for bit, in every ISA, for ragged rows and keys (the
// vector tails), rows the tile's softmax takes 4 at a time and alone, and rows with no key.
TEST(FlashAttention, OneKeyTileEqualsTheMathPathBitForBit) {
    const std::string previous = kernels::active_isa();
    for (const std::string& isa : kernels::available_isas()) {
        kernels::set_isa(isa);
        std::uint64_t seed = 900;
        // 16, 32, 64 and 128 keys are whole vectors: the fused one-tile kernels where they fit.
        const std::size_t key_counts[] = {1, 5, 16, 17, 32, 64, 100, kFlashKeyTile};
        for (std::size_t t : {1u, 6u, 17u, 64u}) {
            for (std::size_t s : key_counts) {
                const Inputs in = make_inputs(2, 4, 2, t, s, 16, seed += 3);
                for (MaskKind kind : kMaskKinds) {
                    const AttentionMask mask = make_mask(kind, t, s);
                    const Tensor4 expected = math_forward(in, mask, {}, nullptr);
                    const Tensor4 actual = flash_attention_forward(in.q, in.k, in.v, mask, {});
                    for (std::size_t i = 0; i < actual.size(); ++i) {
                        ASSERT_EQ(actual.data()[i], expected.data()[i])
                            << isa << " T=" << t << " S=" << s << " mask " << mask_name(kind)
                            << " element " << i;
                    }
                }
            }
        }
    }
    kernels::set_isa(previous);
}

// Without a mask or with the causal mask alone, all keys in one tile and whole vectors of keys
// and head dims, the flash calls run the fused one-tile kernels (kernels/flash_tiles.hpp); a
// padding mask that hides no key makes them run the general one-tile path instead. Both must
// agree bit for bit, forward (context, logsumexp) and backward, in every ISA, for rows the
// kernels' blocks take whole and as remainders, head dims of 1 to 4 vectors, grouped heads (dk,
// dv summed over the group), and causal rows that see every key, some, or none (T > S).
TEST(FlashAttention, FusedOneTileEqualsTheGeneralOneTilePathBitForBit) {
    const std::string previous = kernels::active_isa();
    for (const std::string& isa : kernels::available_isas()) {
        kernels::set_isa(isa);
        const std::size_t w = kernels::active_simd_width();
        std::uint64_t seed = 1300;
        std::size_t fused_cases = 0;
        for (std::size_t t : {1u, 7u, 16u, 64u, 100u}) {
            for (std::size_t s : {w, 2 * w, 4 * w, 8 * w}) {
                for (std::size_t d : {w, 2 * w, 4 * w}) {
                    if (s > kFlashKeyTile) continue;
                    if (kernels::one_tile_fits(s, d)) ++fused_cases;
                    const Inputs in = make_inputs(2, 4, 2, t, s, d, seed += 5);
                    const Tensor4 dctx = test::random_normal<Tensor4>({2, 4, t, d}, seed + 1);
                    for (bool causal : {false, true}) {
                        AttentionMask mask, general_mask;
                        mask.causal = general_mask.causal = causal;
                        general_mask.key_padding = padding_mask_from_lengths({s, s}, s);  // hides nothing
                        const std::string where = isa + " T=" + std::to_string(t) + " S=" + std::to_string(s) +
                                                  " D=" + std::to_string(d) + (causal ? " causal" : "");
                        Tensor3 lse_fused, lse_general;
                        const Tensor4 fused = flash_attention_forward(in.q, in.k, in.v, mask, {}, &lse_fused);
                        const Tensor4 general =
                            flash_attention_forward(in.q, in.k, in.v, general_mask, {}, &lse_general);
                        ASSERT_TRUE(all_finite(fused)) << where;
                        ASSERT_TRUE(std::equal(fused.begin(), fused.end(), general.begin())) << "context " << where;
                        ASSERT_TRUE(std::equal(lse_fused.begin(), lse_fused.end(), lse_general.begin()))
                            << "lse " << where;
                        Tensor4 dq[2], dk[2], dv[2];
                        flash_attention_backward(dctx, in.q, in.k, in.v, fused, lse_fused, mask, {}, dq[0], dk[0],
                                                 dv[0]);
                        flash_attention_backward(dctx, in.q, in.k, in.v, general, lse_general, general_mask, {},
                                                 dq[1], dk[1], dv[1]);
                        ASSERT_TRUE(std::equal(dq[0].begin(), dq[0].end(), dq[1].begin())) << "dq " << where;
                        ASSERT_TRUE(std::equal(dk[0].begin(), dk[0].end(), dk[1].begin())) << "dk " << where;
                        ASSERT_TRUE(std::equal(dv[0].begin(), dv[0].end(), dv[1].begin())) << "dv " << where;
                    }
                }
            }
        }
        EXPECT_GT(fused_cases, 0u) << isa << ": no shape ran the fused kernels";
    }
    kernels::set_isa(previous);
}

// The weights the fused one-tile forward keeps for the backward (one_tile_weights), in every
// ISA: bit for bit the recorded path's weights (0 for masked keys), and a backward that reads
// them gives the gradients of the one that recomputes them (to rounding: p there comes from
// exp(scale·s - lse) instead of the normalised exp) and of the math path. A call off the fused
// path leaves no rows. The backward really reads them: zero weights give dv = 0.
TEST(FlashAttention, OneTileWeightsKeptByTheForwardServeItsBackward) {
    const std::string previous = kernels::active_isa();
    for (const std::string& isa : kernels::available_isas()) {
        kernels::set_isa(isa);
        const std::size_t t = 64, s = 4 * kernels::active_simd_width(), d = 16;  // keys the fused kernels take
        const Inputs in = make_inputs(2, 4, 2, t, s, d, 77);
        const Tensor4 dctx = test::random_normal<Tensor4>({2, 4, t, d}, 78);
        ASSERT_TRUE(kernels::one_tile_fits(s, d)) << isa;
        for (bool causal : {false, true}) {
            AttentionMask mask;
            mask.causal = causal;
            const std::string where = isa + " S=" + std::to_string(s) + (causal ? " causal" : "");
            Tensor3 lse;
            Tensor4 ctx;
            Tensor2 weights;
            flash_attention_forward(in.q, in.k, in.v, mask, {}, &lse, nullptr, ctx, &weights);
            ASSERT_EQ(weights.shape(0), 2u * 4u * t) << where;
            ASSERT_EQ(weights.shape(1), kernels::kOneTileLd) << where;
            AttentionCache recorded;
            scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, nullptr, &recorded, SdpBackend::math);
            for (std::size_t row = 0; row < 2 * 4 * t; ++row) {
                ASSERT_EQ(std::memcmp(&weights(row, 0), recorded.weights.data() + row * s, s * sizeof(float)), 0)
                    << where << " row " << row;
            }
            Tensor4 dq[2], dk[2], dv[2];
            flash_attention_backward(dctx, in.q, in.k, in.v, ctx, lse, mask, {}, dq[0], dk[0], dv[0], nullptr,
                                     &weights);
            flash_attention_backward(dctx, in.q, in.k, in.v, ctx, lse, mask, {}, dq[1], dk[1], dv[1]);
            EXPECT_TRUE(test::all_close(dq[0], dq[1], 1e-6, 1e-5)) << "dq " << where;
            EXPECT_TRUE(test::all_close(dk[0], dk[1], 1e-6, 1e-5)) << "dk " << where;
            EXPECT_TRUE(test::all_close(dv[0], dv[1], 1e-6, 1e-5)) << "dv " << where;
            const test::AttentionResults ref = test::math_path(in.q, in.k, in.v, mask, dctx);
            EXPECT_TRUE(test::all_close(dq[0], ref.dq, 1e-4, 1e-4)) << "dq vs math " << where;
            EXPECT_TRUE(test::all_close(dk[0], ref.dk, 1e-4, 1e-4)) << "dk vs math " << where;
            EXPECT_TRUE(test::all_close(dv[0], ref.dv, 1e-4, 1e-4)) << "dv vs math " << where;

            Tensor2 zeros = weights;
            std::fill(zeros.begin(), zeros.end(), 0.0f);
            flash_attention_backward(dctx, in.q, in.k, in.v, ctx, lse, mask, {}, dq[1], dk[1], dv[1], nullptr,
                                     &zeros);
            EXPECT_TRUE(std::all_of(dv[1].begin(), dv[1].end(), [](float x) { return x == 0.0f; })) << where;
        }
        // Off the fused path (a padding mask; keys not a whole number of vectors): no rows kept.
        Tensor2 weights = Tensor2::from_shape({3, kernels::kOneTileLd});
        Tensor3 lse;
        Tensor4 ctx;
        const Inputs ragged = make_inputs(1, 2, 2, 20, 61, 16, 79);
        flash_attention_forward(ragged.q, ragged.k, ragged.v, {}, {}, &lse, nullptr, ctx, &weights);
        EXPECT_EQ(weights.shape(0), 0u) << isa;
        flash_attention_forward(in.q, in.k, in.v, {}, {}, &lse, nullptr, ctx, &weights);
        EXPECT_EQ(weights.shape(0), 2u * 4u * t) << isa;
        AttentionMask padded;
        padded.key_padding = padding_mask_from_lengths({s, s}, s);
        flash_attention_forward(in.q, in.k, in.v, padded, {}, &lse, nullptr, ctx, &weights);
        EXPECT_EQ(weights.shape(0), 0u) << isa;
    }
    kernels::set_isa(previous);
}

// Heads side by side in rows of width H·D + pad (what HeadsView addresses in place), the
// padding columns filled with `fill`.
Tensor3 to_rows(const Tensor4& x, std::size_t pad, float fill) {
    const std::size_t batch = x.shape(0), heads = x.shape(1), n = x.shape(2), d = x.shape(3);
    Tensor3 rows = Tensor3::from_shape({batch, n, heads * d + pad});
    std::fill(rows.begin(), rows.end(), fill);
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t c = 0; c < d; ++c) rows(b, i, h * d + c) = x(b, h, i, c);
    return rows;
}
HeadsView view_of_rows(Tensor3& rows, std::size_t heads, std::size_t d) {
    const std::size_t n = rows.shape(1), w = rows.shape(2);
    return HeadsView{rows.data(), rows.shape(0), heads, n, d, n * w, d, w};
}
ConstHeadsView view_of_rows(const Tensor3& rows, std::size_t heads, std::size_t d) {
    return view_of_rows(const_cast<Tensor3&>(rows), heads, d);
}
// Expects the heads in `rows` to equal x element for element, and the padding to still hold `fill`.
void expect_rows_equal(const Tensor3& rows, const Tensor4& x, float fill, const std::string& what) {
    const std::size_t heads = x.shape(1), d = x.shape(3);
    for (std::size_t b = 0; b < rows.shape(0); ++b)
        for (std::size_t i = 0; i < rows.shape(1); ++i)
            for (std::size_t c = 0; c < rows.shape(2); ++c) {
                const float got = rows(b, i, c);
                if (c >= heads * d) {
                    ASSERT_EQ(got, fill) << what << ": padding column " << c << " was written";
                    continue;
                }
                ASSERT_EQ(got, x(b, c / d, i, c % d)) << what << " at (" << b << ", " << c / d << ", " << i << ", "
                                                      << c % d << ")";
            }
}

// Heads read in place from rows (the projections' layout, with extra padding columns of NaN
// that must never be read) and written into rows (whose padding must stay untouched) give
// exactly the results of the Tensor4 calls on split heads, forward and backward.
TEST(FlashAttention, HeadsInRowsEqualSplitHeadsBitForBit) {
    const std::pair<std::size_t, std::size_t> lengths[] = {{17, 17}, {64, 64}, {65, 200}, {200, 65}};
    const std::pair<std::size_t, std::size_t> head_layouts[] = {{1, 1}, {4, 2}};
    const float nan = std::nanf(""), sentinel = 7.0f;
    std::uint64_t seed = 500;
    for (auto [t, s] : lengths) {
        for (std::size_t d : {5, 16}) {
            for (auto [heads, kv_heads] : head_layouts) {
                const Inputs in = make_inputs(2, heads, kv_heads, t, s, d, seed += 4);
                const Tensor4 dctx = test::random_normal<Tensor4>({2, heads, t, d}, seed + 3);
                for (MaskKind kind : {MaskKind::none, MaskKind::causal, MaskKind::all_with_empty_rows}) {
                    std::ostringstream where;
                    where << "T=" << t << " S=" << s << " D=" << d << " H=" << heads << " Hkv=" << kv_heads
                          << " mask " << mask_name(kind);
                    const AttentionMask mask = make_mask(kind, t, s);
                    Tensor3 lse4, lse_rows;
                    const Tensor4 ctx4 = flash_attention_forward(in.q, in.k, in.v, mask, {}, &lse4);
                    const Tensor3 q = to_rows(in.q, 3, nan), k = to_rows(in.k, 1, nan), v = to_rows(in.v, 2, nan);
                    Tensor3 ctx = to_rows(Tensor4::from_shape({2, heads, t, d}), 2, sentinel);
                    flash_attention_forward(view_of_rows(q, heads, d), view_of_rows(k, kv_heads, d),
                                            view_of_rows(v, kv_heads, d), mask, {}, &lse_rows, nullptr,
                                            view_of_rows(ctx, heads, d));
                    expect_rows_equal(ctx, ctx4, sentinel, "context " + where.str());
                    ASSERT_TRUE(std::equal(lse4.begin(), lse4.end(), lse_rows.begin())) << "lse " << where.str();

                    Tensor4 dq4, dk4, dv4;
                    flash_attention_backward(dctx, in.q, in.k, in.v, ctx4, lse4, mask, {}, dq4, dk4, dv4);
                    const Tensor3 dc = to_rows(dctx, 1, nan);
                    Tensor3 dq = to_rows(dq4, 3, sentinel), dk = to_rows(dk4, 1, sentinel),
                            dv = to_rows(dv4, 2, sentinel);
                    std::fill(dq.begin(), dq.end(), sentinel);  // every head element must be written
                    std::fill(dk.begin(), dk.end(), sentinel);
                    std::fill(dv.begin(), dv.end(), sentinel);
                    flash_attention_backward(view_of_rows(dc, heads, d), view_of_rows(q, heads, d),
                                             view_of_rows(k, kv_heads, d), view_of_rows(v, kv_heads, d),
                                             view_of_rows(std::as_const(ctx), heads, d), lse_rows, mask, {},
                                             view_of_rows(dq, heads, d), view_of_rows(dk, kv_heads, d),
                                             view_of_rows(dv, kv_heads, d));
                    expect_rows_equal(dq, dq4, sentinel, "dq " + where.str());
                    expect_rows_equal(dk, dk4, sentinel, "dk " + where.str());
                    expect_rows_equal(dv, dv4, sentinel, "dv " + where.str());
                }
            }
        }
    }
}

TEST(FlashAttention, HeadsViewsOfTheWrongShapeAreRejected) {
    const Inputs in = make_inputs(2, 4, 2, 9, 11, 8, 77);
    Tensor4 ctx = Tensor4::from_shape({2, 4, 9, 8});
    Tensor4 wrong = Tensor4::from_shape({2, 2, 9, 8});  // 2 heads where q has 4
    EXPECT_THROW(flash_attention_forward(heads_of(in.q), heads_of(in.k), heads_of(in.v), {}, {}, nullptr, nullptr,
                                         heads_of(wrong)),
                 ShapeError);
    EXPECT_THROW(flash_attention_forward(heads_of(in.q), heads_of(in.q), heads_of(in.v), {}, {}, nullptr, nullptr,
                                         heads_of(ctx)),
                 ShapeError);  // k (2, 4, 9, 8) with v (2, 2, 11, 8)
    Tensor3 lse;
    flash_attention_forward(heads_of(in.q), heads_of(in.k), heads_of(in.v), {}, {}, &lse, nullptr, heads_of(ctx));
    Tensor4 dq = Tensor4::from_shape({2, 4, 9, 8}), dk = Tensor4::from_shape({2, 2, 11, 8});
    Tensor4 dv_wrong = Tensor4::from_shape({2, 2, 9, 8});
    try {
        flash_attention_backward(heads_of(std::as_const(ctx)), heads_of(in.q), heads_of(in.k), heads_of(in.v),
                                 heads_of(std::as_const(ctx)), lse, {}, {}, heads_of(dq), heads_of(dk),
                                 heads_of(dv_wrong));
        FAIL() << "expected a ShapeError";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("dv (B, Hkv, S, Dv) must be (2, 2, 11, 8), got (2, 2, 9, 8)"),
                  std::string::npos)
            << e.what();
    }
    Tensor3 odd = Tensor3::from_shape({2, 9, 30});
    EXPECT_THROW(heads_in_rows(odd, 4), ConfigError);  // 30 is not divisible by 4
}

TEST(FlashAttention, ScaleOffAndCustomEqualTheMathPath) {
    for (std::size_t n : {17, 65, 200}) {
        const Inputs in = make_inputs(2, 4, 2, n, n + 3, 32, n);
        ScaleOptions off;
        off.enabled = false;
        ScaleOptions custom;
        custom.factor = 0.37f;
        ScaleOptions negative;
        negative.factor = -0.5f;  // masked scores must stay -inf, not flip to +inf
        for (const ScaleOptions& scale : {off, custom, negative}) {
            for (MaskKind kind : kMaskKinds) {
                const AttentionMask mask = make_mask(kind, n, n + 3);
                const Tensor4 expected = math_forward(in, mask, scale, nullptr);
                const Tensor4 actual = flash_attention_forward(in.q, in.k, in.v, mask, scale);
                // Unscaled scores of D = 32 unit normals reach |x| ~ 20: compare relative to O(1) weights.
                EXPECT_TRUE(test::all_close(actual, expected, 1e-5, 1e-5)) << "n=" << n << " mask " << mask_name(kind);
            }
        }
    }
}

TEST(FlashAttention, FullyMaskedRowsGiveZerosAndMinusInfinityLogsumexp) {
    const Inputs in = make_inputs(2, 4, 1, 17, 65, 5, 3);
    const AttentionMask mask = make_mask(MaskKind::all_with_empty_rows, 17, 65);
    Tensor3 lse;
    const Tensor4 ctx = flash_attention_forward(in.q, in.k, in.v, mask, {}, &lse);
    for (std::size_t h = 0; h < 4; ++h) {
        for (std::size_t c = 0; c < 5; ++c) {
            EXPECT_EQ(ctx(0, h, 0, c), 0.0f);  // row 0 hides every key
            for (std::size_t i = 0; i < 17; ++i) EXPECT_EQ(ctx(1, h, i, c), 0.0f);  // batch row 1 is all padding
        }
        EXPECT_EQ(lse(0, h, 0), -INFINITY);
        EXPECT_TRUE(std::isfinite(lse(0, h, 1)));
    }
}

TEST(FlashAttention, LogsumexpIsThatOfTheScaledMaskedScores) {
    const std::size_t t = 65, s = 200, d = 32;
    const Inputs in = make_inputs(1, 4, 2, t, s, d, 9);
    const AttentionMask mask = make_mask(MaskKind::causal, t, s);
    Tensor3 lse;
    flash_attention_forward(in.q, in.k, in.v, mask, {}, &lse);
    const double scale = 1.0 / std::sqrt(double(d));
    for (std::size_t h = 0; h < 4; ++h) {
        for (std::size_t i = 0; i < t; ++i) {
            double sum = 0.0;
            for (std::size_t j = 0; j < s; ++j) {
                if (mask.is_masked(0, i, j, t, s)) continue;
                double dot = 0.0;
                for (std::size_t c = 0; c < d; ++c) dot += double(in.q(0, h, i, c)) * in.k(0, h / 2, j, c);
                sum += std::exp(dot * scale);
            }
            EXPECT_NEAR(lse(0, h, i), std::log(sum), 1e-4) << "h=" << h << " i=" << i;
        }
    }
}

// Logsumexp (B, H, T) of the scaled scores in double, no mask.
Tensor3 reference_logsumexp(const Inputs& in, double scale) {
    const std::size_t batch = in.q.shape(0), heads = in.q.shape(1), t = in.q.shape(2), d = in.q.shape(3);
    const std::size_t s = in.k.shape(2), group = heads / in.k.shape(1);
    Tensor3 lse = Tensor3::from_shape({batch, heads, t});
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t h = 0; h < heads; ++h) {
            for (std::size_t i = 0; i < t; ++i) {
                std::vector<double> x(s);
                for (std::size_t j = 0; j < s; ++j) {
                    double dot = 0.0;
                    for (std::size_t c = 0; c < d; ++c) dot += double(in.q(b, h, i, c)) * in.k(b, h / group, j, c);
                    x[j] = dot * scale;
                }
                const double m = *std::max_element(x.begin(), x.end());
                double sum = 0.0;
                for (double v : x) sum += std::exp(v - m);
                lse(b, h, i) = static_cast<float>(m + std::log(sum));
            }
        }
    }
    return lse;
}

// The lazy-reference key tiles (kernels::flash_lazy_exp(): the WebAssembly table; natively
// these run the two-pass kernels and must give the same): keys along one direction u with
// scores that rise from tile to tile by `rise` (log2 units, scale 1/sqrt(D)), so later tiles
// stay within the margin of the reference (rise 2), go past it and are rescaled (rise 20), or a
// single key far above everything before it forces a recompute (jump); and falling scores whose
// later tiles' p underflow against the first tile's reference. Context and logsumexp against
// the math path and a double-precision logsumexp, without a mask and causal.
TEST(FlashAttention, LazyReferenceTilesEqualTheMathPathWhenScoresRiseFallOrJump) {
    const std::size_t t = 70, s = 600, d = 16;
    enum class Pattern { small_rise, large_rise, jump, fall };
    for (Pattern pattern : {Pattern::small_rise, Pattern::large_rise, Pattern::jump, Pattern::fall}) {
        Inputs in = make_inputs(1, 2, 1, t, s, d, 40 + static_cast<int>(pattern));
        // q = a·u + noise, k_j = g(j)·u + noise with u = e_0: s_ij·scale·log2(e) ≈ a·g(j)/4·1.44.
        const double per_key = pattern == Pattern::small_rise   ? 2.0 / 128
                               : pattern == Pattern::large_rise ? 20.0 / 128
                                                                : 0.0;
        for (std::size_t h = 0; h < 2; ++h) {
            for (std::size_t i = 0; i < t; ++i) {
                for (std::size_t c = 0; c < d; ++c) in.q(0, h, i, c) *= 0.1f;
                in.q(0, h, i, 0) = 4.0f;
            }
        }
        for (std::size_t j = 0; j < s; ++j) {
            for (std::size_t c = 0; c < d; ++c) in.k(0, 0, j, c) *= 0.1f;
            // a·g(j)/4·log2(e) = per_key·j with a = 4: g(j) = per_key·j / log2(e)
            double g = per_key * double(j) / 1.4426950408889634;
            if (pattern == Pattern::jump) g = j == 400 ? 100.0 / 1.4426950408889634 : 0.0;
            if (pattern == Pattern::fall) g = -2.0 * double(j) / 1.4426950408889634;
            in.k(0, 0, j, 0) = static_cast<float>(g);
        }
        const char* names[] = {"small rise", "large rise", "jump", "fall"};
        for (MaskKind kind : {MaskKind::none, MaskKind::causal}) {
            const AttentionMask mask = make_mask(kind, t, s);
            const Tensor4 expected = math_forward(in, mask, {}, nullptr);
            Tensor3 lse;
            FlashAttentionStats stats;
            const Tensor4 actual = flash_attention_forward(in.q, in.k, in.v, mask, {}, &lse, &stats);
            const std::string where = std::string(names[static_cast<int>(pattern)]) + ", mask " + mask_name(kind);
            ASSERT_TRUE(all_finite(actual)) << where;
            EXPECT_TRUE(test::all_close(actual, expected, 1e-5, 1e-5)) << where;
            if (kind == MaskKind::none) {
                EXPECT_TRUE(test::all_close(lse, reference_logsumexp(in, 0.25), 1e-4, 1e-6)) << where;
            }
            if (!kernels::flash_lazy_exp()) {
                EXPECT_EQ(stats.lazy_tiles, 0u) << where;
                continue;
            }
            // Two query tiles (70 rows) by five key tiles: the first of each query tile takes
            // the two-pass kernels, and so do causal tiles the diagonal crosses.
            if (kind == MaskKind::none) EXPECT_EQ(stats.lazy_tiles, 2u * 2u * 4u) << where;
            EXPECT_GT(stats.lazy_tiles, 0u) << where;
            if (pattern == Pattern::large_rise) EXPECT_GT(stats.lazy_rescaled_rows, 0u) << where;
            if (pattern == Pattern::small_rise || pattern == Pattern::fall) {
                EXPECT_EQ(stats.lazy_rescaled_rows, 0u) << where;
                EXPECT_EQ(stats.lazy_recomputed_tiles, 0u) << where;
            }
            if (pattern == Pattern::jump && kind == MaskKind::none) EXPECT_GT(stats.lazy_recomputed_tiles, 0u) << where;
        }
    }
}

TEST(FlashAttention, BackwardEqualsTheMathBackward) {
    const std::size_t lengths[] = {1, 17, 65, 200};
    const std::pair<std::size_t, std::size_t> head_layouts[] = {{1, 1}, {4, 2}, {4, 1}};
    std::uint64_t seed = 100;
    for (std::size_t t : lengths) {
        for (std::size_t s : lengths) {
            for (std::size_t d : {5, 32}) {
                for (auto [heads, kv_heads] : head_layouts) {
                    const Inputs in = make_inputs(2, heads, kv_heads, t, s, d, seed += 4);
                    const Tensor4 dctx = test::random_normal<Tensor4>({2, heads, t, d}, seed + 3);
                    for (MaskKind kind : {MaskKind::none, MaskKind::causal, MaskKind::all_with_empty_rows}) {
                        const AttentionMask mask = make_mask(kind, t, s);
                        const test::AttentionResults ref = test::math_path(in.q, in.k, in.v, mask, dctx);
                        const test::AttentionResults got = test::flash_path(in.q, in.k, in.v, mask, dctx);
                        std::ostringstream where;
                        where << "T=" << t << " S=" << s << " D=" << d << " H=" << heads << " Hkv=" << kv_heads
                              << " mask " << mask_name(kind);
                        ASSERT_TRUE(test::all_close(got.dq, ref.dq, 1e-4, 1e-4)) << "dq " << where.str();
                        ASSERT_TRUE(test::all_close(got.dk, ref.dk, 1e-4, 1e-4)) << "dk " << where.str();
                        ASSERT_TRUE(test::all_close(got.dv, ref.dv, 1e-4, 1e-4)) << "dv " << where.str();
                    }
                }
            }
        }
    }
}

TEST(FlashAttention, BackwardMatchesFiniteDifferences) {
    const std::size_t batch = 2, heads = 4, kv_heads = 2, t = 5, s = 7, d = 3;
    Inputs in = make_inputs(batch, heads, kv_heads, t, s, d, 77);
    const Tensor4 w = test::random_normal<Tensor4>({batch, heads, t, d}, 78);
    ScaleOptions scale;
    scale.factor = 0.8f;
    for (MaskKind kind : {MaskKind::none, MaskKind::all_with_empty_rows}) {
        const AttentionMask mask = make_mask(kind, t, s);
        Tensor3 lse;
        const Tensor4 ctx = flash_attention_forward(in.q, in.k, in.v, mask, scale, &lse);
        Tensor4 dq, dk, dv;
        flash_attention_backward(w, in.q, in.k, in.v, ctx, lse, mask, scale, dq, dk, dv);
        auto loss = [&] { return testutil::dot(flash_attention_forward(in.q, in.k, in.v, mask, scale), w); };
        const testutil::GradCheckOptions tol{1e-2, 2e-3, 1e-2};
        EXPECT_TRUE(testutil::check_gradient("flash dq", loss, in.q.data(), dq.data(), in.q.size(), tol));
        EXPECT_TRUE(testutil::check_gradient("flash dk", loss, in.k.data(), dk.data(), in.k.size(), tol));
        EXPECT_TRUE(testutil::check_gradient("flash dv", loss, in.v.data(), dv.data(), in.v.size(), tol));
    }
}

// S = 333 spans several key tiles (separate dk/dv and dq passes); S = 100 fits one key tile
// (dq is written in the dk/dv pass).
class FlashThreads : public ::testing::TestWithParam<std::size_t> {};

TEST_P(FlashThreads, OneAndTwoThreadsAreBitIdentical) {
    const std::size_t s = GetParam();
    const Inputs in = make_inputs(2, 4, 2, 200, s, 32, 5);
    const Tensor4 dctx = test::random_normal<Tensor4>({2, 4, 200, 32}, 6);
    const AttentionMask mask = make_mask(MaskKind::all_with_empty_rows, 200, s);
    const std::size_t previous = num_threads();
    Tensor4 out[2], dq[2], dk[2], dv[2];
    Tensor3 lse[2];
    for (std::size_t threads : {1, 2}) {
        set_num_threads(threads);
        const std::size_t r = threads - 1;
        out[r] = flash_attention_forward(in.q, in.k, in.v, mask, {}, &lse[r]);
        flash_attention_backward(dctx, in.q, in.k, in.v, out[r], lse[r], mask, {}, dq[r], dk[r], dv[r]);
    }
    set_num_threads(previous);
    for (const auto* pair : {out, dq, dk, dv}) {
        ASSERT_EQ(pair[0].size(), pair[1].size());
        EXPECT_EQ(std::memcmp(pair[0].data(), pair[1].data(), pair[0].size() * sizeof(float)), 0);
    }
    EXPECT_EQ(std::memcmp(lse[0].data(), lse[1].data(), lse[0].size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(KeyTiles, FlashThreads, ::testing::Values(333, 100));

TEST(FlashAttention, ScratchDoesNotGrowWithTheSequence) {
    const std::size_t previous = num_threads();
    set_num_threads(1);
    FlashAttentionStats small, large, backward;
    const Inputs a = make_inputs(1, 4, 4, 65, 65, 32, 1), b = make_inputs(1, 4, 4, 1000, 1000, 32, 2);
    Tensor3 lse;
    flash_attention_forward(a.q, a.k, a.v, {}, {}, nullptr, &small);
    const Tensor4 ctx = flash_attention_forward(b.q, b.k, b.v, {}, {}, &lse, &large);
    Tensor4 dq, dk, dv;
    flash_attention_backward(ctx, b.q, b.k, b.v, ctx, lse, {}, {}, dq, dk, dv, &backward);
    set_num_threads(previous);
    EXPECT_EQ(small.peak_scratch_bytes, large.peak_scratch_bytes);
    EXPECT_EQ(large.row_stat_bytes, 4 * 1000 * sizeof(float));  // logsumexp (B, H, T)
    // One score tile (keys by queries, the queries padded to a whole strip), one output
    // accumulator tile (Dv = 32 padded to the strip), the query tile packed, and per-query
    // statistics (m, l and the rescale factors; where the forward takes the lazy-reference
    // path, kernels::flash_lazy_exp(), also a tile's max and sum): far from the 4 x 1000 x 1000
    // floats of the scores. Each task's buffer also
    // holds the packing panel of its small matmul calls (a key tile by the head dimension), and
    // the regions are rounded up to whole cache lines (16 floats).
    const std::size_t dp = kernels::flash_padded_value_dim(32), strip = kernels::flash_strip();
    const std::size_t ldq = (flash_query_tile() + strip - 1) / strip * strip;
    const std::size_t matmul_panel = std::max(kernels::matmul_scratch_floats(kFlashKeyTile, 32),
                                              kernels::matmul_scratch_floats(32, kFlashKeyTile)) +
                                     2 * 16;
    EXPECT_LE(large.peak_scratch_bytes, (kFlashKeyTile * ldq + flash_query_tile() * dp +
                                         kernels::flash_strips_size(flash_query_tile(), 32) +
                                         (kernels::flash_lazy_exp() ? 5 : 3) * ldq + matmul_panel) *
                                            sizeof(float));
    // K packed once for the tile kernels, tile by tile in groups: linear in S (the size of K,
    // each tile's keys rounded up to a whole group); one key tile needs no packing, and values
    // whose rows are a whole number of strips (Dv = 32 is, on every ISA) are read where they are.
    EXPECT_EQ(small.packed_bytes, 0u);
    ASSERT_EQ(dp, 32u);
    const std::size_t key_tiles = (1000 + kFlashKeyTile - 1) / kFlashKeyTile;
    EXPECT_EQ(large.packed_bytes, 4 * key_tiles * kernels::flash_groups_size(kFlashKeyTile, 32) * sizeof(float));
    EXPECT_LE(large.packed_bytes, 4 * 2 * 1008 * 32 * sizeof(float));
    // Backward: the probability and score-gradient tiles, and the query and output-gradient
    // tiles packed; K and V packed once, linear in S.
    EXPECT_LE(backward.peak_scratch_bytes,
              (2 * flash_query_tile() * kFlashKeyTile + 2 * kernels::flash_groups_size(flash_query_tile(), 32) +
               matmul_panel) *
                  sizeof(float));
    EXPECT_EQ(backward.packed_bytes, 4 * 2 * kernels::flash_strips_size(1000, 32) * sizeof(float));
}

// Asks for one stage and counts its rows (on_stage may run on several pool threads at once).
class WantsOnly final : public StageObserver {
public:
    explicit WantsOnly(Stage stage) : stage_(stage) {}
    bool wants(Stage stage) const override { return stage == stage_; }
    void on_stage(const StageView& view) override { seen += view.rows; }
    std::atomic<std::size_t> seen{0};

private:
    Stage stage_;
};

TEST(FlashAttention, GateNamesWhyTheFlashPathCannotServeACall) {
    EXPECT_TRUE(can_use_flash(nullptr, nullptr));
    WantsOnly context_only(Stage::context), weights_only(Stage::weights);
    EXPECT_TRUE(can_use_flash(&context_only, nullptr));
    std::vector<std::string> reasons;
    EXPECT_FALSE(can_use_flash(&weights_only, nullptr, &reasons));
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_NE(reasons[0].find("'weights'"), std::string::npos) << reasons[0];

    AttentionCache full;  // need_weights by default: callers read cache.weights
    reasons.clear();
    EXPECT_FALSE(can_use_flash(nullptr, &full, &reasons));
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_NE(reasons[0].find("need_weights"), std::string::npos) << reasons[0];
    AttentionCache compact = AttentionCache::without_weights();
    EXPECT_TRUE(can_use_flash(nullptr, &compact));

    const Inputs in = make_inputs(1, 2, 2, 4, 4, 8, 1);
    try {
        scaled_dot_product_attention(in.q, in.k, in.v, {}, {}, &weights_only, nullptr, SdpBackend::flash);
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("'weights'"), std::string::npos) << e.what();
    }
}

TEST(FlashAttention, ScaledDotProductAttentionRoutesToFlashUnlessStagesOrWeightsAreAsked) {
    const Inputs in = make_inputs(2, 4, 2, 65, 65, 32, 3);
    AttentionMask mask;
    mask.causal = true;
    const Tensor4 flash = flash_attention_forward(in.q, in.k, in.v, mask);
    const Tensor4 automatic = scaled_dot_product_attention(in.q, in.k, in.v, mask);
    EXPECT_EQ(std::memcmp(flash.data(), automatic.data(), flash.size() * sizeof(float)), 0);

    WantsOnly context_only(Stage::context);
    scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, &context_only);
    EXPECT_EQ(context_only.seen, 2u * 4u * 65u);  // every (batch, head) context still observed

    AttentionCache compact = AttentionCache::without_weights(), full;
    scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, nullptr, &compact);
    EXPECT_TRUE(compact.flash);
    EXPECT_EQ(compact.weights.size(), 0u);
    scaled_dot_product_attention(in.q, in.k, in.v, mask, {}, nullptr, &full);
    EXPECT_FALSE(full.flash);
    EXPECT_EQ(full.weights.size(), 2u * 4u * 65u * 65u);
    EXPECT_LT(compact.bytes(), full.bytes());

    // The backward takes whichever form the cache holds.
    const Tensor4 dctx = test::random_normal<Tensor4>({2, 4, 65, 32}, 4);
    Tensor4 dq_f, dk_f, dv_f, dq_m, dk_m, dv_m;
    scaled_dot_product_attention_backward(dctx, in.q, in.k, in.v, compact, {}, dq_f, dk_f, dv_f);
    scaled_dot_product_attention_backward(dctx, in.q, in.k, in.v, full, {}, dq_m, dk_m, dv_m);
    EXPECT_TRUE(test::all_close(dq_f, dq_m, 1e-4, 1e-4));
    EXPECT_TRUE(test::all_close(dk_f, dk_m, 1e-4, 1e-4));
    EXPECT_TRUE(test::all_close(dv_f, dv_m, 1e-4, 1e-4));
}

// With RoPE the heads are split (the rotation works on split heads); without it the flash path
// reads them in the projections' rows. Either way the results are the recorded path's.
class FlashMha : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Rope, FlashMha, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "rope_split_heads" : "no_rope_heads_in_rows"; });

TEST_P(FlashMha, MultiHeadAttentionTrainsThroughTheFlashCache) {
    MultiHeadAttentionConfig config;
    config.d_model = 32;
    config.num_heads = 4;
    config.num_kv_heads = 2;
    Rng rng(3);
    const MultiHeadAttention mha(config, rng);
    const Tensor3 x = test::random_normal<Tensor3>({2, 33, 32}, 1);
    const Tensor3 dout = test::random_normal<Tensor3>({2, 33, 32}, 2);
    AttentionOptions options;
    options.mask.causal = true;
    options.rope = GetParam();

    MultiHeadAttentionCache flash_cache, math_cache;
    math_cache.attention.need_weights = true;
    // The per-head stages an observer may watch without forcing the recorded path.
    TraceRecorder flash_trace({Stage::q, Stage::k, Stage::v, Stage::context});
    TraceRecorder math_trace({Stage::q, Stage::k, Stage::v, Stage::context});
    const Tensor3 y_flash = mha.forward(x, nullptr, options, &flash_trace, &flash_cache);
    const Tensor3 y_math = mha.forward(x, nullptr, options, &math_trace, &math_cache);
    EXPECT_TRUE(flash_cache.attention.flash);
    EXPECT_FALSE(math_cache.attention.flash);
    EXPECT_EQ(flash_cache.heads_in_rows, !options.rope);
    EXPECT_FALSE(math_cache.heads_in_rows);
    EXPECT_TRUE(test::all_close(y_flash, y_math, 1e-5));
    for (Stage stage : {Stage::q, Stage::k, Stage::v, Stage::context}) {
        const std::size_t heads = stage == Stage::q || stage == Stage::context ? 4 : 2;
        ASSERT_EQ(flash_trace.num_heads(stage), heads) << stage_name(stage);
        for (std::size_t b = 0; b < 2; ++b) {
            for (std::size_t h = 0; h < heads; ++h) {
                const Tensor2& got = flash_trace.get(stage, b, static_cast<std::ptrdiff_t>(h));
                const Tensor2& want = math_trace.get(stage, b, static_cast<std::ptrdiff_t>(h));
                EXPECT_TRUE(test::all_close(got, want, 1e-5)) << stage_name(stage) << " b " << b << " h " << h;
            }
        }
    }

    MultiHeadAttentionGrad g_flash(mha), g_math(mha);
    Tensor3 dx_flash, dx_math;
    mha.backward(dout, flash_cache, options, g_flash, dx_flash);
    mha.backward(dout, math_cache, options, g_math, dx_math);
    EXPECT_TRUE(test::all_close(dx_flash, dx_math, 1e-4, 1e-4));
    const auto a = g_flash.views(), b = g_math.views();
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_TRUE(test::all_close(a[i].data, b[i].data, {a[i].size()}, 1e-4, 1e-4)) << a[i].name;
    }
}

}  // namespace
}  // namespace attnlab
