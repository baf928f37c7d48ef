// FlashAttention forward and backward (attention/flash_attention.hpp).
//
// Legend: B batch, H query heads, Hkv key/value heads (group = H / Hkv query heads share one),
// T queries, S keys, D head dim of q and k, Dv head dim of v; br x bc one score tile
// (br <= flash_query_tile() query rows, bc <= kFlashKeyTile keys).
//
// The per-tile steps are ISA-dispatched SIMD kernels: score products and the forward's softmax
// and p·V on operands packed once per head (kernels/flash_tiles.hpp; the forward stores a score
// tile keys by queries), the backward's softmax step (kernels::flash_backward_tile,
// kernels/softmax.hpp) and its gradient products (the blocked matmul, which runs inline inside a
// pool task). When all keys fit one tile and no mask but the causal one applies, both
// directions run the fused one-tile kernels instead (kernels/flash_tiles.hpp: scores kept in
// registers, bit-identical).
// Everything else here is index arithmetic, masks and the split of work over threads.
#include "attnlab/attention/flash_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/flash_tiles.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "task_slots.hpp"

namespace attnlab {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2 = 0.693147180559945309f;
constexpr std::size_t BC = kFlashKeyTile;
static_assert(BC == kernels::kOneTileLd, "the fused one-tile kernels' p and ds are (BR, BC) tiles");

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

struct Dims {
    std::size_t batch, heads, kv_heads, group, t, s, d, dv;
    std::ptrdiff_t shift;  // S - T: query i sees keys j <= i + shift under the causal mask
};

// "(B, H, N, D)" of a view, for error messages.
std::string shape_of(const ConstHeadsView& x) {
    return "(" + std::to_string(x.batch) + ", " + std::to_string(x.heads) + ", " + std::to_string(x.n) + ", " +
           std::to_string(x.d) + ")";
}

// The shapes of a call, checked: k and v must match q (batch, head dimension) and each other,
// H a multiple of Hkv, the mask fit (B, T, S).
Dims validate(const ConstHeadsView& q, const ConstHeadsView& k, const ConstHeadsView& v, const AttentionMask& mask,
              const char* where) {
    if (k.batch != q.batch || k.d != q.d) {
        fail<ShapeError>(where, ": k (B, Hkv, S, D) must match q (B, H, T, D) = ", shape_of(q), ", got ", shape_of(k));
    }
    if (v.batch != k.batch || v.heads != k.heads || v.n != k.n) {
        fail<ShapeError>(where, ": v (B, Hkv, S, Dv) must match k ", shape_of(k), ", got ", shape_of(v));
    }
    if (k.heads == 0 || q.heads % k.heads != 0) {
        fail<ConfigError>(where, ": query heads (", q.heads, ") must be a multiple of key/value heads (", k.heads, ")");
    }
    mask.validate(q.batch, q.n, k.n, where);
    return Dims{q.batch, q.heads, k.heads, q.heads / k.heads, q.n, k.n, q.d, v.d,
                static_cast<std::ptrdiff_t>(k.n) - static_cast<std::ptrdiff_t>(q.n)};
}

// validate() on Tensor4s, with require_shape's messages for their shapes first.
Dims validate(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask, const char* where) {
    const auto batch = static_cast<std::ptrdiff_t>(q.shape(0)), d = static_cast<std::ptrdiff_t>(q.shape(3));
    require_shape(k, {batch, -1, -1, d}, where, "k (B, Hkv, S, D) matching q (B, H, T, D)");
    require_shape(v, {batch, static_cast<std::ptrdiff_t>(k.shape(1)), static_cast<std::ptrdiff_t>(k.shape(2)), -1},
                  where, "v (B, Hkv, S, Dv) matching k");
    return validate(heads_of(q), heads_of(k), heads_of(v), mask, where);
}

// Throws ShapeError unless x has the shape (batch, heads, n, d).
void require_heads(const ConstHeadsView& x, std::size_t batch, std::size_t heads, std::size_t n, std::size_t d,
                   const char* where, const char* what) {
    if (x.batch != batch || x.heads != heads || x.n != n || x.d != d) {
        fail<ShapeError>(where, ": ", what, " must be (", batch, ", ", heads, ", ", n, ", ", d, "), got ", shape_of(x));
    }
}

// Asks for the first cache line of each of `rows` rows ld floats apart (a head's rows of up to
// 16 floats are one line each) to be read into cache; a hint, never a fault. Not in
// WebAssembly, which has no prefetch.
void prefetch_rows(const float* x, std::size_t rows, std::size_t ld) {
#if defined(__wasm__)
    (void)x, (void)rows, (void)ld;
#else
    for (std::size_t r = 0; r < rows; ++r) __builtin_prefetch(x + r * ld);
#endif
}

// Zeroes rows [i0, i0 + rows) of head (b, h).
void zero_rows(const HeadsView& x, std::size_t b, std::size_t h, std::size_t i0, std::size_t rows) {
    for (std::size_t i = i0; i < i0 + rows; ++i) std::fill_n(x.row(b, h, i), x.d, 0.0f);
}

// Keys [0, key_end) can be visible to query rows [i0, i0 + rows): under the causal mask the
// last row sees keys <= i0 + rows - 1 + shift, so later key tiles are skipped whole.
std::size_t key_end(const Dims& dm, bool causal, std::size_t i0, std::size_t rows) {
    if (!causal) return dm.s;
    const std::ptrdiff_t last = static_cast<std::ptrdiff_t>(i0 + rows) + dm.shift;  // one past the last visible
    return static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(last, 0, static_cast<std::ptrdiff_t>(dm.s)));
}

// Whether the mask is none or the causal mask alone: what the fused one-tile kernels apply.
bool at_most_causal(const AttentionMask& mask) {
    return mask.window == 0 && mask.key_padding.size() == 0 && mask.explicit_mask.size() == 0;
}

// hide_from of the fused one-tile kernels for the query rows from i0 (kernels/flash_tiles.hpp):
// query i sees keys j <= i + shift under the causal mask.
std::ptrdiff_t causal_from(const AttentionMask& mask, const Dims& dm, std::size_t i0) {
    return mask.causal ? static_cast<std::ptrdiff_t>(i0) + dm.shift + 1 : kernels::kOneTileSeesAll;
}

// The first query row that can see key j0 under the causal mask (rows before it see none of the
// keys from j0 on, so their tiles are skipped whole in the dk/dv pass).
std::size_t query_begin(const Dims& dm, bool causal, std::size_t j0) {
    if (!causal) return 0;
    const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(j0) - dm.shift;
    return static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(first, 0, static_cast<std::ptrdiff_t>(dm.t)));
}

// True if the window (AttentionMask::window, global_tokens) hides every (query, key) pair of the
// tile rows [i0, i0 + rows) x keys [j0, j0 + cols): the tile holds no global row or key and lies
// wholly more than W positions before or after the rows' positions. Such a tile would add exactly
// nothing (p = 0, ds = 0), so it is skipped whole: with a window the useful work is O(T·W).
bool tile_outside_window(const AttentionMask& mask, const Dims& dm, std::size_t i0, std::size_t rows, std::size_t j0,
                         std::size_t cols) {
    if (mask.window == 0) return false;
    const auto g = static_cast<std::ptrdiff_t>(mask.global_tokens), w = static_cast<std::ptrdiff_t>(mask.window);
    const std::ptrdiff_t first_pos = static_cast<std::ptrdiff_t>(i0) + dm.shift;  // position of row i0
    const std::ptrdiff_t last_pos = first_pos + static_cast<std::ptrdiff_t>(rows) - 1;
    const auto first_key = static_cast<std::ptrdiff_t>(j0), last_key = first_key + static_cast<std::ptrdiff_t>(cols) - 1;
    if (first_pos < g || first_key < g) return false;
    return last_key < first_pos - w || first_key > last_pos + w;
}

// True if every key of [j0, j0 + cols) is padding in batch row b: the tile adds nothing and is
// skipped whole (p = 0, ds = 0), so padded keys cost no score work.
bool tile_all_padding(const AttentionMask& mask, const Dims& dm, std::size_t b, std::size_t j0, std::size_t cols) {
    if (mask.key_padding.size() == 0) return false;
    const std::uint8_t* pad = mask.key_padding.data() + b * dm.s + j0;
    for (std::size_t c = 0; c < cols; ++c) {
        if (!pad[c]) return false;
    }
    return true;
}

// True if the tile rows [i0, i0 + rows) x keys [j0, j0 + cols) of batch row b would add nothing
// under the mask and is skipped whole: wholly outside the window, or every key padding.
bool tile_skipped(const AttentionMask& mask, const Dims& dm, std::size_t b, std::size_t i0, std::size_t rows,
                  std::size_t j0, std::size_t cols) {
    return tile_outside_window(mask, dm, i0, rows, j0, cols) || tile_all_padding(mask, dm, b, j0, cols);
}

// True if no mask hides any (query, key) pair of the tile rows [i0, ...) x keys [j0, j0 + cols):
// under the causal mask the first row, i0, must see the tile's last key. What the forward's
// lazy-reference kernels need: they take the exponentials before a mask could be applied.
bool tile_unmasked(const AttentionMask& mask, const Dims& dm, std::size_t i0, std::size_t j0, std::size_t cols) {
    if (mask.window > 0 || mask.key_padding.size() > 0 || mask.explicit_mask.size() > 0) return false;
    return !mask.causal || static_cast<std::ptrdiff_t>(j0 + cols) <= static_cast<std::ptrdiff_t>(i0) + dm.shift + 1;
}

// The lazy reference of the forward (kernels::flash_scores_exp), in log2 units: a key tile whose
// scores exceed a query's reference m by at most kLazyMargin keeps m (its p are then <= 2^8, o
// and l need no rescale); by more, up to kLazyRescaleLimit, the query's p column is rescaled to
// the tile's max; further (or for a query with no reference yet, m = -inf) the tile is
// recomputed by the two-pass kernels. A reference below the max changes nothing but the
// intermediate scale: o/l and logsumexp = m + log2(l) (in log2 units) are the same.
constexpr float kLazyMargin = 8.0f;
constexpr float kLazyRescaleLimit = 64.0f;

// After flash_scores_exp on query rows [0, rows) (pt (cols, ldq) keys by queries): settles each
// row's reference m (row_max) and sum l (row_sum) with the tile's max and sum. Returns false,
// having changed nothing, if the tile must be recomputed (see kLazyRescaleLimit); else sets
// alpha[r], the factor o's row r must be rescaled by, and returns true, with *rescaled the
// number of rows whose factor differs from 1.
bool settle_lazy_tile(float* pt, std::size_t rows, std::size_t cols, std::size_t ldq, float* row_max,
                      float* row_sum, const float* tile_max, const float* tile_sum, float* alpha,
                      std::size_t* rescaled) {
    for (std::size_t r = 0; r < rows; ++r) {
        if (!(tile_max[r] - row_max[r] <= kLazyRescaleLimit)) return false;  // also NaN and m = -inf
    }
    *rescaled = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        if (tile_max[r] - row_max[r] <= kLazyMargin) {
            row_sum[r] += tile_sum[r];
            alpha[r] = 1.0f;
            continue;
        }
        // p = 2^(t - m) -> 2^(t - m'), m' the tile's max; o and l likewise.
        const float c = std::exp2(row_max[r] - tile_max[r]);
        for (std::size_t j = 0; j < cols; ++j) pt[j * ldq + r] *= c;
        row_sum[r] = c * (row_sum[r] + tile_sum[r]);
        row_max[r] = tile_max[r];
        alpha[r] = c;
        ++*rescaled;
    }
    return true;
}

// How a score tile is stored: queries by keys, tile[r·ld + c] (the backward, and the forward
// when all keys fit one tile), or keys by queries, tile[c·ld + r] (the forward's tiles,
// flash_softmax_pv_columns).
enum class TileLayout { queries_by_keys, keys_by_queries };

// Sets masked entries of the score tile of queries i0 + r (r < rows) and keys j0 + c (c < cols)
// of batch row b to -inf, as AttentionMask::apply does for the whole (T, S) matrix. Layout:
// see TileLayout (ld is the stride between the tile's stored rows).
template <TileLayout Layout>
void mask_tile(const AttentionMask& mask, const Dims& dm, std::size_t b, std::size_t i0, std::size_t rows,
               std::size_t j0, std::size_t cols, float* tile, std::size_t ld) {
    // Score of query r, key c (the layout is a compile-time choice, so the queries-by-keys loops
    // below stay contiguous and vectorise).
    const auto at = [&](std::size_t r, std::size_t c) -> float& {
        return Layout == TileLayout::queries_by_keys ? tile[r * ld + c] : tile[c * ld + r];
    };
    const std::uint8_t* pad = mask.key_padding.size() > 0 ? mask.key_padding.data() + b * dm.s + j0 : nullptr;
    const bool explicit_mask = mask.explicit_mask.size() > 0;
    for (std::size_t r = 0; r < rows; ++r) {
        if (mask.causal) {
            // Keys j > i + shift are in the future of query i.
            const std::ptrdiff_t first_hidden = static_cast<std::ptrdiff_t>(i0 + r) + dm.shift + 1;
            const std::ptrdiff_t from = std::max<std::ptrdiff_t>(first_hidden - static_cast<std::ptrdiff_t>(j0), 0);
            for (auto c = static_cast<std::size_t>(from); c < cols; ++c) at(r, c) = kNegInf;
        }
        if (mask.window > 0) {
            // AttentionMask::outside_window as two ranges per row: keys j >= G with
            // j < pos - W or j > pos + W are hidden, unless the row's position is global (< G).
            const std::ptrdiff_t pos = static_cast<std::ptrdiff_t>(i0 + r) + dm.shift;
            const auto g = static_cast<std::ptrdiff_t>(mask.global_tokens), w = static_cast<std::ptrdiff_t>(mask.window);
            if (pos >= g) {
                const auto first = static_cast<std::ptrdiff_t>(j0), end = first + static_cast<std::ptrdiff_t>(cols);
                const auto hide = [&](std::ptrdiff_t lo, std::ptrdiff_t hi) {  // keys [lo, hi)
                    lo = std::max({lo, g, first});
                    hi = std::min(hi, end);
                    for (std::ptrdiff_t j = lo; j < hi; ++j) at(r, static_cast<std::size_t>(j - first)) = kNegInf;
                };
                hide(0, pos - w);
                hide(pos + w + 1, end);
            }
        }
        // Branch-free selects (the compiler vectorises them): a branch per key mispredicts on
        // every boundary and cost more than the tile's products.
        if (pad) {
            for (std::size_t c = 0; c < cols; ++c) at(r, c) = pad[c] ? kNegInf : at(r, c);
        }
        if (explicit_mask) {
            const std::uint8_t* em = mask.explicit_mask.data() + (i0 + r) * dm.s + j0;
            for (std::size_t c = 0; c < cols; ++c) at(r, c) = em[c] ? kNegInf : at(r, c);
        }
    }
}

// The forward's lazy-reference tiles over all threads of one call (FlashAttentionStats), added
// once per task.
struct LazyTileCounts {
    std::atomic<std::size_t> tiles{0}, rescaled_rows{0}, recomputed_tiles{0};
};

// Counts tile scratch alive at once over all threads of one call (FlashAttentionStats).
class ScratchMeter {
public:
    void acquire(std::size_t bytes) {
        const std::size_t now = live_.fetch_add(bytes) + bytes;
        std::size_t peak = peak_.load();
        while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
        }
    }
    void release(std::size_t bytes) { live_.fetch_sub(bytes); }
    std::size_t peak() const { return peak_.load(); }

private:
    std::atomic<std::size_t> live_{0}, peak_{0};
};

enum : int { kTileBuffer = kFlashBuffers, kPackedBuffer, kDeltaBuffer };
using TileSlots = TaskSlots<kTileBuffer>;

// The backward's K (B, Hkv, S, D) and V (B, Hkv, S, Dv) of every (batch, kv head), packed once
// as strips (kernels/flash_tiles.hpp) in parallel: head bk's keys at packed + bk·(kp_size +
// vp_size), its values kp_size floats later (s = q·kᵀ and dp = dO·vᵀ are both flash_scores
// products). The buffer is the calling thread's, grow-only; workers only read it.
float* pack_keys_values(const ConstHeadsView& k, const ConstHeadsView& v, const Dims& dm, std::size_t kp_size,
                        std::size_t vp_size) {
    float* const packed = thread_buffer<kPackedBuffer>(dm.batch * dm.kv_heads * (kp_size + vp_size));
    parallel_for(0, dm.batch * dm.kv_heads, [&](std::size_t begin, std::size_t end) {
        for (std::size_t bk = begin; bk < end; ++bk) {
            const std::size_t b = bk / dm.kv_heads, hk = bk % dm.kv_heads;
            float* kp = packed + bk * (kp_size + vp_size);
            kernels::flash_pack_strips(k.head(b, hk), dm.s, dm.d, k.row_stride, 1.0f, kp);
            kernels::flash_pack_strips(v.head(b, hk), dm.s, dm.dv, v.row_stride, 1.0f, kp + kp_size);
        }
    });
    return packed;
}

// Floats of packing scratch the tile products need: B panels of (N <= BC, K <= max(D, Dv)) or
// (N <= max(D, Dv), K <= BC).
std::size_t tile_matmul_floats(const Dims& dm) {
    const std::size_t w = std::max(dm.d, dm.dv);
    return std::max(kernels::matmul_scratch_floats(BC, w), kernels::matmul_scratch_floats(w, BC));
}

// One task's tile buffers (its thread's slot), counted by the meter while in use.
class TileScratch {
public:
    TileScratch(ScratchMeter& meter, const TileSlots& slots)
        : meter_(meter), bytes_(slots.floats() * sizeof(float)), data_(slots.slot()),
          matmul_(data_ + slots.tile_floats()) {
        meter_.acquire(bytes_);
    }
    ~TileScratch() { meter_.release(bytes_); }
    TileScratch(const TileScratch&) = delete;
    TileScratch& operator=(const TileScratch&) = delete;
    float* data() { return data_; }
    // Packing scratch for the task's matmul calls.
    float* matmul() { return matmul_; }

private:
    ScratchMeter& meter_;
    std::size_t bytes_;
    float* data_;
    float* matmul_;
};

}  // namespace

std::size_t flash_query_tile() {
    const std::size_t strip = kernels::flash_strip();
    return ceil_div(kFlashQueryRows, strip) * strip;
}

Tensor4 flash_attention_forward(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                                const ScaleOptions& scale, Tensor3* logsumexp, FlashAttentionStats* stats) {
    Tensor4 context;
    flash_attention_forward(q, k, v, mask, scale, logsumexp, stats, context);
    return context;
}

void flash_attention_forward(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                             const ScaleOptions& scale, Tensor3* logsumexp, FlashAttentionStats* stats,
                             Tensor4& context, Tensor2* one_tile_weights) {
    constexpr const char* where = "flash_attention_forward";
    const Dims dm = validate(q, k, v, mask, where);
    require_allocatable({dm.batch, dm.heads, dm.t, dm.dv}, where, "the context");
    // resize keeps the buffer when the shape is unchanged (a training loop's steps).
    context.resize({dm.batch, dm.heads, dm.t, dm.dv});
    flash_attention_forward(heads_of(q), heads_of(k), heads_of(v), mask, scale, logsumexp, stats, heads_of(context),
                            one_tile_weights);
}

void flash_attention_forward(const ConstHeadsView& q, const ConstHeadsView& k, const ConstHeadsView& v,
                             const AttentionMask& mask, const ScaleOptions& scale, Tensor3* logsumexp,
                             FlashAttentionStats* stats, const HeadsView& context, Tensor2* one_tile_weights) {
    constexpr const char* where = "flash_attention_forward";
    const Dims dm = validate(q, k, v, mask, where);
    require_heads(context, dm.batch, dm.heads, dm.t, dm.dv, where, "context (B, H, T, Dv)");
    const std::size_t BR = flash_query_tile();
    const float factor = scale.effective(dm.d);
    const float factor2 = factor * kLog2e;  // scores in log2 units for the base-2 online softmax
    // Rows apart of each operand's rows (D or Dv for split heads, H·D for heads in rows).
    const std::size_t lq = q.row_stride, lk = k.row_stride, lv = v.row_stride, lo = context.row_stride;
    // (B, H, T, Dv): every row is written by exactly one task below (rows that see no key get
    // zeros there), so no zero fill first, unless there are no keys at all.
    if (dm.s == 0) {
        for (std::size_t b = 0; b < dm.batch; ++b)
            for (std::size_t h = 0; h < dm.heads; ++h) zero_rows(context, b, h, 0, dm.t);
    }
    if (logsumexp) logsumexp->resize({dm.batch, dm.heads, dm.t});
    const std::size_t q_tiles = ceil_div(dm.t, BR);
    const bool single_tile = dm.s <= BC;
    ScratchMeter meter;
    LazyTileCounts lazy_counts;

    // Keys and values of every (batch, kv head), packed once for the tile kernels
    // (kernels/flash_tiles.hpp): linear in S, shared by all query tiles and query heads. The
    // score tiles are stored keys by queries (flash_softmax_pv_columns), so here the keys are
    // the broadcast operand: each key tile packed as groups of flash_group() keys.
    const std::size_t strip = kernels::flash_strip();
    const std::size_t k_tiles = ceil_div(dm.s, BC);
    const std::size_t kg_tile = kernels::flash_groups_size(BC, dm.d);  // floats per packed key tile
    const std::size_t kp_size = single_tile ? 0 : k_tiles * kg_tile;
    const std::size_t dp = kernels::flash_padded_value_dim(dm.dv);
    // Values whose rows are already a whole number of strips are read in place: packing would
    // copy them unchanged.
    const bool values_in_place = dp == dm.dv;
    const std::size_t vp_size = single_tile || values_in_place ? 0 : dm.s * dp;
    const std::size_t heads_kv = dm.batch * dm.kv_heads;
    require_allocatable({heads_kv, kp_size + vp_size}, where, "the packed keys and values");
    const std::size_t packed_floats = heads_kv * (kp_size + vp_size);
    float* const packed = single_tile ? nullptr : thread_buffer<kPackedBuffer>(packed_floats);
    if (!single_tile) {
        parallel_for(0, heads_kv * k_tiles, [&](std::size_t begin, std::size_t end) {
            for (std::size_t task = begin; task < end; ++task) {
                const std::size_t bk = task / k_tiles, j0 = (task % k_tiles) * BC;
                const std::size_t b = bk / dm.kv_heads, hk = bk % dm.kv_heads;
                const std::size_t cols = std::min(BC, dm.s - j0);
                float* kp = packed + bk * (kp_size + vp_size);
                kernels::flash_pack_groups(k.row(b, hk, j0), cols, dm.d, lk, 1.0f, kp + (j0 / BC) * kg_tile);
                if (vp_size > 0) kernels::flash_pack_values(v.row(b, hk, j0), cols, dm.dv, lv, kp + kp_size + j0 * dp);
            }
        });
    }

    // One task per (batch, head, query tile); each owns its rows of context and logsumexp.
    const std::size_t ldq_max = ceil_div(BR, strip) * strip;  // queries of a score tile, padded
    const std::size_t qs_size = kernels::flash_strips_size(BR, dm.d);
    // One key tile, no mask but a causal one, keys and dv the fused kernels take: scores in
    // registers (kernels::one_tile_softmax) on a Kᵀ transposed per task, p·V by one_tile_product.
    const bool fused = single_tile && at_most_causal(mask) && kernels::one_tile_fits(dm.s, dm.dv);
    // Key tiles after the first, unmasked, by the lazy-reference kernels where the table prefers them.
    const bool lazy = kernels::flash_lazy_exp();
    const std::size_t kt_size = fused ? dm.d * dm.s : 0;
    // The weights kept for the backward (one_tile_weights): the fused path writes p there.
    float* kept_weights = nullptr;
    if (one_tile_weights) {
        if (fused) {
            require_allocatable({dm.batch * dm.heads * dm.t, kernels::kOneTileLd}, where, "the one-tile weights");
            one_tile_weights->resize({dm.batch * dm.heads * dm.t, kernels::kOneTileLd});
            kept_weights = one_tile_weights->data();
        } else {
            one_tile_weights->resize({0, kernels::kOneTileLd});
        }
    }
    const std::size_t row_stats = (lazy ? 5 : 3) * ldq_max;  // m, l, alpha (+ the lazy path's tile max, sum)
    const TileSlots tiles(std::max(BC * ldq_max, BR * BC) + BR * dp + qs_size + row_stats + kt_size,
                          tile_matmul_floats(dm));
    parallel_for(0, dm.batch * dm.heads * q_tiles, [&](std::size_t begin, std::size_t end) {
        TileScratch scratch(meter, tiles);
        std::size_t lazy_tiles = 0, lazy_rescaled_rows = 0, lazy_recomputed = 0;  // this task's counts
        // (bc, ldq) scores stored keys by queries, then probabilities; or, with one key tile,
        // (br, bc) scores by rows
        float* s_tile = scratch.data();
        float* o_acc = s_tile + std::max(BC * ldq_max, BR * BC);  // (br, Dp) unnormalised output
        float* qs = o_acc + BR * dp;        // (ldq, D) queries packed as strips, times scale·log2(e)
        // (ldq) m: running max of the scaled scores (after lazy tiles: at most kLazyMargin below it)
        float* row_max = qs + qs_size;
        float* row_sum = row_max + ldq_max;  // (ldq) l: running sum of exp(scaled - m)
        float* rescale = row_sum + ldq_max;  // (ldq) exp(m_old - m_new) of the last tile
        float* tile_max = rescale + ldq_max;  // (ldq) the lazy path's max of the tile's scores
        float* tile_sum = tile_max + ldq_max;  // (ldq) and its sum of p
        float* kt = row_max + row_stats;     // (D, S) Kᵀ of the head, for the fused path
        // logsumexp = m + log(l), -inf for rows that saw no key.
        const auto write_logsumexp = [&](std::size_t bh, std::size_t i0, std::size_t rows) {
            if (!logsumexp) return;
            for (std::size_t r = 0; r < rows; ++r) {
                logsumexp->data()[bh * dm.t + i0 + r] =
                    row_sum[r] == 0.0f ? kNegInf : row_max[r] + std::log(row_sum[r]);
            }
        };
        for (std::size_t task = begin; task < end; ++task) {
            const std::size_t bh = task / q_tiles, i0 = (task % q_tiles) * BR;
            const std::size_t b = bh / dm.heads, h = bh % dm.heads, hk = h / dm.group;
            const std::size_t rows = std::min(BR, dm.t - i0);
            const float* qi = q.row(b, h, i0);  // (br, D) with lq
            const float* kh = k.head(b, hk);    // (S, D) with lk
            const float* vh = v.head(b, hk);    // (S, Dv) with lv
            float* oi = context.row(b, h, i0);  // (br, Dv) with lo

            if (fused) {
                // The same operations as below, fused (kernels/flash_tiles.hpp): bit-identical.
                float* p = kept_weights ? kept_weights + (bh * dm.t + i0) * kernels::kOneTileLd : s_tile;
                kernels::one_tile_transpose(kh, dm.s, dm.d, lk, kt);
                kernels::one_tile_softmax(qi, lq, rows, dm.d, kt, dm.s, factor, causal_from(mask, dm, i0), p, row_max,
                                          row_sum);
                kernels::one_tile_product(false, p, rows, dm.s, vh, lv, dm.dv, oi, lo, false);
                write_logsumexp(bh, i0, rows);
                continue;
            }
            if (single_tile) {
                // All keys in one tile: plain softmax (normalise p, then p·v), the very operations
                // of the recorded path in the same order, so the results are bit-identical to it.
                kernels::matmul_nt(qi, lq, kh, lk, s_tile, BC, rows, dm.s, dm.d, Accumulate::no, nullptr,
                                   scratch.matmul());
                if (mask.any()) mask_tile<TileLayout::queries_by_keys>(mask, dm, b, i0, rows, 0, dm.s, s_tile, BC);
                kernels::softmax_tile(s_tile, rows, dm.s, BC, factor, row_max, row_sum);
                kernels::matmul_nn(s_tile, BC, vh, lv, oi, lo, rows, dm.dv, dm.s, Accumulate::no, nullptr,
                                   scratch.matmul());
                write_logsumexp(bh, i0, rows);
                continue;
            }
            const float* kp = packed + (b * dm.kv_heads + hk) * (kp_size + vp_size);  // packed key tiles
            const float* vp = values_in_place ? vh : kp + kp_size;  // (S, Dp) with ldv
            const std::size_t ldv = values_in_place ? lv : dp;
            const std::size_t q_strips = ceil_div(rows, strip), ldq = q_strips * strip;
            std::fill(row_max, row_max + ldq, kNegInf);
            std::fill(row_sum, row_sum + ldq, 0.0f);
            std::fill(o_acc, o_acc + rows * dp, 0.0f);
            kernels::flash_pack_strips(qi, rows, dm.d, lq, factor2, qs);
            const std::size_t j_end = key_end(dm, mask.causal, i0, rows);
            bool have_reference = false;  // a key tile has set row_max
            for (std::size_t j0 = 0; j0 < j_end; j0 += BC) {
                const std::size_t cols = std::min(BC, j_end - j0);
                if (tile_skipped(mask, dm, b, i0, rows, j0, cols)) continue;
                const float* kg = kp + (j0 / BC) * kg_tile;  // the key tile, packed as groups
                const float* vj = vp + j0 * ldv;
                if (lazy && have_reference && tile_unmasked(mask, dm, i0, j0, cols)) {
                    // pᵀ = 2^(k_j · q_iᵀ - m) against the previous tiles' reference m, then settled.
                    std::fill(tile_max, tile_max + ldq, kNegInf);
                    std::fill(tile_sum, tile_sum + ldq, 0.0f);
                    kernels::flash_scores_exp(kg, cols, dm.d, qs, q_strips, s_tile, ldq, row_max, tile_max, tile_sum);
                    std::size_t rescaled = 0;
                    if (settle_lazy_tile(s_tile, rows, cols, ldq, row_max, row_sum, tile_max, tile_sum, rescale,
                                         &rescaled)) {
                        kernels::flash_pv_columns(s_tile, rows, cols, ldq, vj, ldv, dp, o_acc,
                                                  rescaled > 0 ? rescale : nullptr);
                        ++lazy_tiles;
                        lazy_rescaled_rows += rescaled;
                        continue;
                    }
                    ++lazy_tiles;
                    ++lazy_recomputed;
                }
                // sᵀ = k_j · q_iᵀ (cols, ldq), masked
                kernels::flash_scores(kg, cols, dm.d, qs, q_strips, s_tile, ldq);
                if (mask.any()) mask_tile<TileLayout::keys_by_queries>(mask, dm, b, i0, rows, j0, cols, s_tile, ldq);
                // p = 2^(t - m'), l and m updated (base 2), o rescaled by 2^(m - m'), o += p · v_j
                kernels::flash_softmax_pv_columns(s_tile, rows, cols, ldq, vj, ldv, dp, o_acc, row_max, row_sum,
                                                  rescale);
                have_reference = true;
            }
            // o /= l. Rows that saw no key keep o = 0.
            for (std::size_t r = 0; r < rows; ++r) {
                const float inv = row_sum[r] == 0.0f ? 0.0f : 1.0f / row_sum[r];
                const float* o = o_acc + r * dp;
                float* out = oi + r * lo;
                for (std::size_t c = 0; c < dm.dv; ++c) out[c] = o[c] * inv;
            }
            // logsumexp in natural units: ln 2 · m₂ + ln l.
            for (std::size_t r = 0; r < rows; ++r) row_max[r] *= kLn2;
            write_logsumexp(bh, i0, rows);
        }
        lazy_counts.tiles += lazy_tiles;
        lazy_counts.rescaled_rows += lazy_rescaled_rows;
        lazy_counts.recomputed_tiles += lazy_recomputed;
    });
    if (stats) {
        stats->peak_scratch_bytes = meter.peak();
        stats->row_stat_bytes = logsumexp ? logsumexp->size() * sizeof(float) : 0;
        stats->packed_bytes = packed_floats * sizeof(float);
        stats->lazy_tiles = lazy_counts.tiles.load();
        stats->lazy_rescaled_rows = lazy_counts.rescaled_rows.load();
        stats->lazy_recomputed_tiles = lazy_counts.recomputed_tiles.load();
    }
}

void flash_attention_backward(const Tensor4& dcontext, const Tensor4& q, const Tensor4& k, const Tensor4& v,
                              const Tensor4& context, const Tensor3& logsumexp, const AttentionMask& mask,
                              const ScaleOptions& scale, Tensor4& dq, Tensor4& dk, Tensor4& dv,
                              FlashAttentionStats* stats, const Tensor2* one_tile_weights) {
    constexpr const char* where = "flash_attention_backward";
    const Dims dm = validate(q, k, v, mask, where);
    const ShapeSpec out_spec = {static_cast<std::ptrdiff_t>(dm.batch), static_cast<std::ptrdiff_t>(dm.heads),
                                static_cast<std::ptrdiff_t>(dm.t), static_cast<std::ptrdiff_t>(dm.dv)};
    require_shape(dcontext, out_spec, where, "dcontext (B, H, T, Dv)");
    require_shape(context, out_spec, where, "context (B, H, T, Dv) from the forward call");
    require_shape(logsumexp,
                  {static_cast<std::ptrdiff_t>(dm.batch), static_cast<std::ptrdiff_t>(dm.heads),
                   static_cast<std::ptrdiff_t>(dm.t)},
                  where, "logsumexp (B, H, T) from the forward call");
    dq.resize(q.shape());
    dk.resize(k.shape());
    dv.resize(v.shape());
    flash_attention_backward(heads_of(dcontext), heads_of(q), heads_of(k), heads_of(v), heads_of(context), logsumexp,
                             mask, scale, heads_of(dq), heads_of(dk), heads_of(dv), stats, one_tile_weights);
}

void flash_attention_backward(const ConstHeadsView& dcontext, const ConstHeadsView& q, const ConstHeadsView& k,
                              const ConstHeadsView& v, const ConstHeadsView& context, const Tensor3& logsumexp,
                              const AttentionMask& mask, const ScaleOptions& scale, const HeadsView& dq,
                              const HeadsView& dk, const HeadsView& dv, FlashAttentionStats* stats,
                              const Tensor2* one_tile_weights) {
    constexpr const char* where = "flash_attention_backward";
    const Dims dm = validate(q, k, v, mask, where);
    const std::size_t BR = flash_query_tile();
    require_heads(dcontext, dm.batch, dm.heads, dm.t, dm.dv, where, "dcontext (B, H, T, Dv)");
    require_heads(context, dm.batch, dm.heads, dm.t, dm.dv, where, "context (B, H, T, Dv) from the forward call");
    require_shape(logsumexp,
                  {static_cast<std::ptrdiff_t>(dm.batch), static_cast<std::ptrdiff_t>(dm.heads),
                   static_cast<std::ptrdiff_t>(dm.t)},
                  where, "logsumexp (B, H, T) from the forward call");
    require_heads(dq, dm.batch, dm.heads, dm.t, dm.d, where, "dq (B, H, T, D)");
    require_heads(dk, dm.batch, dm.kv_heads, dm.s, dm.d, where, "dk (B, Hkv, S, D)");
    require_heads(dv, dm.batch, dm.kv_heads, dm.s, dm.dv, where, "dv (B, Hkv, S, Dv)");
    const float factor = scale.effective(dm.d);
    // Rows apart of each operand's rows (D or Dv for split heads, H·D for heads in rows).
    const std::size_t lq = q.row_stride, lk = k.row_stride, lv = v.row_stride, ldo = dcontext.row_stride;
    const std::size_t ldq = dq.row_stride, ldk = dk.row_stride, ldv = dv.row_stride;
    // dq, dk, dv are not zero-filled: each task below overwrites the rows it owns with its first
    // tile's product and adds the others (in parallel, while they are in cache), and zeroes
    // only rows that no tile reaches.

    // delta = rowsum(dO ⊙ O) (B, H, T): Σ_j p_j·dp_j of the softmax Jacobian, since
    // Σ_j p_j (dO · v_j) = dO · Σ_j p_j v_j = dO · O.
    const std::size_t delta_size = dm.batch * dm.heads * dm.t;
    float* const delta = thread_buffer<kDeltaBuffer>(delta_size);
    parallel_for(
        0, dm.batch * dm.heads,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t bh = begin; bh < end; ++bh) {
                const std::size_t b = bh / dm.heads, h = bh % dm.heads;
                // A SIMD kernel, 4 rows at a time (as a scalar loop with 8 partial sums per row
                // it was 6% of the one-tile backward at Dv = 16).
                if (dm.t > 0) {
                    kernels::flash_row_dots(dcontext.row(b, h, 0), dcontext.row_stride, context.row(b, h, 0),
                                            context.row_stride, dm.t, dm.dv, delta + bh * dm.t);
                }
            }
        },
        std::max<std::size_t>(1, 1024 / std::max<std::size_t>(dm.t, 1)));
    const float* lse = logsumexp.data();
    ScratchMeter meter;

    // With several key tiles: keys, and values laid out like keys, of every (batch, kv head),
    // packed once for the tile kernels (s = q·kᵀ and dp = dO·vᵀ are both flash_scores products,
    // each packed operand used by many tiles). When all keys fit one tile, each (query tile, key
    // tile) pair is visited once: s and dp are then matmul_nt products of q, dO, k, v read in
    // place, which pack only kᵀ and vᵀ (no packed queries either). Measured at the tiny
    // encoder's shape (B = 32, H = 4, T = S = 64, D = 16, heads in rows, 1 thread): backward
    // 1047 -> 918 µs.
    const std::size_t k_tiles = ceil_div(dm.s, BC);
    const bool dq_here = k_tiles <= 1;
    const std::size_t strip = kernels::flash_strip();
    const std::size_t kp_size = dq_here ? 0 : kernels::flash_strips_size(dm.s, dm.d);
    const std::size_t vkp_size = dq_here ? 0 : kernels::flash_strips_size(dm.s, dm.dv);
    const std::size_t heads_kv = dm.batch * dm.kv_heads;
    require_allocatable({heads_kv, kp_size + vkp_size}, where, "the packed keys and values");
    const std::size_t packed_floats = heads_kv * (kp_size + vkp_size);
    const float* const packed = dq_here ? nullptr : pack_keys_values(k, v, dm, kp_size, vkp_size);
    // Packed queries and output gradients, per tile: only with several key tiles.
    const std::size_t qp_size = dq_here ? 0 : kernels::flash_groups_size(BR, dm.d);
    const std::size_t dop_size = dq_here ? 0 : kernels::flash_groups_size(BR, dm.dv);
    // One key tile, no mask but a causal one, keys, d and dv the fused kernels take: s and dp in
    // registers (kernels::one_tile_backward) on Kᵀ and Vᵀ transposed per task, the gradient
    // products by one_tile_product. Bit-identical to the products below.
    const bool fused = dq_here && at_most_causal(mask) && kernels::one_tile_fits(dm.s, dm.d) &&
                       kernels::one_tile_fits(dm.s, dm.dv);
    const std::size_t kvt_size = fused ? (dm.d + dm.dv) * dm.s : 0;
    // The forward's weights, when it kept them (one_tile_weights): p is then read, not
    // recomputed from q·kᵀ (no Kᵀ needed).
    const float* const kept_weights =
        fused && one_tile_weights && one_tile_weights->shape(0) == dm.batch * dm.heads * dm.t &&
                one_tile_weights->shape(1) == kernels::kOneTileLd
            ? one_tile_weights->data()
            : nullptr;
    const TileSlots tiles(2 * BR * BC + qp_size + dop_size + kvt_size, tile_matmul_floats(dm));

    // dk, dv: one task per (batch, kv head, key tile), which owns those rows of dk and dv; it
    // visits the query heads of its group and their query tiles in order. When all keys fit one
    // tile, each (query tile, key tile) pair is visited exactly once, by this pass, so it also
    // writes dq_i = ds·k there and the dq pass below (which would recompute s and dp) is skipped.
    if (k_tiles == 0) {  // no keys: no task owns dq
        for (std::size_t b = 0; b < dm.batch; ++b)
            for (std::size_t h = 0; h < dm.heads; ++h) zero_rows(dq, b, h, 0, dm.t);
    }
    parallel_for(0, dm.batch * dm.kv_heads * k_tiles, [&](std::size_t begin, std::size_t end) {
        TileScratch scratch(meter, tiles);
        float* p = scratch.data();  // (br, bc) scores, then probabilities
        float* ds = p + BR * BC;    // (br, bc) dO·vᵀ, then the score gradient
        float* qp = ds + BR * BC;   // (br, D) packed queries
        float* dop = qp + qp_size;  // (br, Dv) packed output gradients
        float* kt = dop + dop_size;  // (D, S) Kᵀ and (Dv, S) Vᵀ of the head, for the fused path
        float* vt = kt + dm.d * dm.s;
        for (std::size_t task = begin; task < end; ++task) {
            const std::size_t bk = task / k_tiles, j0 = (task % k_tiles) * BC;
            const std::size_t b = bk / dm.kv_heads, hk = bk % dm.kv_heads;
            const std::size_t cols = std::min(BC, dm.s - j0);
            float* dkj = dk.row(b, hk, j0);  // (bc, D) with ldk
            float* dvj = dv.row(b, hk, j0);  // (bc, Dv) with ldv
            if (fused && task + 1 < end) {
                // The next task's keys, values and first queries, read since the forward: asked
                // for now, they arrive while this task computes (tiny encoder, 1 thread: the
                // one-tile backward kernels 20.0% -> 19.5% of the training step, profile).
                const std::size_t bk_next = (task + 1) / k_tiles, j_next = ((task + 1) % k_tiles) * BC;
                const std::size_t b_next = bk_next / dm.kv_heads, hk_next = bk_next % dm.kv_heads;
                const std::size_t cols_next = std::min(BC, dm.s - j_next);
                prefetch_rows(k.row(b_next, hk_next, j_next), cols_next, lk);
                prefetch_rows(v.row(b_next, hk_next, j_next), cols_next, lv);
                prefetch_rows(q.row(b_next, hk_next * dm.group, 0), std::min(BR, dm.t), lq);
            }
            if (fused) {
                if (!kept_weights) kernels::one_tile_transpose(k.row(b, hk, j0), cols, dm.d, lk, kt);
                kernels::one_tile_transpose(v.row(b, hk, j0), cols, dm.dv, lv, vt);
            }
            // The first tile's products overwrite dk_j and dv_j (0 + x is x), later ones add;
            // rows no tile reaches are zeroed. With dq here, each query tile's dq_i is one
            // product (the only key tile), so it overwrites too.
            Accumulate dkv_acc = Accumulate::no;
            const std::size_t first_row = query_begin(dm, mask.causal, j0) / BR * BR;
            for (std::size_t g = 0; g < dm.group; ++g) {
                const std::size_t h = hk * dm.group + g, bh = b * dm.heads + h;
                if (dq_here) zero_rows(dq, b, h, 0, first_row);  // rows that see no key
                for (std::size_t i0 = first_row; i0 < dm.t; i0 += BR) {
                    const std::size_t rows = std::min(BR, dm.t - i0);
                    if (tile_skipped(mask, dm, b, i0, rows, j0, cols)) {
                        if (dq_here) zero_rows(dq, b, h, i0, rows);
                        continue;
                    }
                    const float* qi = q.row(b, h, i0);          // (br, D) with lq
                    const float* doi = dcontext.row(b, h, i0);  // (br, Dv) with ldo
                    if (fused) {  // the steps below, fused (kernels/flash_tiles.hpp)
                        const float* pi = p;
                        if (kept_weights) {
                            pi = kept_weights + (bh * dm.t + i0) * kernels::kOneTileLd;
                            kernels::one_tile_backward_from_weights(doi, ldo, rows, dm.dv, vt, cols, factor,
                                                                    lse + bh * dm.t + i0, delta + bh * dm.t + i0, pi,
                                                                    ds);
                        } else {
                            kernels::one_tile_backward(qi, lq, doi, ldo, rows, dm.d, dm.dv, kt, vt, cols, factor,
                                                       causal_from(mask, dm, i0), lse + bh * dm.t + i0,
                                                       delta + bh * dm.t + i0, p, ds);
                        }
                        const bool add = dkv_acc == Accumulate::yes;
                        kernels::one_tile_product(true, pi, cols, rows, doi, ldo, dm.dv, dvj, ldv, add);
                        kernels::one_tile_product(true, ds, cols, rows, qi, lq, dm.d, dkj, ldk, add);
                        kernels::one_tile_product(false, ds, rows, cols, k.row(b, hk, j0), lk, dm.d, dq.row(b, h, i0),
                                                  ldq, false);
                        dkv_acc = Accumulate::yes;
                        continue;
                    }
                    // s = q_i·k_jᵀ (masked); dp = dO_i·v_jᵀ
                    if (dq_here) {
                        kernels::matmul_nt(qi, lq, k.row(b, hk, j0), lk, p, BC, rows, cols, dm.d, Accumulate::no,
                                           nullptr, scratch.matmul());
                        kernels::matmul_nt(doi, ldo, v.row(b, hk, j0), lv, ds, BC, rows, cols, dm.dv,
                                           Accumulate::no, nullptr, scratch.matmul());
                    } else {
                        const float* kp = packed + bk * (kp_size + vkp_size);
                        kernels::flash_pack_groups(qi, rows, dm.d, lq, 1.0f, qp);
                        kernels::flash_pack_groups(doi, rows, dm.dv, ldo, 1.0f, dop);
                        kernels::flash_scores(qp, rows, dm.d, kp + j0 * dm.d, ceil_div(cols, strip), p, BC);
                        kernels::flash_scores(dop, rows, dm.dv, kp + kp_size + j0 * dm.dv, ceil_div(cols, strip), ds,
                                              BC);
                    }
                    if (mask.any()) mask_tile<TileLayout::queries_by_keys>(mask, dm, b, i0, rows, j0, cols, p, BC);
                    // p = exp(s·scale - lse), ds = p ⊙ (dp - delta)·scale
                    kernels::flash_backward_tile(p, ds, rows, cols, BC, factor, lse + bh * dm.t + i0,
                                                 delta + bh * dm.t + i0);
                    // context = p·v  =>  dv_j += pᵀ·dO_i;  scores = q·kᵀ  =>  dk_j += dsᵀ·q_i
                    kernels::matmul_tn(p, BC, doi, ldo, dvj, ldv, cols, dm.dv, rows, dkv_acc, nullptr,
                                       scratch.matmul());
                    kernels::matmul_tn(ds, BC, qi, lq, dkj, ldk, cols, dm.d, rows, dkv_acc, nullptr,
                                       scratch.matmul());
                    dkv_acc = Accumulate::yes;
                    if (dq_here) {
                        // scores = q·kᵀ  =>  dq_i = ds·k (the only key tile, so the whole sum)
                        const float* kj = k.row(b, hk, j0);  // (bc, D) with lk
                        float* dqi = dq.row(b, h, i0);       // (br, D) with ldq
                        kernels::matmul_nn(ds, BC, kj, lk, dqi, ldq, rows, dm.d, cols, Accumulate::no, nullptr,
                                           scratch.matmul());
                    }
                }
            }
            if (dkv_acc == Accumulate::no) {  // no query sees these keys
                zero_rows(dk, b, hk, j0, cols);
                zero_rows(dv, b, hk, j0, cols);
            }
        }
    });

    // dq: one task per (batch, head, query tile), which owns those rows of dq.
    const std::size_t q_tiles = dq_here ? 0 : ceil_div(dm.t, BR);
    parallel_for(0, dm.batch * dm.heads * q_tiles, [&](std::size_t begin, std::size_t end) {
        TileScratch scratch(meter, tiles);
        float* p = scratch.data();  // (br, bc)
        float* ds = p + BR * BC;    // (br, bc)
        float* qp = ds + BR * BC;   // (br, D) packed queries
        float* dop = qp + qp_size;  // (br, Dv) packed output gradients
        for (std::size_t task = begin; task < end; ++task) {
            const std::size_t bh = task / q_tiles, i0 = (task % q_tiles) * BR;
            const std::size_t b = bh / dm.heads, h = bh % dm.heads, hk = h / dm.group;
            const std::size_t rows = std::min(BR, dm.t - i0);
            const float* qi = q.row(b, h, i0);          // (br, D) with lq
            const float* doi = dcontext.row(b, h, i0);  // (br, Dv) with ldo
            const float* kh = k.head(b, hk);            // (S, D) with lk
            float* dqi = dq.row(b, h, i0);              // (br, D) with ldq
            Accumulate dq_acc = Accumulate::no;         // the first tile overwrites dq_i
            const float* kp = packed + (b * dm.kv_heads + hk) * (kp_size + vkp_size);
            kernels::flash_pack_groups(qi, rows, dm.d, lq, 1.0f, qp);
            kernels::flash_pack_groups(doi, rows, dm.dv, ldo, 1.0f, dop);
            const std::size_t j_end = key_end(dm, mask.causal, i0, rows);
            for (std::size_t j0 = 0; j0 < j_end; j0 += BC) {
                const std::size_t cols = std::min(BC, j_end - j0);
                if (tile_skipped(mask, dm, b, i0, rows, j0, cols)) continue;
                kernels::flash_scores(qp, rows, dm.d, kp + j0 * dm.d, ceil_div(cols, strip), p, BC);
                if (mask.any()) mask_tile<TileLayout::queries_by_keys>(mask, dm, b, i0, rows, j0, cols, p, BC);
                kernels::flash_scores(dop, rows, dm.dv, kp + kp_size + j0 * dm.dv, ceil_div(cols, strip), ds, BC);
                kernels::flash_backward_tile(p, ds, rows, cols, BC, factor, lse + bh * dm.t + i0,
                                             delta + bh * dm.t + i0);
                // scores = q·kᵀ  =>  dq_i += ds·k_j
                kernels::matmul_nn(ds, BC, kh + j0 * lk, lk, dqi, ldq, rows, dm.d, cols, dq_acc, nullptr,
                                   scratch.matmul());
                dq_acc = Accumulate::yes;
            }
            if (dq_acc == Accumulate::no) zero_rows(dq, b, h, i0, rows);  // these queries see no key
        }
    });
    if (stats) {
        stats->peak_scratch_bytes = meter.peak();
        stats->row_stat_bytes = delta_size * sizeof(float);
        stats->packed_bytes = packed_floats * sizeof(float);
    }
}

}  // namespace attnlab
