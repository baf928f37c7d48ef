// FlashAttention forward and backward (attention/flash_attention.hpp).
//
// Legend: B batch, H query heads, Hkv key/value heads (group = H / Hkv query heads share one),
// T queries, S keys, D head dim of q and k, Dv head dim of v; br x bc one score tile
// (br <= flash_query_tile() query rows, bc <= kFlashKeyTile keys).
//
// Each call takes one of three paths (FlashPath), chosen by named predicates, and each path is
// a per-task function named for what it does:
//
//   path            chosen when                               forward                 backward (dk/dv; dq)
//   fused_one_tile  fused_one_tile_{forward,backward}_applies forward_fused_one_tile  backward_fused_one_tile
//                   (all keys in one tile, at most causal,
//                   sizes the fused kernels take)
//   single_tile     all_keys_in_one_tile                      forward_single_tile     backward_single_tile
//   key_tiles       otherwise                                 forward_online_softmax  backward_key_tile;
//                                                                                     backward_query_tile
//   pointwise_tiles sigmoid or relu (forward only; their      forward_pointwise_tiles (single_tile or key_tiles)
//                   backward takes single_tile or key_tiles)
//
// The backward's per-tile step from scores to p and ds is the normaliser's:
// softmax_tile_step (p = exp(s·scale - lse), ds = p ⊙ (dp - delta)·scale) or
// pointwise_tile_step (p = f(s·scale), ds = f'(p) ⊙ dp·scale), chosen once per tile by tile_step.
//
// forward_online_softmax takes key tiles after the first by forward_lazy_reference_tile where
// the kernel table prefers it (kernels::flash_lazy_exp(): WebAssembly) and no mask hides a pair
// of the tile. The drivers (flash_attention_forward, flash_attention_backward) validate, pick
// the path, pack what it needs and split the tasks over threads; each task's scratch is a
// struct of named spans (ForwardScratch, BackwardScratch) in its thread's slot.
//
// The per-tile steps are ISA-dispatched SIMD kernels: score products and the forward's softmax
// and p·V on operands packed once per head (kernels/flash_tiles.hpp; the forward stores a score
// tile keys by queries), the backward's softmax step (kernels::flash_backward_tile,
// kernels/softmax.hpp) and its gradient products (the blocked matmul, which runs inline inside a
// pool task); the fused one-tile kernels keep the scores in registers and are bit-identical to
// the single-tile path. Everything else here is index arithmetic, masks and the split of work
// over threads.
#include "attnlab/attention/flash_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "attnlab/attention/normalizer.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/flash_tiles.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "task_slots.hpp"
#include "visible_counts.hpp"

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
    mask.validate(q.batch, q.n, k.n, where, q.heads);
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

// True if the block layout (AttentionMask::block_layout) has no live block that meets the tile
// rows [i0, i0 + rows) x keys [j0, j0 + cols): the live tiles are computed from the layout, so
// the skip is exact for any block size b against the fixed tile sizes (a tile that a live block
// only partly covers is computed, its dead part masked by mask_tile). Block-sparse attention's
// work then grows with the live tiles, not T·S.
bool tile_outside_layout(const AttentionMask& mask, std::size_t i0, std::size_t rows, std::size_t j0,
                         std::size_t cols) {
    if (mask.block_layout.size() == 0) return false;
    const std::size_t b = mask.block_size, ld = mask.block_layout.shape(1);
    const std::size_t r_first = (i0 + mask.block_row_offset) / b, r_last = (i0 + mask.block_row_offset + rows - 1) / b;
    const std::size_t c_first = j0 / b, c_last = (j0 + cols - 1) / b;
    for (std::size_t r = r_first; r <= r_last; ++r) {
        const std::uint8_t* live = mask.block_layout.data() + r * ld;
        for (std::size_t c = c_first; c <= c_last; ++c) {
            if (live[c]) return false;
        }
    }
    return true;
}

// Calls run(k0, cols) for each run of consecutive key blocks of the tile's keys [j0, j0 + cols)
// that a live block of the rows [i0, i0 + rows) covers (the block-sparse strategy next to the
// dense key loop), in key order, clipped to the tile. Each run's start is moved down to a multiple
// of `align` keys from j0 (packed keys start whole groups or strips there); a run that then
// reaches the one before is merged into it. Dead blocks inside a run are masked by mask_tile.
// When query tiles are block rows and blocks are whole strips and groups (query_tile_rows), every
// live block is computed once and no dead block is: block-sparse work is the live blocks' share
// of the dense work. Without a layout the tile is one run.
template <class Run>
void for_each_live_key_run(const AttentionMask& mask, std::size_t i0, std::size_t rows, std::size_t j0,
                           std::size_t cols, std::size_t align, Run&& run) {
    if (mask.block_layout.size() == 0) {
        run(j0, cols);
        return;
    }
    const std::size_t b = mask.block_size, end = j0 + cols;
    const std::size_t r_first = (i0 + mask.block_row_offset) / b, r_last = (i0 + mask.block_row_offset + rows - 1) / b;
    std::size_t start = 0, stop = 0;  // the open run [start, stop), empty while stop == 0
    for (std::size_t c = j0 / b; c <= (end - 1) / b; ++c) {
        bool live = false;
        for (std::size_t r = r_first; r <= r_last && !live; ++r) live = mask.block_layout(r, c) != 0;
        if (!live) continue;
        const std::size_t first = std::max(j0, c * b), last = std::min(end, (c + 1) * b);
        const std::size_t aligned = j0 + (first - j0) / align * align;
        if (stop > 0 && aligned <= stop) {
            stop = last;
            continue;
        }
        if (stop > 0) run(start, stop - start);
        start = aligned;
        stop = last;
    }
    if (stop > 0) run(start, stop - start);
}

// True if the tile rows [i0, i0 + rows) x keys [j0, j0 + cols) of batch row b would add nothing
// under the mask and is skipped whole: wholly outside the window or the block layout's live
// blocks, or every key padding.
bool tile_skipped(const AttentionMask& mask, const Dims& dm, std::size_t b, std::size_t i0, std::size_t rows,
                  std::size_t j0, std::size_t cols) {
    return tile_outside_window(mask, dm, i0, rows, j0, cols) || tile_outside_layout(mask, i0, rows, j0, cols) ||
           tile_all_padding(mask, dm, b, j0, cols);
}

// True if no mask hides any (query, key) pair of the tile rows [i0, ...) x keys [j0, j0 + cols):
// under the causal mask the first row, i0, must see the tile's last key. What the forward's
// lazy-reference kernels need: they take the exponentials before a mask could be applied.
bool tile_unmasked(const AttentionMask& mask, const Dims& dm, std::size_t i0, std::size_t j0, std::size_t cols) {
    if (mask.window > 0 || mask.key_padding.size() > 0 || mask.explicit_mask.size() > 0 ||
        mask.block_layout.size() > 0 || mask.score_bias) {
        return false;
    }
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
// of batch row b, head h to -inf, as AttentionMask::apply does for the whole (T, S) matrix, then
// adds the score bias (if any) times bias_units, the factor that puts the bias in the tile's
// units: 1/scale for raw q·kᵀ that the softmax scales later, log2(e) for the online softmax's
// scaled log2 scores. Layout: see TileLayout (ld is the stride between the tile's stored rows).
template <TileLayout Layout>
void mask_tile(const AttentionMask& mask, const Dims& dm, std::size_t b, std::size_t h, float bias_units,
               std::size_t i0, std::size_t rows, std::size_t j0, std::size_t cols, float* tile, std::size_t ld) {
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
        if (mask.block_layout.size() > 0) {
            // AttentionMask::outside_layout as one range per dead block of the row's layout row.
            const std::size_t bs = mask.block_size, end = j0 + cols;
            const std::uint8_t* live = mask.block_layout.data() + (i0 + r + mask.block_row_offset) / bs *
                                                                       mask.block_layout.shape(1);
            for (std::size_t j = j0; j < end;) {
                const std::size_t next = std::min(end, (j / bs + 1) * bs);
                if (!live[j / bs]) {
                    for (std::size_t k = j; k < next; ++k) at(r, k - j0) = kNegInf;
                }
                j = next;
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
        if (mask.score_bias) {
            const Tensor4& bias = *mask.score_bias;  // (G, H, T, S)
            const float* row = bias.data() + (((b % bias.shape(0)) * dm.heads + h) * dm.t + i0 + r) * dm.s + j0;
            for (std::size_t c = 0; c < cols; ++c) at(r, c) += bias_units * row[c];
        }
    }
}

// The score bias's units in a tile of raw q·kᵀ that the softmax multiplies by factor.
float raw_score_units(float factor) { return 1.0f / factor; }

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

// A run of floats inside a task's scratch (what std::span<float> is in C++20).
struct FloatSpan {
    float* ptr = nullptr;
    std::size_t len = 0;
    float* data() const { return ptr; }
    std::size_t size() const { return len; }
    float* begin() const { return ptr; }
    float* end() const { return ptr + len; }
};

// Hands out consecutive spans of a task's scratch slot, in the order asked. With a null slot it
// only adds up their sizes (used()), which is how a call sizes its TileSlots.
class ScratchCarver {
public:
    explicit ScratchCarver(float* slot) : slot_(slot) {}
    FloatSpan take(std::size_t floats) {
        const FloatSpan span{slot_ ? slot_ + used_ : nullptr, floats};
        used_ += floats;
        return span;
    }
    std::size_t used() const { return used_; }

private:
    float* slot_;
    std::size_t used_ = 0;
};

// One task's tile of queries: rows [i0, i0 + rows) of head h (kv head hk) of batch row b,
// bh = b·H + h indexing the (B, H, T) row statistics.
struct QueryTile {
    std::size_t b, h, hk, bh, i0, rows;
};

QueryTile query_tile(const Dims& dm, std::size_t br, std::size_t b, std::size_t h, std::size_t i0) {
    return QueryTile{b, h, h / dm.group, b * dm.heads + h, i0, std::min(br, dm.t - i0)};
}

// One task's tile of keys: keys [j0, j0 + cols) of kv head hk of batch row b, bk = b·Hkv + hk.
struct KeyTile {
    std::size_t b, hk, bk, j0, cols;
};

// The key tile of dk/dv task `task` (tasks in (batch, kv head, key tile) order).
KeyTile key_tile(const Dims& dm, std::size_t task) {
    const std::size_t k_tiles = ceil_div(dm.s, BC);
    const std::size_t bk = task / k_tiles, j0 = (task % k_tiles) * BC;
    return KeyTile{bk / dm.kv_heads, bk % dm.kv_heads, bk, j0, std::min(BC, dm.s - j0)};
}

// ---- Which path a call takes ----------------------------------------------------------------

// All keys fit one key tile (S <= kFlashKeyTile): each query tile meets exactly one key tile,
// so no online softmax is needed and the backward's dk/dv pass can also write dq.
bool all_keys_in_one_tile(const Dims& dm) { return dm.s <= BC; }

// The fused one-tile kernels (kernels/flash_tiles.hpp) apply: one key tile, no mask but a causal
// one, a key count and head dims the kernels take (the tiny models' training). The forward's
// kernel takes any D; the backward's products need D to fit too.
bool fused_one_tile_forward_applies(const Dims& dm, const AttentionMask& mask) {
    return all_keys_in_one_tile(dm) && mask.at_most_causal() && kernels::one_tile_fits(dm.s, dm.dv);
}
bool fused_one_tile_backward_applies(const Dims& dm, const AttentionMask& mask) {
    return all_keys_in_one_tile(dm) && mask.at_most_causal() && kernels::one_tile_fits(dm.s, dm.d) &&
           kernels::one_tile_fits(dm.s, dm.dv);
}

// The paths. single_tile runs the recorded path's operations in the same order, so it equals
// that path bit for bit; fused_one_tile equals single_tile bit for bit; key_tiles (an online
// softmax) equals them to rounding.
enum class FlashPath {
    fused_one_tile,  // one key tile, at most causal: scores in registers (kernels::one_tile_*)
    single_tile,     // one key tile: plain softmax with matmul products, any mask
    key_tiles,       // several key tiles: online softmax over packed key tiles (forward); a dk/dv
                     // pass and a dq pass over packed keys and values (backward)
    pointwise_tiles,  // forward with sigmoid or relu: w = f(s) per packed key tile, o += w·v_j
};

// sigmoid and relu weigh each score alone (attention/normalizer.hpp): no row statistics.
bool pointwise(Normalizer normalizer) { return normalizer != Normalizer::softmax; }

FlashPath forward_path(const Dims& dm, const AttentionMask& mask, Normalizer normalizer) {
    if (pointwise(normalizer)) return FlashPath::pointwise_tiles;
    if (fused_one_tile_forward_applies(dm, mask)) return FlashPath::fused_one_tile;
    return all_keys_in_one_tile(dm) ? FlashPath::single_tile : FlashPath::key_tiles;
}
// The fused kernels differentiate the softmax: sigmoid and relu take the other two paths, whose
// tile step is the normaliser's (tile_step).
FlashPath backward_path(const Dims& dm, const AttentionMask& mask, Normalizer normalizer) {
    if (!pointwise(normalizer) && fused_one_tile_backward_applies(dm, mask)) return FlashPath::fused_one_tile;
    return all_keys_in_one_tile(dm) ? FlashPath::single_tile : FlashPath::key_tiles;
}

// ---- Forward --------------------------------------------------------------------------------

// The forward's keys and values of every (batch, kv head), packed once for the online softmax's
// tile kernels (kernels/flash_tiles.hpp): linear in S, shared by all query tiles and query heads.
// The score tiles are stored keys by queries (flash_softmax_pv_columns), so the keys are the
// broadcast operand: each key tile packed as groups of flash_group() keys. Values whose rows are
// already a whole number of strips are read in place (packing would copy them unchanged); else
// padded to dp columns.
struct ForwardPacked {
    const float* data = nullptr;      // head bk's key tiles at bk·(key_floats + value_floats)
    std::size_t key_tile_floats = 0;  // floats per packed key tile
    std::size_t key_floats = 0;       // a head's packed key tiles
    std::size_t value_floats = 0;     // a head's packed values (S, dp); 0 when read in place
    std::size_t dp = 0;               // packed value row length (flash_padded_value_dim)
    bool values_in_place = false;
    std::size_t floats(const Dims& dm) const { return dm.batch * dm.kv_heads * (key_floats + value_floats); }
    const float* keys(std::size_t bk) const { return data + bk * (key_floats + value_floats); }
    const float* values(std::size_t bk) const { return keys(bk) + key_floats; }
};

// Packs K (B, Hkv, S, D) and V (B, Hkv, S, Dv) as ForwardPacked says, one task per (batch, kv
// head, key tile). The buffer is the calling thread's, grow-only; workers only read it.
ForwardPacked pack_forward_keys(const ConstHeadsView& k, const ConstHeadsView& v, const Dims& dm, const char* where) {
    ForwardPacked packed;
    const std::size_t k_tiles = ceil_div(dm.s, BC);
    packed.key_tile_floats = kernels::flash_groups_size(BC, dm.d);
    packed.key_floats = k_tiles * packed.key_tile_floats;
    packed.dp = kernels::flash_padded_value_dim(dm.dv);
    packed.values_in_place = packed.dp == dm.dv;
    packed.value_floats = packed.values_in_place ? 0 : dm.s * packed.dp;
    const std::size_t heads_kv = dm.batch * dm.kv_heads, per_head = packed.key_floats + packed.value_floats;
    require_allocatable({heads_kv, per_head}, where, "the packed keys and values");
    float* const data = thread_buffer<kPackedBuffer>(heads_kv * per_head);
    parallel_for(0, heads_kv * k_tiles, [&](std::size_t begin, std::size_t end) {
        for (std::size_t task = begin; task < end; ++task) {
            const std::size_t bk = task / k_tiles, j0 = (task % k_tiles) * BC;
            const std::size_t b = bk / dm.kv_heads, hk = bk % dm.kv_heads;
            const std::size_t cols = std::min(BC, dm.s - j0);
            float* kp = data + bk * per_head;
            kernels::flash_pack_groups(k.row(b, hk, j0), cols, dm.d, k.row_stride, 1.0f,
                                       kp + (j0 / BC) * packed.key_tile_floats);
            if (!packed.values_in_place) {
                kernels::flash_pack_values(v.row(b, hk, j0), cols, dm.dv, v.row_stride,
                                           kp + packed.key_floats + j0 * packed.dp);
            }
        }
    });
    packed.data = data;
    return packed;
}

// What every task of one forward call reads.
struct ForwardCall {
    ConstHeadsView q, k, v;  // (B, H, T, D), (B, Hkv, S, D), (B, Hkv, S, Dv)
    HeadsView context;       // (B, H, T, Dv)
    const AttentionMask& mask;
    Dims dm;
    std::size_t br;               // query rows of a tile (query_tile_rows)
    std::size_t ldq_max;          // br rounded up to whole strips: the queries of a stored score tile
    float factor;                 // the softmax scale
    FlashPath path;
    bool lazy;                    // the table prefers the lazy-reference variant (kernels::flash_lazy_exp())
    float* logsumexp;             // (B, H, T), or null
    float* kept_weights;          // fused_one_tile: (B·H·T, kOneTileLd) weights for the backward, or null
    ForwardPacked packed;         // key_tiles and pointwise_tiles only
    Normalizer normalizer;
    const float* visible;         // pointwise_tiles: (B, T) n_i, each query's visible keys
};

// A forward task's scratch, named. Laid out in one slot of the call's TileSlots; every path
// gets the same spans (so the scratch does not depend on the sequence length), except keys_t,
// which only the fused path has, and tile_max and tile_sum, only where the table prefers the
// lazy-reference variant.
struct ForwardScratch {
    // key_tiles: (bc, ldq) scores stored keys by queries, then probabilities; one key tile:
    // (br, bc) scores stored queries by keys, then probabilities
    FloatSpan scores;
    FloatSpan out;       // (br, Dp) key_tiles: the unnormalised output o
    FloatSpan queries;   // (ldq, D) key_tiles: the query tile packed as strips, times scale·log2(e)
    FloatSpan row_max;   // (ldq) m: running max of the scaled scores (lazy: at most kLazyMargin below)
    FloatSpan row_sum;   // (ldq) l: running sum of exp(scaled - m)
    FloatSpan rescale;   // (ldq) exp(m_old - m_new) of the last key tile
    FloatSpan tile_max;  // (ldq) lazy: the max of a key tile's scores
    FloatSpan tile_sum;  // (ldq) lazy: and its sum of p
    FloatSpan keys_t;    // (D, S) fused_one_tile: Kᵀ of the head
    std::size_t floats;  // all of the above

    ForwardScratch(float* slot, const ForwardCall& c) {
        ScratchCarver carve(slot);
        const std::size_t dp = kernels::flash_padded_value_dim(c.dm.dv);
        scores = carve.take(std::max(BC * c.ldq_max, c.br * BC));
        out = carve.take(c.br * dp);
        queries = carve.take(kernels::flash_strips_size(c.br, c.dm.d));
        row_max = carve.take(c.ldq_max);
        row_sum = carve.take(c.ldq_max);
        rescale = carve.take(c.ldq_max);
        tile_max = carve.take(c.lazy ? c.ldq_max : 0);
        tile_sum = carve.take(c.lazy ? c.ldq_max : 0);
        keys_t = carve.take(c.path == FlashPath::fused_one_tile ? c.dm.d * c.dm.s : 0);
        floats = carve.used();
    }
};

// The forward's lazy-reference key tiles of one task (FlashAttentionStats::lazy_*).
struct LazyTally {
    std::size_t tiles = 0, rescaled_rows = 0, recomputed_tiles = 0;
};

// The same over all tasks of one call, added once per task.
struct LazyTileCounts {
    std::atomic<std::size_t> tiles{0}, rescaled_rows{0}, recomputed_tiles{0};
    void add(const LazyTally& t) {
        tiles += t.tiles;
        rescaled_rows += t.rescaled_rows;
        recomputed_tiles += t.recomputed_tiles;
    }
};

// Fused one-tile path: softmax(scale·q_i·kᵀ) with the scores in registers, on a Kᵀ transposed
// per task, then o_i = p·v (kernels/flash_tiles.hpp), bit-identical to forward_single_tile.
// p goes to the kept weights when the backward asked for them. Leaves m and l (natural units)
// in s.row_max, s.row_sum.
void forward_fused_one_tile(const ForwardCall& c, const QueryTile& t, const ForwardScratch& s) {
    const Dims& dm = c.dm;
    const float* kh = c.k.head(t.b, t.hk);  // (S, D) with k.row_stride
    float* p = c.kept_weights ? c.kept_weights + (t.bh * dm.t + t.i0) * kernels::kOneTileLd : s.scores.data();
    kernels::one_tile_transpose(kh, dm.s, dm.d, c.k.row_stride, s.keys_t.data());
    kernels::one_tile_softmax(c.q.row(t.b, t.h, t.i0), c.q.row_stride, t.rows, dm.d, s.keys_t.data(), dm.s, c.factor,
                              causal_from(c.mask, dm, t.i0), p, s.row_max.data(), s.row_sum.data());
    kernels::one_tile_product(false, p, t.rows, dm.s, c.v.head(t.b, t.hk), c.v.row_stride, dm.dv,
                              c.context.row(t.b, t.h, t.i0), c.context.row_stride, false);
}

// Single-tile path: all keys in one tile, so a plain softmax (normalise p, then p·v): the very
// operations of the recorded path in the same order, so the results are bit-identical to it.
// Any mask. Leaves m and l (natural units) in s.row_max, s.row_sum.
void forward_single_tile(const ForwardCall& c, const QueryTile& t, const ForwardScratch& s, float* matmul_scratch) {
    const Dims& dm = c.dm;
    float* st = s.scores.data();  // (br, bc) queries by keys
    kernels::matmul_nt(c.q.row(t.b, t.h, t.i0), c.q.row_stride, c.k.head(t.b, t.hk), c.k.row_stride, st, BC, t.rows,
                       dm.s, dm.d, Accumulate::no, nullptr, matmul_scratch);
    if (c.mask.any()) {
        mask_tile<TileLayout::queries_by_keys>(c.mask, dm, t.b, t.h, raw_score_units(c.factor), t.i0, t.rows, 0, dm.s,
                                               st, BC);
    }
    kernels::softmax_tile(st, t.rows, dm.s, BC, c.factor, s.row_max.data(), s.row_sum.data());
    kernels::matmul_nn(st, BC, c.v.head(t.b, t.hk), c.v.row_stride, c.context.row(t.b, t.h, t.i0),
                       c.context.row_stride, t.rows, dm.dv, dm.s, Accumulate::no, nullptr, matmul_scratch);
}

// Lazy-reference variant of one key tile of the online softmax (kernels::flash_lazy_exp()): for
// a key tile after the first, with no masked pair, pᵀ = 2^(k_j·q_iᵀ - m) is taken inside the
// score product against the previous tiles' reference m, then settled (settle_lazy_tile) and
// o += p·v_j. Returns false, having changed only s.scores, when the tile must be recomputed by
// the two-pass kernels. kg: the packed key tile; vj: (cols, Dp) values with ldv.
bool forward_lazy_reference_tile(const ForwardCall& c, const ForwardScratch& s, const float* kg, const float* vj,
                                 std::size_t ldv, std::size_t rows, std::size_t cols, LazyTally& tally) {
    const std::size_t strip = kernels::flash_strip();
    const std::size_t q_strips = ceil_div(rows, strip), ldq = q_strips * strip;
    std::fill(s.tile_max.begin(), s.tile_max.begin() + ldq, kNegInf);
    std::fill(s.tile_sum.begin(), s.tile_sum.begin() + ldq, 0.0f);
    kernels::flash_scores_exp(kg, cols, c.dm.d, s.queries.data(), q_strips, s.scores.data(), ldq, s.row_max.data(),
                              s.tile_max.data(), s.tile_sum.data());
    std::size_t rescaled = 0;
    if (!settle_lazy_tile(s.scores.data(), rows, cols, ldq, s.row_max.data(), s.row_sum.data(), s.tile_max.data(),
                          s.tile_sum.data(), s.rescale.data(), &rescaled)) {
        return false;
    }
    kernels::flash_pv_columns(s.scores.data(), rows, cols, ldq, vj, ldv, c.packed.dp, s.out.data(),
                              rescaled > 0 ? s.rescale.data() : nullptr);
    tally.rescaled_rows += rescaled;
    return true;
}

// The packed key tiles of a query tile's kv head, and its values (S, Dp) with rows ldv apart
// (packed, or read in place when their rows are whole strips).
struct PackedHead {
    const float* keys;
    const float* values;
    std::size_t ldv;
};
PackedHead packed_head(const ForwardCall& c, const QueryTile& t) {
    const std::size_t bk = t.b * c.dm.kv_heads + t.hk;
    if (c.packed.values_in_place) return PackedHead{c.packed.keys(bk), c.v.head(t.b, t.hk), c.v.row_stride};
    return PackedHead{c.packed.keys(bk), c.packed.values(bk), c.packed.dp};
}

// Online softmax over key tiles (the FlashAttention loop): per key tile j that the mask leaves
// anything of, sᵀ = k_j·q_iᵀ (scores stored keys by queries, in log2 units), masked; then
// m' = max(m, rowmax s), p = 2^(s - m'), l = 2^(m - m')·l + rowsum p, o = 2^(m - m')·o + p·v_j;
// finally o /= l. Key tiles after the first take the lazy-reference variant where c.lazy and no
// mask hides a pair of the tile. Leaves m and l (natural units) in s.row_max, s.row_sum.
void forward_online_softmax(const ForwardCall& c, const QueryTile& t, const ForwardScratch& s, LazyTally& tally) {
    const Dims& dm = c.dm;
    const std::size_t strip = kernels::flash_strip(), dp = c.packed.dp;
    const std::size_t q_strips = ceil_div(t.rows, strip), ldq = q_strips * strip;
    const PackedHead head = packed_head(c, t);
    const float *kp = head.keys, *vp = head.values;
    const std::size_t ldv = head.ldv;
    std::fill(s.row_max.begin(), s.row_max.begin() + ldq, kNegInf);
    std::fill(s.row_sum.begin(), s.row_sum.begin() + ldq, 0.0f);
    std::fill(s.out.begin(), s.out.begin() + t.rows * dp, 0.0f);
    kernels::flash_pack_strips(c.q.row(t.b, t.h, t.i0), t.rows, dm.d, c.q.row_stride, c.factor * kLog2e,
                               s.queries.data());
    const std::size_t j_end = key_end(dm, c.mask.causal, t.i0, t.rows);
    bool have_reference = false;  // a key tile has set row_max
    for (std::size_t j0 = 0; j0 < j_end; j0 += BC) {
        const std::size_t cols = std::min(BC, j_end - j0);
        if (tile_skipped(c.mask, dm, t.b, t.i0, t.rows, j0, cols)) continue;
        const float* tile_keys = kp + (j0 / BC) * c.packed.key_tile_floats;  // packed as groups of (D, group)
        if (c.lazy && have_reference && tile_unmasked(c.mask, dm, t.i0, j0, cols)) {
            ++tally.tiles;
            if (forward_lazy_reference_tile(c, s, tile_keys, vp + j0 * ldv, ldv, t.rows, cols, tally)) continue;
            ++tally.recomputed_tiles;
        }
        // each run of live keys as a key tile of its own, from its first group
        for_each_live_key_run(c.mask, t.i0, t.rows, j0, cols, kernels::flash_group(), [&](std::size_t k0,
                                                                                           std::size_t keys) {
            const float* kg = tile_keys + (k0 - j0) * dm.d;
            const float* vj = vp + k0 * ldv;  // (keys, Dp) with ldv
            kernels::flash_scores(kg, keys, dm.d, s.queries.data(), q_strips, s.scores.data(), ldq);
            if (c.mask.any()) {
                mask_tile<TileLayout::keys_by_queries>(c.mask, dm, t.b, t.h, kLog2e, t.i0, t.rows, k0, keys,
                                                       s.scores.data(), ldq);
            }
            kernels::flash_softmax_pv_columns(s.scores.data(), t.rows, keys, ldq, vj, ldv, dp, s.out.data(),
                                              s.row_max.data(), s.row_sum.data(), s.rescale.data());
        });
        have_reference = true;
    }
    // o /= l. Rows that saw no key keep o = 0.
    for (std::size_t r = 0; r < t.rows; ++r) {
        const float inv = s.row_sum.data()[r] == 0.0f ? 0.0f : 1.0f / s.row_sum.data()[r];
        const float* o = s.out.data() + r * dp;
        float* out = c.context.row(t.b, t.h, t.i0 + r);
        for (std::size_t col = 0; col < dm.dv; ++col) out[col] = o[col] * inv;
    }
    // m back in natural units (ln 2 · m₂) for the logsumexp.
    for (std::size_t r = 0; r < t.rows; ++r) s.row_max.data()[r] *= kLn2;
}

// Pointwise tiles (sigmoid or relu, attention/normalizer.hpp): per key tile that the mask leaves
// anything of, sᵀ = k_j·(scale·q_i)ᵀ (stored keys by queries), masked, w = f(s) with each row's
// n_i, o += w·v_j. No running max or sum: each weight depends on its own score alone. Rows that
// see no key have n_i = 0, so w = 0 and o = 0.
void forward_pointwise_tiles(const ForwardCall& c, const QueryTile& t, const ForwardScratch& s) {
    const Dims& dm = c.dm;
    const std::size_t strip = kernels::flash_strip(), dp = c.packed.dp;
    const std::size_t q_strips = ceil_div(t.rows, strip), ldq = q_strips * strip;
    const PackedHead head = packed_head(c, t);
    const float* visible = c.visible + t.b * dm.t + t.i0;  // (rows) n_i
    std::fill(s.out.begin(), s.out.begin() + t.rows * dp, 0.0f);
    kernels::flash_pack_strips(c.q.row(t.b, t.h, t.i0), t.rows, dm.d, c.q.row_stride, c.factor, s.queries.data());
    const std::size_t j_end = key_end(dm, c.mask.causal, t.i0, t.rows);
    for (std::size_t j0 = 0; j0 < j_end; j0 += BC) {
        const std::size_t cols = std::min(BC, j_end - j0);
        if (tile_skipped(c.mask, dm, t.b, t.i0, t.rows, j0, cols)) continue;
        const float* kg = head.keys + (j0 / BC) * c.packed.key_tile_floats;  // the key tile, packed as groups
        kernels::flash_scores(kg, cols, dm.d, s.queries.data(), q_strips, s.scores.data(), ldq);
        if (c.mask.any()) {
            // the scores are already scaled (the queries were packed times the factor): bias in its own units
            mask_tile<TileLayout::keys_by_queries>(c.mask, dm, t.b, t.h, 1.0f, t.i0, t.rows, j0, cols, s.scores.data(),
                                                   ldq);
        }
        normalize_columns(c.normalizer, s.scores.data(), t.rows, cols, ldq, visible);
        kernels::flash_pv_columns(s.scores.data(), t.rows, cols, ldq, head.values + j0 * head.ldv, head.ldv, dp,
                                  s.out.data(), nullptr);
    }
    for (std::size_t r = 0; r < t.rows; ++r) {
        std::copy_n(s.out.data() + r * dp, dm.dv, c.context.row(t.b, t.h, t.i0 + r));
    }
}

// Pointwise tiles' row statistic in the logsumexp slot: ln n_i (-inf for rows that see no key).
void write_log_visible(const ForwardCall& c, const QueryTile& t) {
    if (!c.logsumexp) return;
    for (std::size_t r = 0; r < t.rows; ++r) {
        const float n = c.visible[t.b * c.dm.t + t.i0 + r];
        c.logsumexp[t.bh * c.dm.t + t.i0 + r] = n == 0.0f ? kNegInf : std::log(n);
    }
}

// logsumexp = m + log(l) of the tile's rows, -inf for rows that saw no key.
void write_logsumexp(const ForwardCall& c, const QueryTile& t, const ForwardScratch& s) {
    if (!c.logsumexp) return;
    for (std::size_t r = 0; r < t.rows; ++r) {
        const float l = s.row_sum.data()[r];
        c.logsumexp[t.bh * c.dm.t + t.i0 + r] = l == 0.0f ? kNegInf : s.row_max.data()[r] + std::log(l);
    }
}

// ---- Backward -------------------------------------------------------------------------------

// delta = rowsum(dO ⊙ O) (B, H, T): Σ_j p_j·dp_j of the softmax Jacobian, since
// Σ_j p_j (dO · v_j) = dO · Σ_j p_j v_j = dO · O. dcontext, context: (B, H, T, Dv).
void output_gradient_dots(const ConstHeadsView& dcontext, const ConstHeadsView& context, const Dims& dm,
                          float* delta) {
    if (dm.t == 0) return;
    parallel_for(
        0, dm.batch * dm.heads,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t bh = begin; bh < end; ++bh) {
                const std::size_t b = bh / dm.heads, h = bh % dm.heads;
                kernels::flash_row_dots(dcontext.row(b, h, 0), dcontext.row_stride, context.row(b, h, 0),
                                        context.row_stride, dm.t, dm.dv, delta + bh * dm.t);
            }
        },
        std::max<std::size_t>(1, 1024 / dm.t));
}

// The backward's K (B, Hkv, S, D) and V (B, Hkv, S, Dv) of every (batch, kv head), packed once
// as strips for the key_tiles path (s = q·kᵀ and dp = dO·vᵀ are both flash_scores products, each
// packed operand used by many tiles).
struct BackwardPacked {
    const float* data = nullptr;  // head bk's keys at bk·(key_floats + value_floats), then its values
    std::size_t key_floats = 0, value_floats = 0;
    std::size_t floats(const Dims& dm) const { return dm.batch * dm.kv_heads * (key_floats + value_floats); }
    const float* keys(std::size_t bk) const { return data + bk * (key_floats + value_floats); }
    const float* values(std::size_t bk) const { return keys(bk) + key_floats; }
};

// Packs as BackwardPacked says, in parallel. The buffer is the calling thread's, grow-only;
// workers only read it.
BackwardPacked pack_backward_keys(const ConstHeadsView& k, const ConstHeadsView& v, const Dims& dm,
                                  const char* where) {
    BackwardPacked packed;
    packed.key_floats = kernels::flash_strips_size(dm.s, dm.d);
    packed.value_floats = kernels::flash_strips_size(dm.s, dm.dv);
    const std::size_t heads_kv = dm.batch * dm.kv_heads;
    require_allocatable({heads_kv, packed.key_floats + packed.value_floats}, where, "the packed keys and values");
    float* const data = thread_buffer<kPackedBuffer>(packed.floats(dm));
    parallel_for(0, heads_kv, [&](std::size_t begin, std::size_t end) {
        for (std::size_t bk = begin; bk < end; ++bk) {
            const std::size_t b = bk / dm.kv_heads, hk = bk % dm.kv_heads;
            float* kp = data + bk * (packed.key_floats + packed.value_floats);
            kernels::flash_pack_strips(k.head(b, hk), dm.s, dm.d, k.row_stride, 1.0f, kp);
            kernels::flash_pack_strips(v.head(b, hk), dm.s, dm.dv, v.row_stride, 1.0f, kp + packed.key_floats);
        }
    });
    packed.data = data;
    return packed;
}

// What every task of one backward call reads.
struct BackwardCall {
    ConstHeadsView dout, q, k, v;  // (B, H, T, Dv), (B, H, T, D), (B, Hkv, S, D), (B, Hkv, S, Dv)
    HeadsView dq, dk, dv;          // (B, H, T, D), (B, Hkv, S, D), (B, Hkv, S, Dv)
    const AttentionMask& mask;
    Dims dm;
    std::size_t br;             // query rows of a tile (query_tile_rows)
    float factor;               // the softmax scale
    FlashPath path;
    const float* lse;           // (B, H, T) logsumexp from the forward
    const float* delta;         // (B, H, T) rowsum(dO ⊙ O)
    const float* kept_weights;  // fused_one_tile: (B·H·T, kOneTileLd) the forward's weights, or null
    BackwardPacked packed;      // key_tiles only
    Normalizer normalizer;
    const float* visible;       // sigmoid, relu: (B, T) n_i, each query's visible keys
    float* dscores = nullptr;   // (B, H, T, S) dL/d(biased scores) when the mask wants the score bias's gradient
};

// The softmax's tile step: p (rows, cols) with BC holds the masked scores q·kᵀ, ds holds
// dp = dO·vᵀ -> p = exp(s·scale - lse), ds = p ⊙ (dp - delta)·scale.
void softmax_tile_step(const BackwardCall& c, const QueryTile& t, std::size_t cols, float* p, float* ds) {
    kernels::flash_backward_tile(p, ds, t.rows, cols, BC, c.factor, c.lse + t.bh * c.dm.t + t.i0,
                                 c.delta + t.bh * c.dm.t + t.i0);
}

// The sigmoid or relu tile step, on the same operands: p = f(s·scale) with the rows' n_i,
// ds = f'(p) ⊙ dp·scale (attention/normalizer.hpp), the recorded backward's operations.
void pointwise_tile_step(const BackwardCall& c, const QueryTile& t, std::size_t cols, float* p, float* ds) {
    const float* visible = c.visible + t.b * c.dm.t + t.i0;  // (rows) n_i
    for (std::size_t r = 0; r < t.rows; ++r) {
        for (std::size_t j = 0; j < cols; ++j) p[r * BC + j] *= c.factor;
    }
    normalize_rows(c.normalizer, p, t.rows, cols, BC, visible);
    normalize_rows_backward(c.normalizer, p, ds, t.rows, cols, BC, visible);
    for (std::size_t r = 0; r < t.rows; ++r) {
        for (std::size_t j = 0; j < cols; ++j) ds[r * BC + j] *= c.factor;
    }
}

// The call's tile step (one choice per tile, not per score).
void tile_step(const BackwardCall& c, const QueryTile& t, std::size_t cols, float* p, float* ds) {
    if (pointwise(c.normalizer)) pointwise_tile_step(c, t, cols, p, ds);
    else softmax_tile_step(c, t, cols, p, ds);
}

// A backward task's scratch, named. Laid out in one slot of the call's TileSlots; spans a path
// does not use have size 0.
struct BackwardScratch {
    FloatSpan p;         // (br, bc) scores, then probabilities
    FloatSpan ds;        // (br, bc) dO·vᵀ, then the score gradient
    FloatSpan queries;   // (br, D) key_tiles: the query tile packed as groups
    FloatSpan dout;      // (br, Dv) key_tiles: the output gradients packed as groups
    FloatSpan keys_t;    // (D, S) fused_one_tile: Kᵀ of the head
    FloatSpan values_t;  // (Dv, S) fused_one_tile: Vᵀ of the head
    std::size_t floats;  // all of the above

    BackwardScratch(float* slot, const BackwardCall& c) {
        ScratchCarver carve(slot);
        const bool packed = c.path == FlashPath::key_tiles, fused = c.path == FlashPath::fused_one_tile;
        p = carve.take(c.br * BC);
        ds = carve.take(c.br * BC);
        queries = carve.take(packed ? kernels::flash_groups_size(c.br, c.dm.d) : 0);
        dout = carve.take(packed ? kernels::flash_groups_size(c.br, c.dm.dv) : 0);
        keys_t = carve.take(fused ? c.dm.d * c.dm.s : 0);
        values_t = carve.take(fused ? c.dm.dv * c.dm.s : 0);
        floats = carve.used();
    }
};

// The dk/dv pass's walk over one key tile: calls pair(t, add) for each query tile of the kv
// head's group of query heads that the masks leave anything of, in order (add: false for the
// first, whose products overwrite dk_j and dv_j, true after). Zeroes the rows of dk and dv that
// no query sees, and, when this pass also writes dq (one key tile), the rows of dq that see no
// key.
template <class Pair>
void for_each_query_tile(const BackwardCall& c, const KeyTile& kt, Pair&& pair) {
    const Dims& dm = c.dm;
    const bool dq_here = c.path != FlashPath::key_tiles;
    bool add = false;
    const std::size_t first_row = query_begin(dm, c.mask.causal, kt.j0) / c.br * c.br;
    for (std::size_t g = 0; g < dm.group; ++g) {
        const std::size_t h = kt.hk * dm.group + g;
        if (dq_here) zero_rows(c.dq, kt.b, h, 0, first_row);  // rows that see no key
        for (std::size_t i0 = first_row; i0 < dm.t; i0 += c.br) {
            const QueryTile t = query_tile(dm, c.br, kt.b, h, i0);
            if (tile_skipped(c.mask, dm, kt.b, t.i0, t.rows, kt.j0, kt.cols)) {
                if (dq_here) zero_rows(c.dq, kt.b, h, t.i0, t.rows);
                continue;
            }
            pair(t, add);
            add = true;
        }
    }
    if (!add) {  // no query sees these keys
        zero_rows(c.dk, kt.b, kt.hk, kt.j0, kt.cols);
        zero_rows(c.dv, kt.b, kt.hk, kt.j0, kt.cols);
    }
}

// Asks for the key tile's keys and values and its group's first queries to be read into cache:
// the fused path calls it for the next task, whose rows then arrive while this one computes.
void prefetch_key_tile(const BackwardCall& c, const KeyTile& kt) {
    prefetch_rows(c.k.row(kt.b, kt.hk, kt.j0), kt.cols, c.k.row_stride);
    prefetch_rows(c.v.row(kt.b, kt.hk, kt.j0), kt.cols, c.v.row_stride);
    prefetch_rows(c.q.row(kt.b, kt.hk * c.dm.group, 0), std::min(c.br, c.dm.t), c.q.row_stride);
}

// Fused one-tile path of the dk/dv pass (the only key tile, at most causal): s and dp stay in
// registers (kernels::one_tile_backward, on Kᵀ and Vᵀ transposed per task), or p is read from
// the forward's kept weights (one_tile_backward_from_weights: no Kᵀ, no q·kᵀ, no exp); then
// dv_j (+)= pᵀ·dO_i, dk_j (+)= dsᵀ·q_i and dq_i = ds·k_j by one_tile_product. Bit-identical to
// backward_single_tile.
void backward_fused_one_tile(const BackwardCall& c, const KeyTile& kt, const BackwardScratch& s) {
    const Dims& dm = c.dm;
    const float* kj = c.k.row(kt.b, kt.hk, kt.j0);  // (bc, D) with k.row_stride
    if (!c.kept_weights) kernels::one_tile_transpose(kj, kt.cols, dm.d, c.k.row_stride, s.keys_t.data());
    kernels::one_tile_transpose(c.v.row(kt.b, kt.hk, kt.j0), kt.cols, dm.dv, c.v.row_stride, s.values_t.data());
    float* dkj = c.dk.row(kt.b, kt.hk, kt.j0);  // (bc, D) with dk.row_stride
    float* dvj = c.dv.row(kt.b, kt.hk, kt.j0);  // (bc, Dv) with dv.row_stride
    for_each_query_tile(c, kt, [&](const QueryTile& t, bool add) {
        const float* qi = c.q.row(t.b, t.h, t.i0);      // (br, D) with q.row_stride
        const float* doi = c.dout.row(t.b, t.h, t.i0);  // (br, Dv) with dout.row_stride
        const float* lse = c.lse + t.bh * dm.t + t.i0;
        const float* delta = c.delta + t.bh * dm.t + t.i0;
        const float* p = s.p.data();
        if (c.kept_weights) {
            p = c.kept_weights + (t.bh * dm.t + t.i0) * kernels::kOneTileLd;
            kernels::one_tile_backward_from_weights(doi, c.dout.row_stride, t.rows, dm.dv, s.values_t.data(),
                                                    kt.cols, c.factor, lse, delta, p, s.ds.data());
        } else {
            kernels::one_tile_backward(qi, c.q.row_stride, doi, c.dout.row_stride, t.rows, dm.d, dm.dv,
                                       s.keys_t.data(), s.values_t.data(), kt.cols, c.factor,
                                       causal_from(c.mask, dm, t.i0), lse, delta, s.p.data(), s.ds.data());
        }
        kernels::one_tile_product(true, p, kt.cols, t.rows, doi, c.dout.row_stride, dm.dv, dvj, c.dv.row_stride, add);
        kernels::one_tile_product(true, s.ds.data(), kt.cols, t.rows, qi, c.q.row_stride, dm.d, dkj, c.dk.row_stride,
                                  add);
        kernels::one_tile_product(false, s.ds.data(), t.rows, kt.cols, kj, c.k.row_stride, dm.d,
                                  c.dq.row(t.b, t.h, t.i0), c.dq.row_stride, false);
    });
}

// The steps every unfused tile pair shares, once s = q_i·k_jᵀ is in s.p and dp = dO_i·v_jᵀ in
// s.ds (both (rows, cols) with bc): mask s; p = exp(s·scale - lse), ds = p ⊙ (dp - delta)·scale;
// then context = p·v => dv_j (+)= pᵀ·dO_i, scores = q·kᵀ => dk_j (+)= dsᵀ·q_i.
void backward_tile_gradients(const BackwardCall& c, const QueryTile& t, const KeyTile& kt, const BackwardScratch& s,
                             bool add, float* matmul_scratch) {
    const Dims& dm = c.dm;
    if (c.mask.any()) {
        mask_tile<TileLayout::queries_by_keys>(c.mask, dm, t.b, t.h, raw_score_units(c.factor), t.i0, t.rows, kt.j0,
                                               kt.cols, s.p.data(), BC);
    }
    tile_step(c, t, kt.cols, s.p.data(), s.ds.data());
    // z = scale·q·kᵀ + bias: ds is dL/d(q·kᵀ) = scale·dL/dz, and dL/dbias = dL/dz. Each (b, h, i, j)
    // is visited once here (the dq pass recomputes ds but does not store it).
    if (c.dscores) {
        const float inv = 1.0f / c.factor;
        for (std::size_t r = 0; r < t.rows; ++r) {
            float* out = c.dscores + (t.bh * dm.t + t.i0 + r) * dm.s + kt.j0;
            for (std::size_t col = 0; col < kt.cols; ++col) out[col] = s.ds.data()[r * BC + col] * inv;
        }
    }
    const Accumulate acc = add ? Accumulate::yes : Accumulate::no;
    kernels::matmul_tn(s.p.data(), BC, c.dout.row(t.b, t.h, t.i0), c.dout.row_stride, c.dv.row(kt.b, kt.hk, kt.j0),
                       c.dv.row_stride, kt.cols, dm.dv, t.rows, acc, nullptr, matmul_scratch);
    kernels::matmul_tn(s.ds.data(), BC, c.q.row(t.b, t.h, t.i0), c.q.row_stride, c.dk.row(kt.b, kt.hk, kt.j0),
                       c.dk.row_stride, kt.cols, dm.d, t.rows, acc, nullptr, matmul_scratch);
}

// Single-tile path of the dk/dv pass (the only key tile, any mask): s and dp are matmul_nt
// products of q, dO, k, v read in place (no packing), and since this is the query tile's only
// key tile, dq_i = ds·k_j is its whole sum, written here.
void backward_single_tile(const BackwardCall& c, const KeyTile& kt, const BackwardScratch& s, float* matmul_scratch) {
    const Dims& dm = c.dm;
    const float* kj = c.k.row(kt.b, kt.hk, kt.j0);  // (bc, D) with k.row_stride
    for_each_query_tile(c, kt, [&](const QueryTile& t, bool add) {
        kernels::matmul_nt(c.q.row(t.b, t.h, t.i0), c.q.row_stride, kj, c.k.row_stride, s.p.data(), BC, t.rows,
                           kt.cols, dm.d, Accumulate::no, nullptr, matmul_scratch);
        kernels::matmul_nt(c.dout.row(t.b, t.h, t.i0), c.dout.row_stride, c.v.row(kt.b, kt.hk, kt.j0),
                           c.v.row_stride, s.ds.data(), BC, t.rows, kt.cols, dm.dv, Accumulate::no, nullptr,
                           matmul_scratch);
        backward_tile_gradients(c, t, kt, s, add, matmul_scratch);
        // scores = q·kᵀ  =>  dq_i = ds·k_j
        kernels::matmul_nn(s.ds.data(), BC, kj, c.k.row_stride, c.dq.row(t.b, t.h, t.i0), c.dq.row_stride, t.rows,
                           dm.d, kt.cols, Accumulate::no, nullptr, matmul_scratch);
    });
}

// Key-tiles path, dk/dv pass (one task per key tile): s and dp are flash_scores products of the
// query tile and output gradients packed as groups with the packed keys and values.
void backward_key_tile(const BackwardCall& c, const KeyTile& kt, const BackwardScratch& s, float* matmul_scratch) {
    const Dims& dm = c.dm;
    // With a block layout a query tile may write only some rows of dk_j and dv_j (its runs of live
    // keys): they start at zero and every product adds.
    const bool runs = c.mask.block_layout.size() > 0;
    if (runs) {
        zero_rows(c.dk, kt.b, kt.hk, kt.j0, kt.cols);
        zero_rows(c.dv, kt.b, kt.hk, kt.j0, kt.cols);
    }
    const std::size_t strip = kernels::flash_strip();
    for_each_query_tile(c, kt, [&](const QueryTile& t, bool add) {
        kernels::flash_pack_groups(c.q.row(t.b, t.h, t.i0), t.rows, dm.d, c.q.row_stride, 1.0f, s.queries.data());
        kernels::flash_pack_groups(c.dout.row(t.b, t.h, t.i0), t.rows, dm.dv, c.dout.row_stride, 1.0f,
                                   s.dout.data());
        for_each_live_key_run(c.mask, t.i0, t.rows, kt.j0, kt.cols, strip, [&](std::size_t k0, std::size_t cols) {
            const std::size_t strips = ceil_div(cols, strip);
            kernels::flash_scores(s.queries.data(), t.rows, dm.d, c.packed.keys(kt.bk) + k0 * dm.d, strips,
                                  s.p.data(), BC);
            kernels::flash_scores(s.dout.data(), t.rows, dm.dv, c.packed.values(kt.bk) + k0 * dm.dv, strips,
                                  s.ds.data(), BC);
            const KeyTile run{kt.b, kt.hk, kt.bk, k0, cols};
            backward_tile_gradients(c, t, run, s, add || runs, matmul_scratch);
        });
    });
}

// Key-tiles path, dq pass (one task per query tile, which owns those rows of dq): per key tile
// the query tile sees, s, dp, p and ds again, then scores = q·kᵀ => dq_i (+)= ds·k_j.
void backward_query_tile(const BackwardCall& c, const QueryTile& t, const BackwardScratch& s, float* matmul_scratch) {
    const Dims& dm = c.dm;
    const std::size_t bk = t.b * dm.kv_heads + t.hk, strip = kernels::flash_strip();
    const float* kh = c.k.head(t.b, t.hk);  // (S, D) with k.row_stride
    float* dqi = c.dq.row(t.b, t.h, t.i0);   // (br, D) with dq.row_stride
    kernels::flash_pack_groups(c.q.row(t.b, t.h, t.i0), t.rows, dm.d, c.q.row_stride, 1.0f, s.queries.data());
    kernels::flash_pack_groups(c.dout.row(t.b, t.h, t.i0), t.rows, dm.dv, c.dout.row_stride, 1.0f, s.dout.data());
    Accumulate acc = Accumulate::no;  // the first key tile overwrites dq_i
    const std::size_t j_end = key_end(dm, c.mask.causal, t.i0, t.rows);
    for (std::size_t j0 = 0; j0 < j_end; j0 += BC) {
        const std::size_t tile_cols = std::min(BC, j_end - j0);
        if (tile_skipped(c.mask, dm, t.b, t.i0, t.rows, j0, tile_cols)) continue;
        // each run of live keys of the tile; packed strips start every `strip` keys
        for_each_live_key_run(c.mask, t.i0, t.rows, j0, tile_cols, strip, [&](std::size_t k0, std::size_t cols) {
            const std::size_t strips = ceil_div(cols, strip);
            kernels::flash_scores(s.queries.data(), t.rows, dm.d, c.packed.keys(bk) + k0 * dm.d, strips, s.p.data(),
                                  BC);
            if (c.mask.any()) {
                mask_tile<TileLayout::queries_by_keys>(c.mask, dm, t.b, t.h, raw_score_units(c.factor), t.i0, t.rows,
                                                       k0, cols, s.p.data(), BC);
            }
            kernels::flash_scores(s.dout.data(), t.rows, dm.dv, c.packed.values(bk) + k0 * dm.dv, strips, s.ds.data(),
                                  BC);
            tile_step(c, t, cols, s.p.data(), s.ds.data());
            kernels::matmul_nn(s.ds.data(), BC, kh + k0 * c.k.row_stride, c.k.row_stride, dqi, c.dq.row_stride,
                               t.rows, dm.d, cols, acc, nullptr, matmul_scratch);
            acc = Accumulate::yes;
        });
    }
    if (acc == Accumulate::no) zero_rows(c.dq, t.b, t.h, t.i0, t.rows);  // these queries see no key
}

}  // namespace

std::size_t flash_query_tile() {
    const std::size_t strip = kernels::flash_strip();
    return ceil_div(kFlashQueryRows, strip) * strip;
}

namespace {

// Query rows of a call's tiles: flash_query_tile(), or one block row of a block layout whose
// smaller blocks are whole strips of the tile kernels (so no padded rows are computed) and whose
// rows start at a block boundary. A query tile of one block row meets only that row's live key
// blocks (for_each_live_key_run), not the union of several rows'.
std::size_t query_tile_rows(const AttentionMask& mask) {
    const std::size_t rows = flash_query_tile(), b = mask.block_size;
    if (mask.block_layout.size() == 0 || b >= rows || b % kernels::flash_strip() != 0 ||
        mask.block_row_offset % b != 0) {
        return rows;
    }
    return b;
}

}  // namespace

Tensor4 flash_attention_forward(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                                const ScaleOptions& scale, Tensor3* logsumexp, FlashAttentionStats* stats) {
    Tensor4 context;
    flash_attention_forward(q, k, v, mask, scale, logsumexp, stats, context);
    return context;
}

void flash_attention_forward(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                             const ScaleOptions& scale, Tensor3* logsumexp, FlashAttentionStats* stats,
                             Tensor4& context, Tensor2* one_tile_weights, Normalizer normalizer) {
    constexpr const char* where = "flash_attention_forward";
    const Dims dm = validate(q, k, v, mask, where);
    require_allocatable({dm.batch, dm.heads, dm.t, dm.dv}, where, "the context");
    // resize keeps the buffer when the shape is unchanged (a training loop's steps).
    context.resize({dm.batch, dm.heads, dm.t, dm.dv});
    flash_attention_forward(heads_of(q), heads_of(k), heads_of(v), mask, scale, logsumexp, stats, heads_of(context),
                            one_tile_weights, normalizer);
}

void flash_attention_forward(const ConstHeadsView& q, const ConstHeadsView& k, const ConstHeadsView& v,
                             const AttentionMask& mask, const ScaleOptions& scale, Tensor3* logsumexp,
                             FlashAttentionStats* stats, const HeadsView& context, Tensor2* one_tile_weights,
                             Normalizer normalizer) {
    constexpr const char* where = "flash_attention_forward";
    const Dims dm = validate(q, k, v, mask, where);
    require_heads(context, dm.batch, dm.heads, dm.t, dm.dv, where, "context (B, H, T, Dv)");
    const std::size_t br = query_tile_rows(mask), strip = kernels::flash_strip();
    float* const visible = pointwise(normalizer) ? thread_buffer<kVisibleCounts>(dm.batch * dm.t) : nullptr;  // (B, T) n_i
    if (visible) visible_key_counts(mask, dm.batch, dm.t, dm.s, visible);
    ForwardCall c{q, k, v, context, mask, dm, br, ceil_div(br, strip) * strip, scale.effective(dm.d),
                  forward_path(dm, mask, normalizer), kernels::flash_lazy_exp(), nullptr, nullptr, {},
                  normalizer, visible};
    // Every row of context is written by exactly one task (rows that see no key get zeros there),
    // so no zero fill first, unless there are no keys at all.
    if (dm.s == 0) {
        for (std::size_t b = 0; b < dm.batch; ++b)
            for (std::size_t h = 0; h < dm.heads; ++h) zero_rows(context, b, h, 0, dm.t);
    }
    if (logsumexp) {
        logsumexp->resize({dm.batch, dm.heads, dm.t});
        c.logsumexp = logsumexp->data();
    }
    if (c.path == FlashPath::key_tiles || c.path == FlashPath::pointwise_tiles) {
        c.packed = pack_forward_keys(k, v, dm, where);
    }
    if (one_tile_weights) {  // the fused path writes p there for the backward
        const std::size_t rows = c.path == FlashPath::fused_one_tile ? dm.batch * dm.heads * dm.t : 0;
        require_allocatable({rows, kernels::kOneTileLd}, where, "the one-tile weights");
        one_tile_weights->resize({rows, kernels::kOneTileLd});
        if (rows > 0) c.kept_weights = one_tile_weights->data();
    }

    // One task per (batch, head, query tile); each owns its rows of context and logsumexp.
    ScratchMeter meter;
    LazyTileCounts lazy_counts;
    const TileSlots slots(ForwardScratch(nullptr, c).floats, tile_matmul_floats(dm));
    const std::size_t q_tiles = ceil_div(dm.t, br);
    parallel_for(0, dm.batch * dm.heads * q_tiles, [&](std::size_t begin, std::size_t end) {
        TileScratch scratch(meter, slots);
        const ForwardScratch s(scratch.data(), c);
        LazyTally tally;
        for (std::size_t task = begin; task < end; ++task) {
            const std::size_t bh = task / q_tiles;
            const QueryTile t = query_tile(dm, br, bh / dm.heads, bh % dm.heads, (task % q_tiles) * br);
            switch (c.path) {
                case FlashPath::fused_one_tile: forward_fused_one_tile(c, t, s); break;
                case FlashPath::single_tile: forward_single_tile(c, t, s, scratch.matmul()); break;
                case FlashPath::key_tiles: forward_online_softmax(c, t, s, tally); break;
                case FlashPath::pointwise_tiles: forward_pointwise_tiles(c, t, s); break;
            }
            if (c.path == FlashPath::pointwise_tiles) write_log_visible(c, t);
            else write_logsumexp(c, t, s);
        }
        lazy_counts.add(tally);
    });
    if (stats) {
        stats->peak_scratch_bytes = meter.peak();
        stats->row_stat_bytes = logsumexp ? logsumexp->size() * sizeof(float) : 0;
        stats->packed_bytes = c.packed.floats(dm) * sizeof(float);
        stats->lazy_tiles = lazy_counts.tiles.load();
        stats->lazy_rescaled_rows = lazy_counts.rescaled_rows.load();
        stats->lazy_recomputed_tiles = lazy_counts.recomputed_tiles.load();
    }
}

void flash_attention_backward(const Tensor4& dcontext, const Tensor4& q, const Tensor4& k, const Tensor4& v,
                              const Tensor4& context, const Tensor3& logsumexp, const AttentionMask& mask,
                              const ScaleOptions& scale, Tensor4& dq, Tensor4& dk, Tensor4& dv,
                              FlashAttentionStats* stats, const Tensor2* one_tile_weights, Normalizer normalizer) {
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
                             mask, scale, heads_of(dq), heads_of(dk), heads_of(dv), stats, one_tile_weights, normalizer);
}

void flash_attention_backward(const ConstHeadsView& dcontext, const ConstHeadsView& q, const ConstHeadsView& k,
                              const ConstHeadsView& v, const ConstHeadsView& context, const Tensor3& logsumexp,
                              const AttentionMask& mask, const ScaleOptions& scale, const HeadsView& dq,
                              const HeadsView& dk, const HeadsView& dv, FlashAttentionStats* stats,
                              const Tensor2* one_tile_weights, Normalizer normalizer) {
    constexpr const char* where = "flash_attention_backward";
    const Dims dm = validate(q, k, v, mask, where);
    require_heads(dcontext, dm.batch, dm.heads, dm.t, dm.dv, where, "dcontext (B, H, T, Dv)");
    require_heads(context, dm.batch, dm.heads, dm.t, dm.dv, where, "context (B, H, T, Dv) from the forward call");
    require_shape(logsumexp,
                  {static_cast<std::ptrdiff_t>(dm.batch), static_cast<std::ptrdiff_t>(dm.heads),
                   static_cast<std::ptrdiff_t>(dm.t)},
                  where, "logsumexp (B, H, T) from the forward call");
    require_heads(dq, dm.batch, dm.heads, dm.t, dm.d, where, "dq (B, H, T, D)");
    require_heads(dk, dm.batch, dm.kv_heads, dm.s, dm.d, where, "dk (B, Hkv, S, D)");
    require_heads(dv, dm.batch, dm.kv_heads, dm.s, dm.dv, where, "dv (B, Hkv, S, Dv)");
    // dq, dk, dv are not zero-filled: each task overwrites the rows it owns with its first tile's
    // product and adds the others (in parallel, while they are in cache), and zeroes only rows
    // that no tile reaches.
    const std::size_t delta_size = dm.batch * dm.heads * dm.t;
    float* const delta = thread_buffer<kDeltaBuffer>(delta_size);
    // delta is the softmax Jacobian's; sigmoid and relu need each row's n_i instead.
    float* const visible = pointwise(normalizer) ? thread_buffer<kVisibleCounts>(dm.batch * dm.t) : nullptr;  // (B, T) n_i
    if (visible) visible_key_counts(mask, dm.batch, dm.t, dm.s, visible);
    if (!pointwise(normalizer)) output_gradient_dots(dcontext, context, dm, delta);
    const std::size_t br = query_tile_rows(mask);
    BackwardCall c{dcontext, q, k, v, dq, dk, dv, mask, dm, br, scale.effective(dm.d),
                   backward_path(dm, mask, normalizer), logsumexp.data(), delta, nullptr, {}, normalizer,
                   visible};
    if (c.path == FlashPath::key_tiles) c.packed = pack_backward_keys(k, v, dm, where);
    // The forward's weights, when it kept them for this call's shape: p is then read, not
    // recomputed from q·kᵀ.
    if (c.path == FlashPath::fused_one_tile && one_tile_weights &&
        one_tile_weights->shape(0) == dm.batch * dm.heads * dm.t && one_tile_weights->shape(1) == kernels::kOneTileLd) {
        c.kept_weights = one_tile_weights->data();
    }
    // The score bias's gradient sums over batch rows that share a bias: each task writes its
    // tiles' score gradients here (tiles no query sees stay 0), summed in batch order afterwards.
    std::vector<float> dscores;
    if (mask.score_bias_grad) {
        require_allocatable({dm.batch, dm.heads, dm.t, dm.s}, where, "the score gradients of the score bias");
        dscores.assign(dm.batch * dm.heads * dm.t * dm.s, 0.0f);
        c.dscores = dscores.data();
    }
    ScratchMeter meter;
    const TileSlots slots(BackwardScratch(nullptr, c).floats, tile_matmul_floats(dm));

    // dk, dv: one task per (batch, kv head, key tile), which owns those rows of dk and dv; it
    // visits the query heads of its group and their query tiles in order. With one key tile it
    // also writes dq (each query tile's only key tile), and the dq pass is skipped.
    const std::size_t k_tiles = ceil_div(dm.s, BC);
    if (k_tiles == 0) {  // no keys: no task owns dq
        for (std::size_t b = 0; b < dm.batch; ++b)
            for (std::size_t h = 0; h < dm.heads; ++h) zero_rows(dq, b, h, 0, dm.t);
    }
    parallel_for(0, dm.batch * dm.kv_heads * k_tiles, [&](std::size_t begin, std::size_t end) {
        TileScratch scratch(meter, slots);
        const BackwardScratch s(scratch.data(), c);
        for (std::size_t task = begin; task < end; ++task) {
            const KeyTile kt = key_tile(dm, task);
            switch (c.path) {
                case FlashPath::fused_one_tile:
                    if (task + 1 < end) prefetch_key_tile(c, key_tile(dm, task + 1));
                    backward_fused_one_tile(c, kt, s);
                    break;
                case FlashPath::single_tile: backward_single_tile(c, kt, s, scratch.matmul()); break;
                case FlashPath::key_tiles: backward_key_tile(c, kt, s, scratch.matmul()); break;
                case FlashPath::pointwise_tiles: break;  // a forward path only (backward_path)
            }
        }
    });
    // dq with several key tiles: one task per (batch, head, query tile), which owns those rows.
    const std::size_t q_tiles = c.path == FlashPath::key_tiles ? ceil_div(dm.t, br) : 0;
    parallel_for(0, dm.batch * dm.heads * q_tiles, [&](std::size_t begin, std::size_t end) {
        TileScratch scratch(meter, slots);
        const BackwardScratch s(scratch.data(), c);
        for (std::size_t task = begin; task < end; ++task) {
            const std::size_t bh = task / q_tiles;
            backward_query_tile(c, query_tile(dm, br, bh / dm.heads, bh % dm.heads, (task % q_tiles) * br), s,
                                scratch.matmul());
        }
    });
    if (c.dscores) mask.accumulate_score_bias_grad(c.dscores, dm.batch);
    if (stats) {
        stats->peak_scratch_bytes = meter.peak();
        stats->row_stat_bytes = delta_size * sizeof(float);
        stats->packed_bytes = c.packed.floats(dm) * sizeof(float);
    }
}

}  // namespace attnlab
