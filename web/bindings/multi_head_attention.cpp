// The JavaScript `MultiHeadAttention` class: attnlab::MultiHeadAttention with options objects and
// {shape, data} tensors.
//
//   const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, numKvHeads: 2, bias: true, seed: 1 });
//   mha.setParameter('q_proj.weight', { shape: [8, 8], data });
//   const y = mha.forward(x, { causal: true, positional: 'rope' });     // x: [T, C] or [B, T, C]
//   const tr = mha.trace(x, { causal: true, stages: ['weights'] });      // a Trace (trace.hpp)
//   const { gradX, grads } = mha.backward(x, gradOutput, { causal: true }); // grads['q_proj.weight'], ...
//   tr.delete(); mha.delete();
//
// Forward options (all optional):
//   causal          boolean                      hide future keys (bottom-right aligned)
//   keyPaddingMask  {shape:[B, S], data} | null  1 = padded key ([S] also accepted for unbatched x)
//   attnMask        {shape:[T, S], data} | null  1 = forbidden (query, key) pair, shared by the batch
//   window          integer                      sliding window: hide keys more than this many positions away (0 = none)
//   globalTokens    integer                      with window: the first positions see and are seen by all
//   scale           true | false | number        1/sqrt(D) (default), none, or this factor
//   positional      'none' | 'rope' | 'sinusoidal'   RoPE on q and k, or the sinusoidal table added to x
//   ropeBase        number                       RoPE base (default 10000)
//   positionOffset  integer                      absolute position of the first row (default 0)
//   memory          tensor | null                cross-attention keys/values [S, Ckv] / [B, S, Ckv]
//   checkFinite     boolean                      Error on NaN/Inf in x or memory
//   normalizer      'softmax' | 'sigmoid' | 'relu'  weights from the scaled, masked scores s:
//                                                softmax, σ(s − ln n_i) or max(s, 0) / n_i
//                                                (n_i: keys query i may see; default 'softmax')
//   precision       'fp32' | 'fp16' | 'bf16'     emulate this number format: every stored stage (and gradient) rounded
//   softmaxPrecision 'fp32' | 'same'             with fp16/bf16: softmax in fp32 on the rounded scores, or every step rounded
//   stableSoftmax   boolean                      subtract the row max (default true); false: naive exp(s)/sum exp(s)
//   variant         'full' | 'linear' | 'block_sparse'   the attention mechanism (default 'full')
//   blockSize, windowBlocks, globalBlocks, randomBlocks, sparseSeed   integers: with variant
//                   'block_sparse', the layout's b, w, g, r and seed (attention/block_sparse.hpp);
//                   an Error with any other variant
// trace() also takes `stages: string[]` to record only those stages.
//
// lab.sparseLayout(T, S, { blockSize, windowBlocks, globalBlocks, randomBlocks, sparseSeed, causal })
// returns the block-sparse layout {shape: [⌈T/b⌉, ⌈S/b⌉], data: Uint8Array}, 1 = live block.
// backward(x, gradOutput, options) takes the forward options, reruns the forward on x and returns
// the gradients of sum(forward(x) ⊙ gradOutput): gradX shaped like x, grads[name] like each
// parameter (the names of parameterNames()) and, with `memory`, gradMemory shaped like memory.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <emscripten/bind.h>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/posenc/positional_encoding.hpp"
#include "attnlab/posenc/sinusoidal.hpp"
#include "convert.hpp"
#include "parameters.hpp"
#include "trace.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

// The layout options' JavaScript names, in BlockSparseOptions' order.
constexpr const char* kBlockSparseKeys[] = {"blockSize", "windowBlocks", "globalBlocks", "randomBlocks", "sparseSeed"};

// The block-sparse options of opt (absent ones keep BlockSparseOptions' defaults).
BlockSparseOptions block_sparse_from_js(const JsOptions& opt) {
    BlockSparseOptions b;
    b.block_size = opt.size("blockSize", b.block_size);
    b.window_blocks = opt.size("windowBlocks", b.window_blocks);
    b.global_blocks = opt.size("globalBlocks", b.global_blocks);
    b.random_blocks = opt.size("randomBlocks", b.random_blocks);
    b.seed = opt.size("sparseSeed", b.seed);
    return b;
}

// Everything one forward call needs, converted from JavaScript.
struct ForwardCall {
    Tensor3 x;                 // (B, T, C), B = 1 for unbatched input
    bool batched = true;       // x came as [B, T, C]
    std::optional<Tensor3> memory;  // (B, S, Ckv)
    AttentionOptions options;
    std::vector<Stage> stages;  // trace only: empty = all
};

ForwardCall parse_forward(const val& x, const val& options, bool for_trace, const char* where) {
    std::vector<const char*> allowed = {"causal", "keyPaddingMask", "attnMask", "scale", "positional",
                                        "ropeBase", "positionOffset", "memory", "checkFinite", "window",
                                        "globalTokens", "variant", "normalizer", "precision", "softmaxPrecision",
                                        "stableSoftmax"};
    allowed.insert(allowed.end(), std::begin(kBlockSparseKeys), std::end(kBlockSparseKeys));
    if (for_trace) allowed.push_back("stages");
    const JsOptions opt(options, allowed, where);

    ForwardCall call;
    call.x = tensor3_from_js(x, where, "x", &call.batched);
    AttentionOptions& o = call.options;
    o.mask.causal = opt.boolean("causal", false);
    if (!opt.is_null("keyPaddingMask")) o.mask.key_padding = mask_from_js(opt.get("keyPaddingMask"), where, "keyPaddingMask", !call.batched);
    if (!opt.is_null("attnMask")) o.mask.explicit_mask = mask_from_js(opt.get("attnMask"), where, "attnMask", false);
    o.mask.window = opt.size("window", 0);
    o.mask.global_tokens = opt.size("globalTokens", 0);
    o.variant = attention_variant_from_name(opt.string("variant", "full"));
    if (o.variant != AttentionVariant::block_sparse) {
        for (const char* key : kBlockSparseKeys) {
            if (opt.has(key)) {
                fail<ConfigError>(where, ": option '", key, "' applies only with variant 'block_sparse', got variant '",
                                  attention_variant_name(o.variant), "'");
            }
        }
    }
    o.block_sparse = block_sparse_from_js(opt);

    const val scale = opt.get("scale");
    if (scale.isFalse()) {
        o.scale.enabled = false;
    } else if (scale.isNumber()) {
        o.scale.factor = opt.float32("scale", 0.0f);
    } else if (!scale.isUndefined() && !scale.isTrue()) {
        fail<ConfigError>(where, ": option 'scale' must be true, false or a number");
    }

    const PositionalKind positional = positional_from_name(opt.string("positional", "none"));
    if (positional == PositionalKind::learned || positional == PositionalKind::time) {
        fail<ConfigError>(where, ": positional '", positional_name(positional), "' needs ",
                          positional == PositionalKind::learned ? "a trained table, which belongs to a Model"
                                                                : "timestamps, which a forecaster Model reads",
                          "; use 'none', 'rope' or 'sinusoidal'");
    }
    o.rope = positional == PositionalKind::rope;
    o.rope_base = opt.number("ropeBase", o.rope_base);
    o.position_offset = opt.size("positionOffset", 0);
    o.check_finite = opt.boolean("checkFinite", false);
    o.normalizer = normalizer_from_name(opt.string("normalizer", "softmax"));  // ConfigError naming the valid ones
    o.precision.format = precision_from_name(opt.string("precision", "fp32"));  // ConfigError listing the valid names
    o.precision.softmax = softmax_precision_from_name(opt.string("softmaxPrecision", "fp32"));
    o.precision.stable_softmax = opt.boolean("stableSoftmax", true);

    if (!opt.is_null("memory")) {
        bool memory_batched = true;
        call.memory = tensor3_from_js(opt.get("memory"), where, "memory", &memory_batched);
        if (memory_batched != call.batched) {
            fail<ShapeError>(where, ": memory must have the same rank as x (", call.batched ? "[B, S, Ckv]" : "[S, Ckv]",
                             " for x of rank ", call.batched ? 3 : 2, ")");
        }
    }
    if (positional == PositionalKind::sinusoidal) add_sinusoidal(call.x, o.position_offset);

    if (for_trace && !opt.is_null("stages")) {
        for (const std::string& name : strings_from_js(opt.get("stages"), where, "option 'stages'")) {
            call.stages.push_back(stage_from_name(name));
        }
    }
    return call;
}

// (B, T, C) -> {shape:[B, T, C]} or, for unbatched input, {shape:[T, C]}.
val output_to_js(const Tensor3& y, bool batched) {
    if (batched) return tensor_to_js(y);
    return tensor_to_js(y.data(), {y.shape(1), y.shape(2)});
}

}  // namespace

class MultiHeadAttentionBinding {
public:
    static MultiHeadAttentionBinding* create(val options) {
        return guarded("new MultiHeadAttention", [&] {
            constexpr const char* where = "new MultiHeadAttention";
            const JsOptions opt(options, {"dModel", "numHeads", "numKvHeads", "bias", "kvDim", "tieQK", "seed"},
                                where);
            if (!opt.has("dModel")) fail<ConfigError>(where, ": option 'dModel' is required");
            MultiHeadAttentionConfig config;
            config.d_model = opt.size("dModel", 0);
            config.num_heads = opt.size("numHeads", 1);
            config.num_kv_heads = opt.size("numKvHeads", 0);
            config.bias = opt.boolean("bias", true);
            config.kv_dim = opt.size("kvDim", 0);
            config.tie_qk = opt.boolean("tieQK", false);
            Rng rng(opt.size("seed", 0));
            auto binding = std::make_unique<MultiHeadAttentionBinding>();
            binding->mha_ = MultiHeadAttention(config, rng);
            return binding.release();
        }, options);
    }

    // `new MultiHeadAttention()` reports the missing dModel like any other missing option.
    static MultiHeadAttentionBinding* create_without_options() { return create(val::undefined()); }

    val config() const {
        const MultiHeadAttentionConfig& c = mha_.config();
        val out = val::object();
        out.set("dModel", c.d_model);
        out.set("numHeads", c.num_heads);
        out.set("numKvHeads", c.kv_heads());
        out.set("headDim", c.head_dim());
        out.set("bias", c.bias);
        out.set("kvDim", c.memory_dim());
        out.set("tieQK", c.tie_qk);
        return out;
    }

    val parameter_names() {
        return guarded("MultiHeadAttention.parameterNames", [&] { return parameter_names_to_js(mha_.parameters()); });
    }

    val get_parameter(val name) {
        return guarded("MultiHeadAttention.getParameter", [&] {
            return parameter_to_js(mha_.parameters(), name, "MultiHeadAttention.getParameter");
        }, name);
    }

    void set_parameter(val name, val tensor) {
        guarded("MultiHeadAttention.setParameter", [&] {
            set_parameter_from_js(mha_.parameters(), name, tensor, "MultiHeadAttention.setParameter");
        }, name, tensor);
    }

    // One overload per arity (embind checks the argument count); each guards its own arguments.
    val forward(val x) {
        return guarded("MultiHeadAttention.forward", [&] { return run_forward(x, val::undefined()); }, x);
    }
    val forward(val x, val options) {
        return guarded("MultiHeadAttention.forward", [&] { return run_forward(x, options); }, x, options);
    }
    val backward(val x, val dout) {
        return guarded("MultiHeadAttention.backward", [&] { return run_backward(x, dout, val::undefined()); }, x,
                       dout);
    }
    val backward(val x, val dout, val options) {
        return guarded("MultiHeadAttention.backward", [&] { return run_backward(x, dout, options); }, x, dout,
                       options);
    }
    TraceBinding trace(val x) {
        return guarded("MultiHeadAttention.trace", [&] { return run_trace(x, val::undefined()); }, x);
    }
    TraceBinding trace(val x, val options) {
        return guarded("MultiHeadAttention.trace", [&] { return run_trace(x, options); }, x, options);
    }

private:
    val run_forward(const val& x, const val& options) const {
        const ForwardCall call = parse_forward(x, options, false, "MultiHeadAttention.forward");
        const Tensor3 y = mha_.forward(call.x, call.memory ? &*call.memory : nullptr, call.options);
        return output_to_js(y, call.batched);
    }

    val run_backward(const val& x, const val& dout, const val& options) {
        constexpr const char* where = "MultiHeadAttention.backward";
        const ForwardCall call = parse_forward(x, options, false, where);
        const Tensor3 d = output_gradient_from_js(dout, call.batched, call.x.shape(0), call.x.shape(1),
                                                  call.x.shape(2), where, "gradOutput");  // (B, T, C)

        const Tensor3* memory = call.memory ? &*call.memory : nullptr;
        MultiHeadAttentionCache cache;
        mha_.forward(call.x, memory, call.options, nullptr, &cache);
        MultiHeadAttentionGrad grads(mha_);
        Tensor3 dx, dmemory;
        mha_.backward(d, cache, call.options, grads, dx, memory ? &dmemory : nullptr);

        val result = val::object();
        result.set("gradX", output_to_js(dx, call.batched));
        if (memory) result.set("gradMemory", output_to_js(dmemory, call.batched));
        result.set("grads", gradients_to_js(grads.views()));
        return result;
    }

    TraceBinding run_trace(const val& x, const val& options) const {
        const ForwardCall call = parse_forward(x, options, true, "MultiHeadAttention.trace");
        auto recorder = call.stages.empty() ? std::make_unique<TraceRecorder>()
                                            : std::make_unique<TraceRecorder>(call.stages);
        mha_.forward(call.x, call.memory ? &*call.memory : nullptr, call.options, recorder.get());
        return TraceBinding(std::move(recorder));
    }

    MultiHeadAttention mha_;
};

// lab.sparseLayout(T, S, options): see the top of this file.
val sparse_layout_js(val t, val s, val options) {
    return guarded("sparseLayout", [&] {
        constexpr const char* where = "sparseLayout";
        std::vector<const char*> allowed(std::begin(kBlockSparseKeys), std::end(kBlockSparseKeys));
        allowed.push_back("causal");
        const JsOptions opt(options, allowed, where);
        return mask_to_js(sparse_layout(size_from_js(t, where, "T"), size_from_js(s, where, "S"),
                                        block_sparse_from_js(opt), opt.boolean("causal", false)));
    }, t, s, options);
}
val sparse_layout_default(val t, val s) { return sparse_layout_js(t, s, val::undefined()); }

EMSCRIPTEN_BINDINGS(attnlab_multi_head_attention) {
    using emscripten::select_overload;
    using B = MultiHeadAttentionBinding;
    emscripten::function("sparseLayout", &sparse_layout_js);
    emscripten::function("sparseLayout", &sparse_layout_default);
    emscripten::class_<B>("MultiHeadAttention")
        .constructor(&B::create_without_options)
        .constructor(&B::create)
        .function("config", &B::config)
        .function("parameterNames", &B::parameter_names)
        .function("getParameter", &B::get_parameter)
        .function("setParameter", &B::set_parameter)
        .function("forward", select_overload<val(val)>(&B::forward))
        .function("forward", select_overload<val(val, val)>(&B::forward))
        .function("backward", select_overload<val(val, val)>(&B::backward))
        .function("backward", select_overload<val(val, val, val)>(&B::backward))
        .function("trace", select_overload<TraceBinding(val)>(&B::trace))
        .function("trace", select_overload<TraceBinding(val, val)>(&B::trace));
}

}  // namespace attnlab::web
