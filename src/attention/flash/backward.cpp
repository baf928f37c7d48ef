// FlashAttention's backward tasks (flash/backward.hpp): one function per path (path.hpp) and
// pass, the normaliser's per-tile step, and the two task loops.
//
// Legend: B batch, H query heads, Hkv key/value heads (group = H / Hkv query heads share one),
// T queries, S keys, D head dim of q and k, Dv head dim of v; br x bc one score tile
// (br <= flash_query_tile() query rows, bc <= kFlashKeyTile keys).
//
// The backward's per-tile step from scores to p and ds is the normaliser's:
// softmax_tile_step (p = exp(s·scale - lse), ds = p ⊙ (dp - delta)·scale) or
// pointwise_tile_step (p = f(s·scale), ds = f'(p) ⊙ dp·scale), chosen once per tile by tile_step.
#include "backward.hpp"

#include <algorithm>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/flash_tiles.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "scratch.hpp"
#include "tile_mask.hpp"

namespace attnlab::flash {

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

namespace {

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

// The dk/dv pass: one task per (batch, kv head, key tile), which owns those rows of dk and dv;
// it visits the query heads of its group and their query tiles in order. With one key tile it
// also writes dq (each query tile's only key tile), and the dq pass is skipped.
void run_key_tile_pass(const BackwardCall& c, ScratchMeter& meter, const TileSlots& slots) {
    const Dims& dm = c.dm;
    const std::size_t k_tiles = ceil_div(dm.s, BC);
    if (k_tiles == 0) {  // no keys: no task owns dq
        for (std::size_t b = 0; b < dm.batch; ++b)
            for (std::size_t h = 0; h < dm.heads; ++h) zero_rows(c.dq, b, h, 0, dm.t);
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
}

// The dq pass with several key tiles: one task per (batch, head, query tile), which owns those rows.
void run_query_tile_pass(const BackwardCall& c, ScratchMeter& meter, const TileSlots& slots) {
    const Dims& dm = c.dm;
    const std::size_t br = c.br;
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
}

}  // namespace

std::size_t run_backward_tasks(const BackwardCall& c) {
    ScratchMeter meter;
    const TileSlots slots(BackwardScratch(nullptr, c).floats, tile_matmul_floats(c.dm));
    run_key_tile_pass(c, meter, slots);
    run_query_tile_pass(c, meter, slots);
    return meter.peak();
}

}  // namespace attnlab::flash
