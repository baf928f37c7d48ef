// Scaled dot-product attention: the gate between the two implementations, and the recorded
// ("math") path — the full (T, S) matrix per (batch, head), every stage observable — which is
// the reference the flash path (src/attention/flash/) is tested against.
#include "attnlab/attention/scaled_dot_product.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "attention_inputs.hpp"
#include "task_slots.hpp"
#include "visible_counts.hpp"

namespace attnlab {

float ScaleOptions::effective(std::size_t head_dim) const {
    if (!enabled) return 1.0f;
    if (factor) return *factor;
    return 1.0f / std::sqrt(static_cast<float>(head_dim));
}

void detail::require_attention_inputs(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                      const AttentionMask& mask, const char* where) {
    const std::size_t batch = q.shape(0), heads = q.shape(1), t = q.shape(2), d = q.shape(3);
    require_shape(k, {static_cast<std::ptrdiff_t>(batch), -1, -1, static_cast<std::ptrdiff_t>(d)}, where,
                  "k (B, Hkv, S, D) matching q (B, H, T, D)");
    const std::size_t kv_heads = k.shape(1), s = k.shape(2);
    require_shape(v, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(kv_heads),
                      static_cast<std::ptrdiff_t>(s), -1},
                  where, "v (B, Hkv, S, Dv) matching k");
    if (kv_heads == 0 || heads % kv_heads != 0) {
        fail<ConfigError>(where, ": query heads (", heads, ") must be a multiple of key/value heads (", kv_heads,
                          ")");
    }
    mask.validate(batch, t, s, where, heads);
}

namespace {
// The (T, S) stages only the recorded path has.
constexpr Stage kMatrixStages[] = {Stage::scores, Stage::scaled, Stage::masked, Stage::weights};

// Reports each (batch, head) slice of context (B, H, T, Dv) as Stage::context.
void observe_context(StageObserver* observer, const Tensor4& context) {
    if (!observer || !observer->wants(Stage::context)) return;
    const std::size_t t = context.shape(2), dv = context.shape(3);
    for (std::size_t b = 0; b < context.shape(0); ++b) {
        for (std::size_t h = 0; h < context.shape(1); ++h) {
            observe(observer, Stage::context, b, static_cast<std::ptrdiff_t>(h), t, dv, dv,
                    context.data() + (b * context.shape(1) + h) * t * dv);
        }
    }
}
}  // namespace

std::size_t AttentionCache::bytes() const {
    return (weights.size() + logsumexp.size() + context.size() + one_tile_weights.size()) * sizeof(float) +
           mask.key_padding.size() +
           mask.explicit_mask.size() + mask.block_layout.size();
}

bool can_use_flash(const StageObserver* observer, const AttentionCache* cache, std::vector<std::string>* reasons,
                   const PrecisionOptions& precision) {
    bool ok = true;
    if (!precision.is_plain()) {
        ok = false;
        if (reasons) {
            reasons->push_back("precision '" + std::string(precision_name(precision.format)) + "'" +
                               (precision.stable_softmax ? "" : " with the naive softmax") +
                               " is emulated on the recorded path only");
        }
    }
    if (observer) {
        for (Stage stage : kMatrixStages) {
            if (!observer->wants(stage)) continue;
            ok = false;
            if (reasons) {
                reasons->push_back("a StageObserver wants the (T, S) stage '" + std::string(stage_name(stage)) + "'");
            }
        }
    }
    if (cache && cache->need_weights) {
        ok = false;
        if (reasons) reasons->push_back("the AttentionCache asks for the (B, H, T, S) weights (need_weights)");
    }
    return ok;
}

Tensor4 scaled_dot_product_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                     const AttentionMask& mask, const ScaleOptions& scale,
                                     StageObserver* observer, AttentionCache* cache, SdpBackend backend,
                                     Normalizer normalizer, const PrecisionOptions& precision) {
    Tensor4 context;
    scaled_dot_product_attention(q, k, v, mask, scale, observer, cache, backend, context, normalizer, precision);
    return context;
}

namespace {

// The flash path, when the backend allows it and can_use_flash says the call can take it (with
// SdpBackend::flash, ConfigError listing the reasons when it cannot). Returns whether it ran.
bool forward_on_flash(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                      const ScaleOptions& scale, StageObserver* observer, AttentionCache* cache, SdpBackend backend,
                      Tensor4& context, Normalizer normalizer, const PrecisionOptions& precision, const char* where) {
    if (backend == SdpBackend::math) return false;
    // The reasons are only spelled out for an error (auto falls back silently, allocating nothing).
    std::vector<std::string> reasons;
    if (can_use_flash(observer, cache, backend == SdpBackend::flash ? &reasons : nullptr, precision)) {
        flash_attention_forward(q, k, v, mask, scale, cache ? &cache->logsumexp : nullptr, nullptr, context, nullptr,
                                normalizer);
        observe_context(observer, context);
        if (cache) {
            cache->flash = true;
            cache->normalizer = normalizer;
            cache->weights = Tensor4();
            if (&cache->context != &context) cache->context = context;
            cache->mask = mask;
        }
        return true;
    }
    if (backend == SdpBackend::flash) {
        std::string why;
        for (const std::string& r : reasons) why += (why.empty() ? "" : "; ") + r;
        fail<ConfigError>(where, ": the flash backend cannot serve this call: ", why);
    }
    return false;
}

// What every (batch, head) of one recorded forward reads.
struct MathForward {
    const AttentionMask& mask;
    StageObserver* observer;
    float factor;               // the scale
    Normalizer normalizer;
    const PrecisionOptions& precision;
    const float* visible;       // sigmoid, relu: (B, T) n_i; null for softmax
    std::size_t t, s, d, dv;
};

// One (batch, head) of the recorded path, one stage at a time, each observed (and rounded to
// the emulated format): scores = q·kᵀ, scaled, masked, weights, context = weights·v.
// qh (T, D), kh (S, D), vh (S, Dv) -> w (T, S) the weights, ch (T, Dv) the context.
void math_head_forward(const MathForward& c, std::size_t b, std::size_t h, const float* qh, const float* kh,
                       const float* vh, float* w, float* ch, float* packing, FlushedCells& cells) {
    const std::size_t t = c.t, s = c.s, d = c.d, dv = c.dv;
    const Precision format = c.precision.format;  // fp32: every rounding below is a no-op
    StageObserver* const observer = c.observer;
    const auto head = static_cast<std::ptrdiff_t>(h);
    kernels::matmul_nt(qh, d, kh, d, w, s, t, s, d, Accumulate::no, nullptr, packing);
    observe(observer, Stage::scores, b, head, t, s, s, w, round_observed(observer, Stage::scores, format, w, t, s, cells));
    if (c.factor != 1.0f) {
        for (std::size_t i = 0; i < t * s; ++i) w[i] *= c.factor;
    }
    observe(observer, Stage::scaled, b, head, t, s, s, w, round_observed(observer, Stage::scaled, format, w, t, s, cells));
    if (c.mask.any()) {
        c.mask.apply(w, b, t, s, s);
        c.mask.add_score_bias(w, b, h, 0, t, 0, s, s, 1.0f);
    }
    observe(observer, Stage::masked, b, head, t, s, s, w);
    // The softmax has its own emulation (softmax_precision, stable_softmax); sigmoid and relu
    // compute in fp32 and round the weights they store.
    const FlushedCells* flushed = nullptr;
    if (c.normalizer == Normalizer::softmax && !c.precision.is_plain()) {
        cells.clear();
        const bool mark = observer && observer->wants(Stage::weights);
        softmax_rows_emulated(w, t, s, s, c.precision, mark ? &cells : nullptr);
        flushed = mark ? &cells : nullptr;
    } else {
        normalize_rows(c.normalizer, w, t, s, s, c.visible ? c.visible + b * t : nullptr);
        flushed = round_observed(observer, Stage::weights, format, w, t, s, cells);
    }
    observe(observer, Stage::weights, b, head, t, s, s, w, flushed);
    kernels::matmul_nn(w, s, vh, dv, ch, dv, t, dv, s, Accumulate::no, nullptr, packing);
    observe(observer, Stage::context, b, head, t, dv, dv, ch, round_observed(observer, Stage::context, format, ch, t, dv, cells));
}

}  // namespace

void scaled_dot_product_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                                  const ScaleOptions& scale, StageObserver* observer, AttentionCache* cache,
                                  SdpBackend backend, Tensor4& context, Normalizer normalizer,
                                  const PrecisionOptions& precision) {
    constexpr const char* where = "scaled_dot_product_attention";
    detail::require_attention_inputs(q, k, v, mask, where);
    if (forward_on_flash(q, k, v, mask, scale, observer, cache, backend, context, normalizer, precision, where)) return;
    require_allocatable({q.shape(0), q.shape(1), q.shape(2), k.shape(2)}, where, "the (B, H, T, S) attention matrix");
    const std::size_t batch = q.shape(0), heads = q.shape(1), t = q.shape(2), d = q.shape(3);
    const std::size_t kv_heads = k.shape(1), s = k.shape(2), dv = v.shape(3);
    const std::size_t group = heads / kv_heads;

    context.resize({batch, heads, t, dv});
    const bool pointwise = normalizer != Normalizer::softmax;
    if (cache) {
        cache->flash = false;
        cache->normalizer = normalizer;
        cache->weights.resize({batch, heads, t, s});
        cache->logsumexp = Tensor3();
        if (&cache->context != &context) cache->context = Tensor4();
        cache->mask = pointwise ? mask : AttentionMask();
        // The backward adds the score bias's gradient (the weights hold the rest of the mask).
        cache->mask.score_bias = mask.score_bias;
        cache->mask.score_bias_grad = mask.score_bias_grad;
    }
    // n_i per (batch row, query) for sigmoid and relu (softmax needs none).
    float* const visible = pointwise ? thread_buffer<kVisibleCounts>(batch * t) : nullptr;  // (B, T)
    if (visible) visible_key_counts(mask, batch, t, s, visible);
    const MathForward call{mask, observer, scale.effective(d), normalizer, precision, visible, t, s, d, dv};

    // One (batch, head) pair per task. With a cache (training) the score matrix is computed
    // directly into it (no extra copy); without one (inference) it lives in a buffer of the
    // task's own, freed after the call (a grow-only one would hold O(T·S) per thread for good).
    // The matmul calls pack into the task's slot (see task_slots.hpp: no worker grows a buffer
    // of its own, so a training step allocates nothing here).
    const TaskSlots<kMathTaskBuffer> slots(
        0, std::max(kernels::matmul_scratch_floats(s, d), kernels::matmul_scratch_floats(dv, s)));
    parallel_for(0, batch * heads, [&](std::size_t begin, std::size_t end) {
        std::vector<float> scratch(cache ? 0 : t * s);
        float* const packing = slots.slot();
        FlushedCells cells;  // a traced stage's flushed cells (round_observed)
        for (std::size_t bh = begin; bh < end; ++bh) {
            const std::size_t b = bh / heads, h = bh % heads, hk = h / group;
            const float* qh = q.data() + bh * t * d;                    // (T, D)
            const float* kh = k.data() + (b * kv_heads + hk) * s * d;   // (S, D)
            const float* vh = v.data() + (b * kv_heads + hk) * s * dv;  // (S, Dv)
            float* w = cache ? cache->weights.data() + bh * t * s : scratch.data();  // (T, S)
            float* ch = context.data() + bh * t * dv;                               // (T, Dv)
            math_head_forward(call, b, h, qh, kh, vh, w, ch, packing, cells);
        }
    });
}

}  // namespace attnlab

namespace attnlab {

namespace {

// What every query head of one recorded backward reads.
struct MathBackward {
    Normalizer normalizer;
    float factor;          // the scale
    Precision format;      // fp32: every rounding is a no-op
    const float* visible;  // sigmoid, relu: (B, T) n_i; null for softmax
    std::size_t t, s, d, dv;
};

// The backward of math_head_forward for one query head of batch row b, from its weights w (T, S)
// and dcontext dc (T, Dv): dq (T, D) overwritten; dk (S, D) and dv (S, Dv) of its kv head
// accumulate (the group's heads share them); dscores (T, S), when not null, gets dL/dmasked (the
// score bias's gradient before the sum over batch rows). dw: (T, S) scratch.
void math_head_backward(const MathBackward& c, std::size_t b, const float* w, const float* dc, const float* qh,
                        const float* kh, const float* vh, float* dqh, float* dkh, float* dvh, float* dscores,
                        float* dw, float* packing) {
    const std::size_t t = c.t, s = c.s, d = c.d, dvw = c.dv;
    const Precision format = c.format;
    // context = weights·v  =>  dweights = dcontext·vᵀ, dv += weightsᵀ·dcontext
    kernels::matmul_nt(dc, dvw, vh, dvw, dw, s, t, s, dvw, Accumulate::no, nullptr, packing);
    round_span(format, dw, t * s);
    kernels::matmul_tn(w, s, dc, dvw, dvh, dvw, s, dvw, t, Accumulate::yes, nullptr, packing);
    // weights = normalizer(masked): masked entries have weight 0 and get gradient 0.
    // The naive softmax has the same weights, so the same Jacobian.
    normalize_rows_backward(c.normalizer, w, dw, t, s, s, c.visible ? c.visible + b * t : nullptr);
    round_span(format, dw, t * s);
    // masked = scaled + bias  =>  dbias = dmasked (summed over the batch rows by the caller)
    if (dscores) std::copy(dw, dw + t * s, dscores);
    // scaled = scores·factor
    if (c.factor != 1.0f) {
        for (std::size_t i = 0; i < t * s; ++i) dw[i] *= c.factor;
    }
    round_span(format, dw, t * s);
    // scores = q·kᵀ  =>  dq = dscores·k, dk += dscoresᵀ·q
    kernels::matmul_nn(dw, s, kh, d, dqh, d, t, d, s, Accumulate::no, nullptr, packing);
    round_span(format, dqh, t * d);
    kernels::matmul_tn(dw, s, qh, d, dkh, d, s, d, t, Accumulate::yes, nullptr, packing);
}

}  // namespace

void scaled_dot_product_attention_backward(const Tensor4& dcontext, const Tensor4& q, const Tensor4& k,
                                           const Tensor4& v, const AttentionCache& cache, const ScaleOptions& scale,
                                           Tensor4& dq, Tensor4& dk, Tensor4& dv, const PrecisionOptions& precision) {
    if (cache.flash) {
        flash_attention_backward(dcontext, q, k, v, cache.context, cache.logsumexp, cache.mask, scale, dq, dk, dv,
                                 nullptr, nullptr, cache.normalizer);
        return;
    }
    constexpr const char* where = "scaled_dot_product_attention_backward";
    const std::size_t batch = q.shape(0), heads = q.shape(1), t = q.shape(2), d = q.shape(3);
    const std::size_t kv_heads = k.shape(1), s = k.shape(2), dvw = v.shape(3);
    require_shape(dcontext, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(heads),
                             static_cast<std::ptrdiff_t>(t), static_cast<std::ptrdiff_t>(dvw)},
                  where, "dcontext (B, H, T, Dv)");
    require_shape(cache.weights, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(heads),
                                  static_cast<std::ptrdiff_t>(t), static_cast<std::ptrdiff_t>(s)},
                  where, "cache.weights (B, H, T, S) from the forward call");
    const std::size_t group = heads / kv_heads;
    const float factor = scale.effective(d);
    const Precision format = precision.format;  // fp32: every round_span below is a no-op
    // The gradients keep their storage when they already have the shapes (a training step then
    // allocates nothing here); dq is overwritten below, dk and dv accumulate from zero.
    if (dq.shape() != q.shape()) dq = Tensor4::from_shape(q.shape());
    if (dk.shape() != k.shape()) dk = Tensor4::from_shape(k.shape());
    if (dv.shape() != v.shape()) dv = Tensor4::from_shape(v.shape());
    dk.fill(0.0f);
    dv.fill(0.0f);
    const bool pointwise = cache.normalizer != Normalizer::softmax;
    float* const visible = pointwise ? thread_buffer<kVisibleCounts>(batch * t) : nullptr;  // (B, T) n_i
    if (visible) visible_key_counts(cache.mask, batch, t, s, visible);
    const MathBackward call{cache.normalizer, factor, format, visible, t, s, d, dvw};

    // One (batch, kv head) per task, so the query heads that share a kv head accumulate into
    // its dk and dv without races.
    // Each task's slot: dw (T, S), the gradient of the weights, then of the scores; then the
    // matmul calls' packing (task_slots.hpp).
    const std::size_t packing_floats =
        std::max({kernels::matmul_scratch_floats(s, dvw), kernels::matmul_scratch_floats(dvw, t),
                  kernels::matmul_scratch_floats(d, s), kernels::matmul_scratch_floats(d, t)});
    const TaskSlots<kMathTaskBuffer> slots(t * s, packing_floats);
    // The score bias's gradient: each (batch, head)'s dmasked here, summed in batch order after.
    std::vector<float> dscores;
    if (cache.mask.score_bias_grad) {
        cache.mask.validate(batch, t, s, where, heads);
        require_allocatable({batch, heads, t, s}, where, "the score gradients of the score bias");
        dscores.resize(batch * heads * t * s);
    }
    parallel_for(0, batch * kv_heads, [&](std::size_t begin, std::size_t end) {
        float* const dw = slots.slot();
        float* const packing = dw + slots.tile_floats();
        for (std::size_t bk = begin; bk < end; ++bk) {
            const std::size_t b = bk / kv_heads, hk = bk % kv_heads;
            const float* kh = k.data() + bk * s * d;     // (S, D)
            const float* vh = v.data() + bk * s * dvw;   // (S, Dv)
            float* dkh = dk.data() + bk * s * d;         // (S, D)
            float* dvh = dv.data() + bk * s * dvw;       // (S, Dv)
            for (std::size_t g = 0; g < group; ++g) {
                const std::size_t bh = b * heads + hk * group + g;
                math_head_backward(call, b, cache.weights.data() + bh * t * s, dcontext.data() + bh * t * dvw,
                                   q.data() + bh * t * d, kh, vh, dq.data() + bh * t * d, dkh, dvh,
                                   dscores.empty() ? nullptr : dscores.data() + bh * t * s, dw, packing);
            }
            // dk and dv accumulate the group's heads in float32 and are rounded when stored.
            round_span(format, dkh, s * d);
            round_span(format, dvh, s * dvw);
        }
    });
    if (!dscores.empty()) cache.mask.accumulate_score_bias_grad(dscores.data(), batch);
}

}  // namespace attnlab

namespace attnlab {

std::size_t softmax_rows_emulated(float* w, std::size_t rows, std::size_t cols, std::size_t ld,
                                  const PrecisionOptions& precision, FlushedCells* cells) {
    const Precision format = precision.format;
    const bool every_step = precision.softmax == SoftmaxPrecision::same;
    if (precision.stable_softmax && !every_step) {
        // The float32 softmax of the rounded scores, its weights rounded when stored.
        kernels::softmax_rows(w, rows, cols, ld);
        if (!cells) return round_rows(format, w, rows, cols, ld);
        const std::size_t before = cells->size();
        round_rows_marking(format, w, rows, cols, ld, *cells);
        return cells->size() - before;
    }
    const std::size_t cells_before = cells ? cells->size() : 0;
    // A step's result as the softmax stores it: rounded with softmax 'same', float32 otherwise.
    const auto step = [&](float x) { return every_step ? round_to(format, x) : x; };
    std::size_t flushed = 0;
    for (std::size_t i = 0; i < rows; ++i) {
        float* r = w + i * ld;  // (cols)
        float row_max = -std::numeric_limits<float>::infinity();
        for (std::size_t j = 0; j < cols; ++j) row_max = r[j] > row_max ? r[j] : row_max;
        if (row_max == -std::numeric_limits<float>::infinity()) {  // no visible key (or only NaN)
            bool any_nan = false;
            for (std::size_t j = 0; j < cols; ++j) any_nan = any_nan || std::isnan(r[j]);
            std::fill(r, r + cols, any_nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
            continue;
        }
        // stable: exp(s - max) <= 1; naive: exp(s), which overflows the format for large s.
        const float shift = precision.stable_softmax ? row_max : 0.0f;
        float sum = 0.0f;
        for (std::size_t j = 0; j < cols; ++j) {
            const float e = std::exp(step(r[j] - shift));
            r[j] = step(e);
            const bool lost = e != 0.0f && r[j] == 0.0f;
            flushed += static_cast<std::size_t>(lost);
            if (lost && cells) cells->push_back(static_cast<std::uint32_t>(i * cols + j));
            sum = step(sum + r[j]);
        }
        for (std::size_t j = 0; j < cols; ++j) {
            const float p = r[j] / sum;
            r[j] = round_to(format, p);  // the weights are stored in the format either way
            const bool lost = p != 0.0f && r[j] == 0.0f;  // never a cell whose exp was lost: p = 0 there
            flushed += static_cast<std::size_t>(lost);
            if (lost && cells) cells->push_back(static_cast<std::uint32_t>(i * cols + j));
        }
    }
    // a row's lost exps come before its lost quotients: one sort puts the indices in order
    if (cells) std::sort(cells->begin() + static_cast<std::ptrdiff_t>(cells_before), cells->end());
    return flushed;
}

}  // namespace attnlab
