// FlashAttention's forward tasks (flash/forward.hpp): one function per path (path.hpp), the
// lazy-reference variant of the online softmax's key tiles, and the task loop.
//
// Legend: B batch, H query heads, Hkv key/value heads (group = H / Hkv query heads share one),
// T queries, S keys, D head dim of q and k, Dv head dim of v; br x bc one score tile
// (br <= flash_query_tile() query rows, bc <= kFlashKeyTile keys).
//
// forward_online_softmax takes key tiles after the first by forward_lazy_reference_tile where
// the kernel table prefers it (kernels::flash_lazy_exp(): WebAssembly) and no mask hides a pair
// of the tile.
#include "forward.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/flash_tiles.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "scratch.hpp"
#include "tile_mask.hpp"

namespace attnlab::flash {

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

namespace {

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

}  // namespace

ForwardUse run_forward_tasks(const ForwardCall& c) {
    const Dims& dm = c.dm;
    const std::size_t br = c.br;
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
    return ForwardUse{meter.peak(), lazy_counts.tiles.load(), lazy_counts.rescaled_rows.load(),
                      lazy_counts.recomputed_tiles.load()};
}

}  // namespace attnlab::flash
