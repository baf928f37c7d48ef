// The article's experiments in JavaScript (experiments/registry.hpp): the same registry, options
// and result as `attnlab experiment`.
//
//   lab.experiments();   // [{ name, section, claim, summary, parameters: [{ name, flag, kind, default,
//                        //    min, max | choices, help }], quick: { name: value }, messages: { id: template } }]
//   const r = lab.runExperiment('scaling', { quick: true, steps: 40 }, (p) => {
//     postMessage({ progress: p });          // p: { run, runIndex, numRuns, step, total, loss, values? }
//     return true;                           // false (exactly) stops the run: it throws 'cancelled'
//   });
//   r.tables, r.series, r.notes, r.phrases, r.conclusion, r.conclusionMessage, r.verdict, r.timing, r.timingMessage,
//   r.command                                // as `--json` writes them
//   lab.experimentInputs('heads-real', { quick: true });   // ['models/tang.safetensors', ...]: the files it reads
//   lab.provideExperimentFile('models/tang.safetensors', bytes);   // each of them (the module has no disk)
//
// runExperiment is one synchronous call that reports through onProgress after every training
// step: run it in a Web Worker (the page's main thread stays responsive; the worker posts each
// progress message as it comes). A worker busy in a run cannot read new messages, so stopping
// is done from inside: onProgress returning false ends the run with an Error. Options are the
// parameters' JavaScript names (camelCase of the CLI flags) plus `quick`; numbers, strings and
// arrays (for list parameters) are accepted. Unknown names or values out of range throw an Error
// naming them and the valid ones; the module keeps working.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/experiments/inputs.hpp"
#include "attnlab/experiments/registry.hpp"
#include "convert.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

namespace ex = attnlab::experiments;

val parse_json(const std::string& text) { return val::global("JSON").call<val>("parse", text); }

// One option value as the registry's text form: "40", "0.003", "rope", "1,2,4".
std::string option_text(const val& v, const std::string& key, const char* where) {
    const std::string type = v.typeOf().as<std::string>();
    if (type == "string") return v.as<std::string>();
    if (type == "number") {
        const double d = v.as<double>();
        if (!std::isfinite(d)) fail<ConfigError>(where, ": option '", key, "' must be a finite number, got ", d);
        char buf[40];
        std::snprintf(buf, sizeof buf, d == std::floor(d) && std::abs(d) < 1e15 ? "%.0f" : "%.9g", d);
        return buf;
    }
    if (val::global("Array").call<bool>("isArray", v)) {
        std::string s;
        const auto n = v["length"].as<unsigned>();
        for (unsigned i = 0; i < n; ++i) s += (i ? "," : "") + option_text(v[i], key, where);
        return s;
    }
    fail<ConfigError>(where, ": option '", key, "' must be a number, a string or an array, got a ", type);
}

val list_experiments() {
    return guarded("experiments", [&] { return parse_json(ex::experiments_to_json()); });
}

// Calls onProgress(p) inside a JavaScript try: a throw there must not unwind WASM frames.
// Returns {ok, value} or {ok: false, error}.
val safe_call() {
    static const val wrapper = val::global("Function").new_(
        std::string("f"), std::string("p"),
        std::string("try { return { ok: true, value: f(p) }; } catch (e) { return { ok: false, error: String(e && e.message || e) }; }"));
    return wrapper;
}

// The options object of a call as the experiment's resolved values (quick first, then the rest).
ex::Values js_values(const ex::Experiment& e, const val& options, const char* where) {
    bool quick = false;
    std::map<std::string, std::string> given;
    if (!options.isUndefined() && !options.isNull()) {
        if (options.typeOf().as<std::string>() != "object") {
            fail<ConfigError>(where, ": options must be an object, got a ", options.typeOf().as<std::string>());
        }
        const val keys = val::global("Object").call<val>("keys", options);
        const auto n = keys["length"].as<unsigned>();
        for (unsigned i = 0; i < n; ++i) {
            const std::string key = keys[i].as<std::string>();
            const val v = options[key];
            if (v.isUndefined()) continue;
            if (key == "quick") {
                if (v.typeOf().as<std::string>() != "boolean") fail<ConfigError>(where, ": option 'quick' must be a boolean");
                quick = v.as<bool>();
                continue;
            }
            given[key] = option_text(v, key, where);
        }
    }
    return ex::resolve_values(e, given, quick, /*js_names=*/true);
}

// The arguments are the bound function's own parameters (by reference), so that `guarded` can
// release each of them when it throws.
val run_experiment(val& name, val& options, val& on_progress) {
    return guarded("runExperiment", [&] {
        constexpr const char* where = "runExperiment";
        if (name.typeOf().as<std::string>() != "string") {
            fail<ConfigError>(where, ": the experiment name must be a string, got a ", name.typeOf().as<std::string>());
        }
        const ex::Experiment& e = ex::find_experiment(name.as<std::string>());
        const ex::Values values = js_values(e, options, where);
        const bool has_callback = on_progress.typeOf().as<std::string>() == "function";
        if (!on_progress.isUndefined() && !on_progress.isNull() && !has_callback) {
            fail<ConfigError>(where, ": onProgress must be a function, got a ", on_progress.typeOf().as<std::string>());
        }
        ex::ProgressFn progress;
        if (has_callback) {
            progress = [&](const ex::Progress& p) {
                val info = val::object();
                info.set("run", p.run);
                info.set("runIndex", p.run_index);
                info.set("numRuns", p.num_runs);
                info.set("step", p.step);
                info.set("total", p.total);
                info.set("loss", p.loss);
                if (!p.values.empty()) {
                    val values = val::object();
                    for (const auto& [key, v] : p.values) values.set(key, v);
                    info.set("values", values);
                }
                const val out = safe_call()(on_progress, info);
                if (!out["ok"].as<bool>()) {
                    fail<Error>(where, ": onProgress threw: ", out["error"].as<std::string>());
                }
                const val result = out["value"];
                if (result.typeOf().as<std::string>() == "boolean" && !result.as<bool>()) {
                    fail<Error>(where, ": cancelled by onProgress (it returned false) in run '", p.run, "' at step ",
                                p.step);
                }
            };
        }
        return parse_json(ex::result_to_json(ex::run_experiment(e, values, progress)));
    }, name, options, on_progress);
}
val run_experiment_all(val name, val options, val on_progress) { return run_experiment(name, options, on_progress); }
val run_experiment_options(val name, val options) {
    val none = val::undefined();
    return run_experiment(name, options, none);
}
val run_experiment_defaults(val name) {
    val options = val::undefined(), none = val::undefined();
    return run_experiment(name, options, none);
}

// The module has no disk: an experiment that reads a shipped model or a held-out text
// (heads-real, importance --model) reads the bytes given here under its path.
void provide_experiment_file(val path, val bytes) {
    guarded("provideExperimentFile", [&] {
        if (path.typeOf().as<std::string>() != "string") {
            fail<ConfigError>("provideExperimentFile: the path must be a string, got a ", path.typeOf().as<std::string>());
        }
        ex::provide_input_file(path.as<std::string>(), bytes_from_js(bytes, "provideExperimentFile", "bytes"));
    }, path, bytes);
}
void clear_experiment_files() { ex::clear_input_files(); }

// The paths a run with these options reads ([] for most): what to provide first.
val experiment_inputs(val name, val options) {
    return guarded("experimentInputs", [&] {
        constexpr const char* where = "experimentInputs";
        if (name.typeOf().as<std::string>() != "string") {
            fail<ConfigError>(where, ": the experiment name must be a string, got a ", name.typeOf().as<std::string>());
        }
        const ex::Experiment& e = ex::find_experiment(name.as<std::string>());
        val out = val::array();
        for (const std::string& path : ex::experiment_inputs(e, js_values(e, options, where))) out.call<void>("push", path);
        return out;
    }, name, options);
}
val experiment_inputs_defaults(val name) { return experiment_inputs(name, val::undefined()); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_experiments) {
    emscripten::function("experiments", &list_experiments);
    emscripten::function("runExperiment", &run_experiment_defaults);
    emscripten::function("runExperiment", &run_experiment_options);
    emscripten::function("runExperiment", &run_experiment_all);
    emscripten::function("provideExperimentFile", &provide_experiment_file);
    emscripten::function("clearExperimentFiles", &clear_experiment_files);
    emscripten::function("experimentInputs", &experiment_inputs_defaults);
    emscripten::function("experimentInputs", &experiment_inputs);
}

}  // namespace attnlab::web
