// The walkthrough's backward mode: every intermediate gradient of one attention layer, from
// the engine's MultiHeadAttention::backward.
//
// What it is for: the page's backward steps (dOutput → dConcat → dContext → dWeights → dScores
// → dQ, dK, dV → dW), each a matrix the reader can hover, under a loss the page can explain:
//   L = ½‖y_r − target‖²  for one output row r, so dOutput is (y_r − target) in row r, 0 elsewhere.
// The layer is built like `new MultiHeadAttention(layer)` (same seed, same weights), run forward
// with a cache that keeps the softmax weights (the recorded path), and backward; dConcat,
// dContext, dQ, dK, dV are the backward's own intermediate buffers (MultiHeadAttentionCache::
// Scratch), and the two (T, S) gradients the backward forms inside scaled_dot_product_attention_backward
// are formed here the same way from the same cache: dWeights = dContext·Vᵀ, then the
// normaliser's backward (normalize_rows_backward: softmax's ds = w ⊙ (dw − Σ_j w·dw)), times
// the scale. Not for: training (Trainer) or the plain gradient (MultiHeadAttention.backward).
//
//   const g = lab.attentionGradients({ dModel: 8, numHeads: 2, seed: 1 }, x,
//                                    { causal: true, lossRow: 2, target: { shape: [8], data } });
//   g.loss; g.gradScores[h];   // {shape: [T, S], data}, one per query head
//   g.gradK[g];                // one per key/value head; g.grads['q_proj.weight'], g.gradX
//
// lab.attentionStats(layer, x, options) runs the same layer forward with the Trainer's attention
// diagnostics (AttentionStatsRecorder) and returns {maxAbsScore, meanEntropy: {shape: [H]}}: the
// engine's numbers the page's own entropies and largest score are checked against.
//
// lab.rowStats(w) gives each row of a (R, K) weights matrix its sum and entropy (the softmax and
// scaling steps' columns), the entropy by the Trainer's AttentionStatsRecorder.
//
// lab.kvCacheSteps(layer, x, {variant, parameters, positional, scale, scaleFactor, normalizer})
// generates x's rows one at a time through
// MultiHeadAttention::forward_incremental with one KvCache (causal self-attention), and returns per
// step t: the new query's weights against the cache ({shape: [1, t+1]} per head; linear attention
// keeps no weights, only its state), the floats the cache holds (K and V rows, or linear
// attention's constant state Σφ(k)vᵀ and Σφ(k)), the output row, and the multiply-adds of the
// step against those of recomputing all t+1 rows from scratch. `parameters` ({name: {shape,
// data}}, e.g. one block's attention of a Model trained in the lab) replace the seeded weights;
// positional 'rope' rotates each new row at its position.
//
// layer: dModel, numHeads, numKvHeads, kvDim, seed (bias is on, as the walkthrough's layer).
// options: AttentionOptions' causal, keyPaddingMask ({shape: [S]}), window, globalTokens, scale
//   and normalizer (attention/attention_options.hpp), positional ('none' | 'rope' |
//   'sinusoidal'), memory ({shape: [S, Ckv]}: cross-attention), lossRow (integer < T), target
//   ({shape: [C]}).
#include <algorithm>
#include <cstddef>
#include <vector>

#include <emscripten/bind.h>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/normalizer.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/posenc/sinusoidal.hpp"
#include "attention_options.hpp"
#include "convert.hpp"
#include "parameters.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

constexpr const char* kWhere = "attentionGradients";

// One (rows, cols) matrix per head of a (1, H, rows, cols) tensor -> [{shape, data}, ...].
val heads_to_js(const Tensor4& t) {
    val out = val::array();
    const std::size_t rows = t.shape(2), cols = t.shape(3);
    for (std::size_t h = 0; h < t.shape(1); ++h) out.call<void>("push", tensor_to_js(t.data() + h * rows * cols, {rows, cols}));
    return out;
}

// (1, T, W) -> {shape: [T, W]}.
val rows_to_js(const Tensor3& t) { return tensor_to_js(t.data(), {t.shape(1), t.shape(2)}); }

// The layer of `layer` ({dModel, numHeads, numKvHeads, kvDim, seed}, bias on), validated.
MultiHeadAttention layer_from_js(const val& layer, const char* where) {
    const JsOptions lo(layer, {"dModel", "numHeads", "numKvHeads", "kvDim", "seed"}, where);
    MultiHeadAttentionConfig config;
    config.d_model = lo.size("dModel", 0);
    config.num_heads = lo.size("numHeads", 1);
    config.num_kv_heads = lo.size("numKvHeads", 0);
    config.kv_dim = lo.size("kvDim", 0);
    config.bias = true;
    Rng rng(lo.size("seed", 0));
    return MultiHeadAttention(config, rng);  // validates the config (ConfigError naming the numbers)
}

// One call's input and options: x (1, T, C) (with the sinusoidal table added when asked), the
// attention options, and the context for cross-attention (empty for self-attention).
struct Call {
    Tensor3 x;
    Tensor3 memory;
    bool cross = false;
    AttentionOptions options;
};

Call call_from_js(const val& x_js, const JsOptions& opt, const char* where) {
    Call call;
    bool batched = false;
    call.x = tensor3_from_js(x_js, where, "x", &batched);  // (1, T, C)
    if (batched) fail<ShapeError>(where, ": x must be one sequence [T, C], got a batch of ", call.x.shape(0));
    AttentionOptions& o = call.options;
    attention_options_from_js(opt, o);
    attention_masks_from_js(opt, /*batched=*/false, o);
    if (layer_positional_from_js(opt, o) == PositionalKind::sinusoidal) add_sinusoidal(call.x);
    call.cross = !opt.is_null("memory");
    if (call.cross) {
        bool memory_batched = false;
        call.memory = tensor3_from_js(opt.get("memory"), where, "memory", &memory_batched);
        if (memory_batched) fail<ShapeError>(where, ": memory must be one sequence [S, Ckv]");
    }
    return call;
}

// The options of one call: these of AttentionOptions' table, positional, memory, and `more`.
std::vector<const char*> allowed_keys(std::initializer_list<const char*> more) {
    std::vector<const char*> keys =
        attention_option_keys({"causal", "keyPaddingMask", "window", "globalTokens", "scale", "normalizer"});
    keys.insert(keys.end(), {"positional", "memory"});
    keys.insert(keys.end(), more);
    return keys;
}

val gradients(const val& layer, const val& x_js, const val& options) {
    const MultiHeadAttention mha = layer_from_js(layer, kWhere);
    const MultiHeadAttentionConfig& config = mha.config();
    const JsOptions opt(options, allowed_keys({"lossRow", "target"}), kWhere);
    Call call = call_from_js(x_js, opt, kWhere);
    Tensor3& x = call.x;
    Tensor3& memory = call.memory;
    const bool cross = call.cross;
    const AttentionOptions& o = call.options;
    const std::size_t t = x.shape(1), c = config.d_model;

    const std::size_t row = opt.size("lossRow", 0);
    if (row >= t) fail<ValueError>(kWhere, ": lossRow must be a row of the output (0..", t - 1, "), got ", row);
    if (!opt.has("target")) fail<ConfigError>(kWhere, ": option 'target' ({shape: [", c, "]}) is required");
    const std::vector<float> target = floats_from_js(opt.get("target"), {static_cast<std::ptrdiff_t>(c)}, kWhere, "target");

    // Forward on the recorded path: the cache keeps the weights (the Jacobian below needs them).
    MultiHeadAttentionCache cache;
    cache.attention = AttentionCache();
    const Tensor3 y = mha.forward(x, cross ? &memory : nullptr, o, nullptr, &cache);  // (1, T, C)

    // L = ½‖y_r − target‖²: dL/dy_r = y_r − target.
    Tensor3 dout;
    dout.resize({std::size_t{1}, t, c});
    dout.fill(0.0f);
    double loss = 0.0;
    for (std::size_t j = 0; j < c; ++j) {
        const float d = y(0, row, j) - target[j];
        dout(0, row, j) = d;
        loss += 0.5 * static_cast<double>(d) * d;
    }

    MultiHeadAttentionGrad grads(mha);
    Tensor3 dx, dmemory;
    mha.backward(dout, cache, o, grads, dx, cross ? &dmemory : nullptr);
    const MultiHeadAttentionCache::Scratch& w = cache.scratch;

    // The (T, S) gradients of scaled_dot_product_attention_backward, per query head h (key head
    // h / (H / Hkv)): dweights = dcontext·vᵀ; dscaled = normaliser'(weights, dweights); dscores = dscaled·scale.
    const std::size_t h_count = config.num_heads, group = h_count / config.kv_heads(), d = config.head_dim();
    const std::size_t s = cache.v.shape(2);
    const Tensor4& weights = cache.attention.weights;  // (1, H, T, S)
    const Tensor2 visible = visible_key_counts(o.mask, 1, t, s);  // (1, T)
    const float scale = o.scale.enabled ? o.scale.effective(d) : 1.0f;
    Tensor4 dweights, dscaled, dscores;
    for (Tensor4* g : {&dweights, &dscaled, &dscores}) g->resize({std::size_t{1}, h_count, t, s});
    // softmax's Jacobian per row: ds_ij = w_ij·(dw_ij − δ_i), δ_i = Σ_j w_ij·dw_ij (what the page shows)
    Tensor3 delta;
    delta.resize({std::size_t{1}, h_count, t});
    for (std::size_t h = 0; h < h_count; ++h) {
        const float* dctx = &w.dcontext(0, h, 0, 0);  // (T, D)
        const float* v = &cache.v(0, h / group, 0, 0);  // (S, D)
        float* dw = &dweights(0, h, 0, 0);
        for (std::size_t i = 0; i < t; ++i) {
            for (std::size_t j = 0; j < s; ++j) {
                float sum = 0.0f;
                for (std::size_t k = 0; k < d; ++k) sum += dctx[i * d + k] * v[j * d + k];
                dw[i * s + j] = sum;
            }
        }
        const float* wh = &weights(0, h, 0, 0);
        for (std::size_t i = 0; i < t; ++i) {
            float sum = 0.0f;
            for (std::size_t j = 0; j < s; ++j) sum += wh[i * s + j] * dw[i * s + j];
            delta(0, h, i) = sum;
        }
        float* ds = &dscaled(0, h, 0, 0);
        std::copy(dw, dw + t * s, ds);
        normalize_rows_backward(cache.attention.normalizer, &weights(0, h, 0, 0), ds, t, s, s, visible.data());
        float* dsc = &dscores(0, h, 0, 0);
        for (std::size_t i = 0; i < t * s; ++i) dsc[i] = ds[i] * scale;
    }

    val out = val::object();
    out.set("loss", loss);
    out.set("lossRow", row);
    out.set("output", rows_to_js(y));
    out.set("gradOutput", rows_to_js(dout));
    out.set("gradConcat", rows_to_js(w.dconcat));
    out.set("gradContext", heads_to_js(w.dcontext));
    out.set("weights", heads_to_js(weights));
    out.set("gradWeights", heads_to_js(dweights));
    out.set("gradScaled", heads_to_js(dscaled));
    out.set("rowDot", tensor_to_js(delta.data(), {h_count, t}));  // δ_i per head: (H, T)
    out.set("gradScores", heads_to_js(dscores));
    out.set("scaleFactor", scale);
    out.set("gradQ", heads_to_js(w.dq));
    out.set("gradK", heads_to_js(w.dk));
    out.set("gradV", heads_to_js(w.dv));
    out.set("gradX", rows_to_js(dx));
    if (cross) out.set("gradMemory", rows_to_js(dmemory));
    out.set("grads", gradients_to_js(grads.views()));
    return out;
}

val attention_gradients(val layer, val x, val options) {
    return guarded(kWhere, [&] { return gradients(layer, x, options); }, layer, x, options);
}

// lab.attentionStats(layer, x, options): the engine's attention diagnostics of one forward
// (AttentionStatsRecorder, what the Trainer reports per step): {maxAbsScore, meanEntropy: [H]}.
val attention_stats(val layer, val x_js, val options) {
    constexpr const char* where = "attentionStats";
    return guarded(where, [&] {
        const MultiHeadAttention mha = layer_from_js(layer, where);
        const JsOptions opt(options, allowed_keys({}), where);
        const Call call = call_from_js(x_js, opt, where);
        AttentionStatsRecorder recorder(mha.config().num_heads);
        mha.forward(call.x, call.cross ? &call.memory : nullptr, call.options, &recorder);
        const Tensor1 entropy = recorder.mean_entropy();
        val out = val::object();
        out.set("maxAbsScore", recorder.max_abs_score());
        out.set("meanEntropy", tensor_to_js(entropy));
        return out;
    }, layer, x_js, options);
}

// Multiply-adds of one attention layer for `rows` new queries against `keys` keys: the four
// projections of the new rows (q, k, v to Hkv·D, out) and q·kᵀ plus weights·v per head.
double layer_macs(const MultiHeadAttentionConfig& c, std::size_t rows, std::size_t keys) {
    const double cw = static_cast<double>(c.d_model), kvw = static_cast<double>(c.kv_heads() * c.head_dim());
    return static_cast<double>(rows) * (2.0 * cw * cw + 2.0 * cw * kvw) +
           2.0 * static_cast<double>(c.num_heads) * static_cast<double>(rows) * static_cast<double>(keys) *
               static_cast<double>(c.head_dim());
}

val kv_cache_steps(val layer, val x_js, val options) {
    constexpr const char* where = "kvCacheSteps";
    return guarded(where, [&] {
        MultiHeadAttention mha = layer_from_js(layer, where);
        const MultiHeadAttentionConfig& config = mha.config();
        std::vector<const char*> keys = attention_option_keys({"variant", "scale", "normalizer"});
        keys.insert(keys.end(), {"parameters", "positional", "scaleFactor"});
        const JsOptions opt(options, keys, where);
        bool batched = false;
        const Tensor3 x = tensor3_from_js(x_js, where, "x", &batched);  // (1, T, C)
        if (batched) fail<ShapeError>(where, ": x must be one sequence [T, C]");
        if (!opt.is_null("parameters")) {  // a trained layer's weights in place of the seeded ones
            const val params = opt.get("parameters");
            const val names = val::global("Object").call<val>("keys", params);
            for (unsigned i = 0; i < names["length"].as<unsigned>(); ++i) {
                set_parameter_from_js(mha.parameters(), names[i], params[names[i]], where);
            }
        }
        AttentionOptions o;
        attention_options_from_js(opt, o);
        if (opt.has("scaleFactor")) o.scale.factor = static_cast<float>(opt.number("scaleFactor", 1.0));
        const PositionalKind positional = choice_from_name<PositionalKind>(opt.string("positional", "none"), where);
        if (positional != PositionalKind::none && positional != PositionalKind::rope) {
            fail<ConfigError>(where, ": positional '", choice_name(positional), "' is added to x by the caller; here only 'none' or 'rope'");
        }
        o.rope = positional == PositionalKind::rope;
        if (o.variant == AttentionVariant::block_sparse) fail<ConfigError>(where, ": variant 'block_sparse' has no incremental path here; use 'full' or 'linear'");
        o.mask.causal = true;
        const std::size_t t_count = x.shape(1), c = config.d_model;
        KvCache kv;
        val steps = val::array();
        for (std::size_t t = 0; t < t_count; ++t) {
            Tensor3 row;
            row.resize({std::size_t{1}, std::size_t{1}, c});
            std::copy(&x(0, t, 0), &x(0, t, 0) + c, row.data());
            TraceRecorder recorder({Stage::weights});
            const Tensor3 y = mha.forward_incremental(row, kv, o, &recorder);  // (1, 1, C)
            val step = val::object();
            step.set("t", t);
            val weights = val::array();
            if (recorder.has(Stage::weights, 0, 0)) {
                for (std::size_t h = 0; h < config.num_heads; ++h) weights.call<void>("push", tensor_to_js(recorder.get(Stage::weights, 0, static_cast<std::ptrdiff_t>(h))));
            }
            step.set("weights", weights);
            step.set("cacheLength", kv.length());
            step.set("cacheFloats", kv.k.size() + kv.v.size() + kv.linear.kv.size() + kv.linear.k_sum.size());
            step.set("output", tensor_to_js(y.data(), {1, c}));
            // Cached: one new row against t+1 keys (linear: against the state). Recompute: every row again.
            const double linear_row = layer_macs(config, 1, 0) + 2.0 * config.num_heads * config.head_dim() * config.head_dim();
            step.set("macsCached", o.variant == AttentionVariant::linear ? linear_row : layer_macs(config, 1, t + 1));
            double recompute = 0.0;
            for (std::size_t i = 0; i <= t; ++i) recompute += o.variant == AttentionVariant::linear ? linear_row : layer_macs(config, 1, i + 1);
            step.set("macsRecompute", recompute);
            steps.call<void>("push", step);
        }
        return steps;
    }, layer, x_js, options);
}

// w: (R, K) attention weights -> {sum: {shape: [R]}, entropy: {shape: [R]}}: each row's Σ_j w_ij
// (accumulated in double) and its entropy -Σ_j w_ij ln w_ij in nats, the latter from the
// Trainer's own diagnostics (AttentionStatsRecorder) given one row at a time, so the page's
// entropies and the training curves' are one definition. A row of zeros has entropy 0.
val row_stats(val w_js) {
    constexpr const char* where = "rowStats";
    return guarded(where, [&] {
        const std::vector<std::size_t> shape = js_tensor_shape(w_js, where, "w");
        if (shape.size() != 2) fail<ShapeError>(where, ": w must be a (rows, cols) matrix, got rank ", shape.size());
        const std::vector<float> w = floats_from_js(w_js, {-1, -1}, where, "w");  // (R, K)
        const std::size_t rows = shape[0], cols = shape[1];
        std::vector<float> sums(rows), entropies(rows);
        for (std::size_t i = 0; i < rows; ++i) {
            const float* r = w.data() + i * cols;  // (K)
            double sum = 0.0;
            for (std::size_t j = 0; j < cols; ++j) sum += r[j];
            sums[i] = static_cast<float>(sum);
            AttentionStatsRecorder stats(1);
            stats.on_stage(StageView{Stage::weights, 0, 0, 1, cols, cols, r});
            entropies[i] = stats.mean_entropy(0);
        }
        val out = val::object();
        out.set("sum", tensor_to_js(sums.data(), {rows}));
        out.set("entropy", tensor_to_js(entropies.data(), {rows}));
        return out;
    }, w_js);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_walkthrough) {
    emscripten::function("kvCacheSteps", &kv_cache_steps);
    emscripten::function("attentionGradients", &attention_gradients);
    emscripten::function("attentionStats", &attention_stats);
    emscripten::function("rowStats", &row_stats);
}

}  // namespace attnlab::web
