// FlashAttention's entry points (attention/flash_attention.hpp). Each driver validates its
// input, picks one of the four paths by its named predicates (path.hpp), packs what that path
// needs and runs one task loop over (batch, head, query tile) tasks (forward.cpp), or over
// (batch, kv head, key tile) and then (batch, head, query tile) tasks (backward.cpp).
//
// The rest of the folder: geometry.hpp (a call's dimensions and tiles), tile_mask.hpp (what the
// mask does to one tile: skipped whole, runs of live keys, masked scores), scratch.hpp (each
// task's scratch, a struct of named spans in its thread's slot), path.hpp (the paths and the
// predicates that choose them), forward.cpp and backward.cpp (one per-task function per path).
//
// The per-tile steps are ISA-dispatched SIMD kernels: score products and the forward's softmax
// and p·V on operands packed once per head (kernels/flash_tiles.hpp; the forward stores a score
// tile keys by queries), the backward's softmax step (kernels::flash_backward_tile,
// kernels/softmax.hpp) and its gradient products (the blocked matmul, which runs inline inside a
// pool task); the fused one-tile kernels keep the scores in registers and are bit-identical to
// the single-tile path. Everything else here is index arithmetic, masks and the split of work
// over threads.
#include "attnlab/attention/flash_attention.hpp"

#include <vector>

#include "../task_slots.hpp"
#include "../visible_counts.hpp"
#include "attnlab/core/error.hpp"
#include "backward.hpp"
#include "forward.hpp"
#include "geometry.hpp"
#include "path.hpp"
#include "scratch.hpp"

namespace attnlab {

namespace flash {
namespace {

// (B, T) n_i, each query's visible keys, for sigmoid and relu (null for softmax), in the calling
// thread's buffer.
const float* visible_counts_for(Normalizer normalizer, const AttentionMask& mask, const Dims& dm) {
    if (!pointwise(normalizer)) return nullptr;
    float* const visible = thread_buffer<kVisibleCounts>(dm.batch * dm.t);
    visible_key_counts(mask, dm.batch, dm.t, dm.s, visible);
    return visible;
}

// The shapes flash_attention_backward's views must have besides q, k, v (validate).
void require_backward_shapes(const ConstHeadsView& dcontext, const ConstHeadsView& context, const Tensor3& logsumexp,
                             const HeadsView& dq, const HeadsView& dk, const HeadsView& dv, const Dims& dm,
                             const char* where) {
    require_heads(dcontext, dm.batch, dm.heads, dm.t, dm.dv, where, "dcontext (B, H, T, Dv)");
    require_heads(context, dm.batch, dm.heads, dm.t, dm.dv, where, "context (B, H, T, Dv) from the forward call");
    require_shape(logsumexp,
                  {static_cast<std::ptrdiff_t>(dm.batch), static_cast<std::ptrdiff_t>(dm.heads),
                   static_cast<std::ptrdiff_t>(dm.t)},
                  where, "logsumexp (B, H, T) from the forward call");
    require_heads(dq, dm.batch, dm.heads, dm.t, dm.d, where, "dq (B, H, T, D)");
    require_heads(dk, dm.batch, dm.kv_heads, dm.s, dm.d, where, "dk (B, Hkv, S, D)");
    require_heads(dv, dm.batch, dm.kv_heads, dm.s, dm.dv, where, "dv (B, Hkv, S, Dv)");
}

}  // namespace
}  // namespace flash

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
    const flash::Dims dm = flash::validate(q, k, v, mask, where);
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
    using flash::FlashPath;
    constexpr const char* where = "flash_attention_forward";
    const flash::Dims dm = flash::validate(q, k, v, mask, where);
    flash::require_heads(context, dm.batch, dm.heads, dm.t, dm.dv, where, "context (B, H, T, Dv)");
    const std::size_t br = flash::query_tile_rows(mask), strip = kernels::flash_strip();
    flash::ForwardCall c{q, k, v, context, mask, dm, br, flash::ceil_div(br, strip) * strip, scale.effective(dm.d),
                         flash::forward_path(dm, mask, normalizer), kernels::flash_lazy_exp(), nullptr, nullptr, {},
                         normalizer, flash::visible_counts_for(normalizer, mask, dm)};
    // Every row of context is written by exactly one task (rows that see no key get zeros there),
    // so no zero fill first, unless there are no keys at all.
    if (dm.s == 0) {
        for (std::size_t b = 0; b < dm.batch; ++b)
            for (std::size_t h = 0; h < dm.heads; ++h) flash::zero_rows(context, b, h, 0, dm.t);
    }
    if (logsumexp) {
        logsumexp->resize({dm.batch, dm.heads, dm.t});
        c.logsumexp = logsumexp->data();
    }
    if (c.path == FlashPath::key_tiles || c.path == FlashPath::pointwise_tiles) {
        c.packed = flash::pack_forward_keys(k, v, dm, where);
    }
    if (one_tile_weights) {  // the fused path writes p there for the backward
        const std::size_t rows = c.path == FlashPath::fused_one_tile ? dm.batch * dm.heads * dm.t : 0;
        require_allocatable({rows, kernels::kOneTileLd}, where, "the one-tile weights");
        one_tile_weights->resize({rows, kernels::kOneTileLd});
        if (rows > 0) c.kept_weights = one_tile_weights->data();
    }
    const flash::ForwardUse use = flash::run_forward_tasks(c);
    if (stats) {
        stats->peak_scratch_bytes = use.peak_scratch_bytes;
        stats->row_stat_bytes = logsumexp ? logsumexp->size() * sizeof(float) : 0;
        stats->packed_bytes = c.packed.floats(dm) * sizeof(float);
        stats->lazy_tiles = use.lazy_tiles;
        stats->lazy_rescaled_rows = use.lazy_rescaled_rows;
        stats->lazy_recomputed_tiles = use.lazy_recomputed_tiles;
    }
}

void flash_attention_backward(const Tensor4& dcontext, const Tensor4& q, const Tensor4& k, const Tensor4& v,
                              const Tensor4& context, const Tensor3& logsumexp, const AttentionMask& mask,
                              const ScaleOptions& scale, Tensor4& dq, Tensor4& dk, Tensor4& dv,
                              FlashAttentionStats* stats, const Tensor2* one_tile_weights, Normalizer normalizer) {
    constexpr const char* where = "flash_attention_backward";
    const flash::Dims dm = flash::validate(q, k, v, mask, where);
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
    using flash::FlashPath;
    constexpr const char* where = "flash_attention_backward";
    const flash::Dims dm = flash::validate(q, k, v, mask, where);
    flash::require_backward_shapes(dcontext, context, logsumexp, dq, dk, dv, dm, where);
    // dq, dk, dv are not zero-filled: each task overwrites the rows it owns with its first tile's
    // product and adds the others (in parallel, while they are in cache), and zeroes only rows
    // that no tile reaches.
    const std::size_t delta_size = dm.batch * dm.heads * dm.t;
    float* const delta = thread_buffer<flash::kDeltaBuffer>(delta_size);
    // delta is the softmax Jacobian's; sigmoid and relu need each row's n_i instead.
    const float* const visible = flash::visible_counts_for(normalizer, mask, dm);
    if (!flash::pointwise(normalizer)) flash::output_gradient_dots(dcontext, context, dm, delta);
    flash::BackwardCall c{dcontext, q, k, v, dq, dk, dv, mask, dm, flash::query_tile_rows(mask),
                          scale.effective(dm.d), flash::backward_path(dm, mask, normalizer), logsumexp.data(), delta,
                          nullptr, {}, normalizer, visible};
    if (c.path == FlashPath::key_tiles) c.packed = flash::pack_backward_keys(k, v, dm, where);
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
    const std::size_t peak_scratch_bytes = flash::run_backward_tasks(c);
    if (c.dscores) mask.accumulate_score_bias_grad(c.dscores, dm.batch);
    if (stats) {
        stats->peak_scratch_bytes = peak_scratch_bytes;
        stats->row_stat_bytes = delta_size * sizeof(float);
        stats->packed_bytes = c.packed.floats(dm) * sizeof(float);
    }
}

}  // namespace attnlab
