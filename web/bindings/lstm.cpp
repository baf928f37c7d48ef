// The JavaScript `LSTM` class: attnlab::Lstm (nn/lstm.hpp) with options objects and
// {shape, data} tensors, torch.nn.LSTM's semantics and parameter names.
//
//   const lstm = new lab.LSTM({ inputSize: 5, hiddenSize: 7, numLayers: 1, bias: true, seed: 1 });
//   lstm.parameterNames();                          // ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
//   lstm.setParameter('weight_ih_l0', { shape: [28, 5], data });
//   const { output, h, c } = lstm.forward(x, { h0, c0 });                 // x [B, T, I] or [T, I]
//   const { gradX, gradH0, gradC0, grads } = lstm.backward(x, gradOutput, { h0, c0, gradH, gradC });
//   lstm.delete();
//
// Shapes: x [B, T, I] -> output [B, T, H], h and c [L, B, H]; unbatched x [T, I] -> output
// [T, H], h and c [L, H] (as torch). Options (all optional): h0, c0 the initial state (zeros when
// absent), shaped like h; backward also takes gradH, gradC, the gradients of the final h and c
// (zero when absent). backward reruns the forward on x (the class keeps no state between calls)
// and returns the gradients of sum(output ⊙ gradOutput) + sum(h ⊙ gradH) + sum(c ⊙ gradC):
// gradX like x, gradH0 and gradC0 like h, grads[name] like each parameter.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/nn/lstm.hpp"
#include "convert.hpp"
#include "parameters.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

// x, and the state tensors of one call, as the engine takes them (B = 1 for unbatched x).
struct LstmCall {
    Tensor3 x;           // (B, T, I)
    bool batched = true;  // x came as [B, T, I]
    Tensor3 h0, c0;      // (L, B, H), or empty (zeros)
    Tensor3 dh, dc;      // (L, B, H), or empty (zero): backward only
};

// {shape: [L, B, H]} for batched x, {shape: [L, H]} for unbatched -> (L, B, H). The two layouts
// hold the same floats in the same order.
Tensor3 state_from_js(const val& t, const LstmConfig& config, std::size_t batch, bool batched, const char* where,
                      const char* what) {
    const auto L = static_cast<std::ptrdiff_t>(config.num_layers), H = static_cast<std::ptrdiff_t>(config.hidden_size);
    const ShapeSpec spec = batched ? ShapeSpec{L, static_cast<std::ptrdiff_t>(batch), H} : ShapeSpec{L, H};
    const std::vector<float> data = floats_from_js(t, spec, where, what);
    Tensor3 out = Tensor3::from_shape({config.num_layers, batch, config.hidden_size});
    std::copy(data.begin(), data.end(), out.begin());
    return out;
}

LstmCall parse_call(const LstmConfig& config, const val& x, const val& options, bool for_backward,
                    const char* where) {
    std::vector<const char*> allowed = {"h0", "c0"};
    if (for_backward) allowed.insert(allowed.end(), {"gradH", "gradC"});
    const JsOptions opt(options, allowed, where);
    LstmCall call;
    call.x = tensor3_from_js(x, where, "x", &call.batched);
    if (call.x.shape(2) != config.input_size) {
        fail<ShapeError>(where, ": x must have shape [T, ", config.input_size, "] or [B, T, ", config.input_size,
                         "] (inputSize ", config.input_size, "), got last dimension ", call.x.shape(2));
    }
    const std::size_t B = call.x.shape(0);
    const struct {
        const char* key;
        Tensor3* into;
    } states[] = {{"h0", &call.h0}, {"c0", &call.c0}, {"gradH", &call.dh}, {"gradC", &call.dc}};
    for (const auto& s : states) {
        if (opt.has(s.key) && !opt.is_null(s.key)) {
            const std::string what = std::string("option '") + s.key + "'";
            *s.into = state_from_js(opt.get(s.key), config, B, call.batched, where, what.c_str());
        }
    }
    return call;
}

const Tensor3* or_null(const Tensor3& t) { return t.size() == 0 ? nullptr : &t; }

// (B, T, W) -> [B, T, W], or [T, W] for unbatched input; state (L, B, H) -> [L, B, H] or [L, H].
val to_js(const Tensor3& t, bool batched, bool state) {
    if (batched) return tensor_to_js(t);
    return tensor_to_js(t.data(), {state ? t.shape(0) : t.shape(1), t.shape(2)});
}

}  // namespace

class LstmBinding {
public:
    static LstmBinding* create(val options) {
        return guarded("new LSTM", [&] {
            constexpr const char* where = "new LSTM";
            const JsOptions opt(options, {"inputSize", "hiddenSize", "numLayers", "bias", "seed"}, where);
            for (const char* key : {"inputSize", "hiddenSize"}) {
                if (!opt.has(key)) fail<ConfigError>(where, ": option '", key, "' is required");
            }
            LstmConfig config;
            config.input_size = opt.size("inputSize", 0);
            config.hidden_size = opt.size("hiddenSize", 0);
            config.num_layers = opt.size("numLayers", 1);
            config.bias = opt.boolean("bias", true);
            Rng rng(opt.size("seed", 0));
            auto binding = std::make_unique<LstmBinding>();
            binding->lstm_ = Lstm(config, rng);
            return binding.release();
        }, options);
    }

    // `new LSTM()` reports the missing inputSize like any other missing option.
    static LstmBinding* create_without_options() { return create(val::undefined()); }

    val config() const {
        const LstmConfig& c = lstm_.config();
        val out = val::object();
        out.set("inputSize", c.input_size);
        out.set("hiddenSize", c.hidden_size);
        out.set("numLayers", c.num_layers);
        out.set("bias", c.bias);
        out.set("parameterCount", lstm_.parameter_count());
        return out;
    }

    val parameter_names() {
        return guarded("LSTM.parameterNames", [&] { return parameter_names_to_js(lstm_.parameters()); });
    }

    val parameter(val name) {
        return guarded("LSTM.parameter", [&] { return parameter_to_js(lstm_.parameters(), name, "LSTM.parameter"); },
                       name);
    }

    void set_parameter(val name, val tensor) {
        guarded("LSTM.setParameter", [&] { set_parameter_from_js(lstm_.parameters(), name, tensor, "LSTM.setParameter"); },
                name, tensor);
    }

    // One overload per arity (embind checks the argument count); each guards its own arguments.
    val forward(val x) { return guarded("LSTM.forward", [&] { return run_forward(x, val::undefined()); }, x); }
    val forward(val x, val options) {
        return guarded("LSTM.forward", [&] { return run_forward(x, options); }, x, options);
    }
    val backward(val x, val dout) {
        return guarded("LSTM.backward", [&] { return run_backward(x, dout, val::undefined()); }, x, dout);
    }
    val backward(val x, val dout, val options) {
        return guarded("LSTM.backward", [&] { return run_backward(x, dout, options); }, x, dout, options);
    }

private:
    val run_forward(const val& x, const val& options) const {
        const LstmCall call = parse_call(lstm_.config(), x, options, false, "LSTM.forward");
        const LstmOutput out = lstm_.forward(call.x, or_null(call.h0), or_null(call.c0));
        val result = val::object();
        result.set("output", to_js(out.output, call.batched, false));
        result.set("h", to_js(out.h, call.batched, true));
        result.set("c", to_js(out.c, call.batched, true));
        return result;
    }

    val run_backward(const val& x, const val& dout, const val& options) {
        constexpr const char* where = "LSTM.backward";
        const LstmCall call = parse_call(lstm_.config(), x, options, true, where);
        const Tensor3 d = output_gradient_from_js(dout, call.batched, call.x.shape(0), call.x.shape(1),
                                                  lstm_.config().hidden_size, where, "gradOutput");  // (B, T, H)

        LstmCache cache;
        LstmOutput out;
        lstm_.forward(call.x, or_null(call.h0), or_null(call.c0), cache, out);
        LstmGrad grads(lstm_);
        Tensor3 dx, dh0, dc0;
        lstm_.backward(d, or_null(call.dh), or_null(call.dc), cache, grads, dx, &dh0, &dc0);

        val result = val::object();
        result.set("gradX", to_js(dx, call.batched, false));
        result.set("gradH0", to_js(dh0, call.batched, true));
        result.set("gradC0", to_js(dc0, call.batched, true));
        result.set("grads", gradients_to_js(grads.views()));
        return result;
    }

    Lstm lstm_;
};

EMSCRIPTEN_BINDINGS(attnlab_lstm) {
    using emscripten::select_overload;
    using B = LstmBinding;
    emscripten::class_<B>("LSTM")
        .constructor(&B::create_without_options)
        .constructor(&B::create)
        .function("config", &B::config)
        .function("parameterNames", &B::parameter_names)
        .function("parameter", &B::parameter)
        .function("getParameter", &B::parameter)
        .function("setParameter", &B::set_parameter)
        .function("forward", select_overload<val(val)>(&B::forward))
        .function("forward", select_overload<val(val, val)>(&B::forward))
        .function("backward", select_overload<val(val, val)>(&B::backward))
        .function("backward", select_overload<val(val, val, val)>(&B::backward));
}

}  // namespace attnlab::web
