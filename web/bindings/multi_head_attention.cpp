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
// Forward options (all optional): every option of AttentionOptions' field table
// (attention/attention_options.hpp; the TypeScript AttentionOptions is generated from it:
// causal, keyPaddingMask, attnMask, window, globalTokens, scale, variant and its block-sparse
// layout, ropeBase, positionOffset, checkFinite, normalizer, precision, softmaxPrecision,
// stableSoftmax), plus
//   positional      'none' | 'rope' | 'sinusoidal'   RoPE on q and k, or the sinusoidal table added to x
//   memory          tensor | null                cross-attention keys/values [S, Ckv] / [B, S, Ckv]
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
#include "attnlab/posenc/sinusoidal.hpp"
#include "attention_options.hpp"
#include "convert.hpp"
#include "parameters.hpp"
#include "trace.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

// Everything one forward call needs, converted from JavaScript.
struct ForwardCall {
    Tensor3 x;                 // (B, T, C), B = 1 for unbatched input
    bool batched = true;       // x came as [B, T, C]
    std::optional<Tensor3> memory;  // (B, S, Ckv)
    AttentionOptions options;
    std::vector<Stage> stages;  // trace only: empty = all
};

ForwardCall parse_forward(const val& x, const val& options, bool for_trace, const char* where) {
    std::vector<const char*> allowed = attention_option_keys();
    allowed.insert(allowed.end(), {"positional", "memory"});
    if (for_trace) allowed.push_back("stages");
    const JsOptions opt(options, allowed, where);

    ForwardCall call;
    call.x = tensor3_from_js(x, where, "x", &call.batched);
    AttentionOptions& o = call.options;
    attention_options_from_js(opt, o);
    attention_masks_from_js(opt, call.batched, o);
    const PositionalKind positional = layer_positional_from_js(opt, o);

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
        std::vector<const char*> allowed;
        for (const AttentionOptionField& field : kAttentionOptionFields) {
            if (field.flags & kBlockSparseOnly) allowed.push_back(field.js);
        }
        allowed.push_back("causal");
        const JsOptions opt(options, allowed, where);
        AttentionOptions o;
        o.variant = AttentionVariant::block_sparse;  // the layout's options apply
        attention_options_from_js(opt, o);
        return mask_to_js(sparse_layout(size_from_js(t, where, "T"), size_from_js(s, where, "S"), o.block_sparse,
                                        o.mask.causal));
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
