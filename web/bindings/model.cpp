// The JavaScript `Model` class: attnlab::Model (any of its seven model classes) with options
// objects, token tensors and safetensors bytes.
//
//   const model = new lab.Model({ kind: 'decoder', vocabSize: 12, maxLen: 32, dModel: 64, numHeads: 4,
//                                 numLayers: 2, positional: 'rope', seed: 1 });
//   model.attentionMaps(Int32Array.from([3, 1, 4, 11]));      // { shape: [L, H, T, T], data }
//   model.generate([3, 1, 4, 11], 3, { temperature: 0 });      // Int32Array: prompt + 3 tokens
//   const bytes = model.save();                                // Uint8Array (safetensors)
//   const again = lab.Model.load(bytes);                       // static; again.save() equals bytes
//
// Constructor options: the JavaScript names of ModelConfig's field table
// (include/attnlab/model/config_fields.hpp; lab.modelConfigFields() lists them), vocabSize required,
// ffDim defaulting to 4 * dModel, attentionScale a number or null; plus seed (of the
// initialisation).
// Tokens are an Int32Array / number[] (one sequence) or {shape: [T] | [B, T], data: Int32Array};
// results keep the rank of the input (a [T] input gives unbatched results). An image model
// (architecture 'vit' or 'swin') takes images instead: {shape: [S, S] | [B, S, S], data:
// Float32Array}; its trace and attentionMaps address Swin's windows by batch row (window w of
// the shifted map: trace(image, {layer}).stage('weights', h, w)), and windowLayout(layer) says
// where each window sits on the image. A crossmodal model (architecture 'crossmodal') takes a
// caption and its image together, { tokens: [T] | [B, T], images: [S, S] | [B, S, S] }; its
// attentionMaps(pair, { batch }) are the cross-attention weights of one pair, (H, T, N): row t the
// distribution of word t over the N patches (row-major over the imageSize/patchSize grid), and
// trace(pair, { layer }) records any of its layers (text blocks, image blocks, then the
// cross-attention: layer 2 * numLayers). A forecaster (kind 'forecaster', the series task) reads
// values {shape: [T, F] | [B, T, F]} with time {shape: [T'] | [B, T']}: forecast(values, time)
// gives (B, horizon); attentionMaps(values, { time, batch }) and trace(values, { layer, time })
// show a Transformer forecaster's attention.
#include "model.hpp"

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/io/safetensors.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "attnlab/train/text_task.hpp"
#include "convert.hpp"
#include "fields.hpp"
#include "model_inputs.hpp"
#include "tokenizer.hpp"
#include "trace.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

// The constructor's options: every field of the table with a JavaScript name, then seed.
std::vector<const char*> model_options() {
    std::vector<const char*> out;
    for (const ModelConfigField& field : kModelConfigFields) {
        if (field.js) out.push_back(field.js);
    }
    out.push_back("seed");
    return out;
}

ModelConfig config_from_js(const JsOptions& opt) {
    const char* where = opt.where();
    ModelConfig c;
    c.for_each_field([&](const ModelConfigField& field, auto& value) {
        if (field.js) field_from_js(opt, field.js, value);
    });
    // Token models need their vocabulary; an image model ('vit', 'swin') reads imageSize instead
    // (a crossmodal model both). A forecaster ('forecaster' kind) reads numFeatures values per step instead.
    if (!c.is_image() && !c.is_forecaster() && !opt.has("vocabSize")) {
        fail<ConfigError>(where, ": option 'vocabSize' is required");
    }
    if (!opt.has("ffDim")) c.ff_dim = 4 * c.d_model;
    c.validate();
    return c;
}

// Training holds four floats per parameter (weights, gradients, AdamW's two moments). Refuse up
// front a model whose four copies would take more than half of the module's memory (the rest is
// for activations), instead of failing after seconds of initialisation inside malloc.
void require_model_fits(const ModelConfig& c, const char* where) {
    const double limit = 2.0 * static_cast<double>(max_tensor_elements());  // half the memory, in floats
    const double count = static_cast<double>(c.parameter_count()), need = 4.0 * count;
    if (need > limit) {
        fail<ValueError>(where, ": a model of this size has up to ", count,
                         " parameters; with gradients and optimizer state that is ", need * 4 / (1 << 20),
                         " MiB, over the budget of ", limit * 4 / (1 << 20), " MiB (half the module's memory)");
    }
}

// config() feeds back into new Model (numKvHeads 0 stays 0 = numHeads, as given).
val config_to_js(const ModelConfig& c) {
    val out = val::object();
    c.for_each_field([&](const ModelConfigField& field, const auto& value) {
        if (field.js) out.set(field.js, field_to_js(value));
    });
    return out;
}

std::string parameter_name(const val& name, const char* where) {
    if (!name.isString()) fail<ConfigError>(where, ": the parameter name must be a string");
    return name.as<std::string>();
}

// Drops the leading batch extent of an unbatched call's result.
std::vector<std::size_t> result_shape(std::vector<std::size_t> shape, bool batched) {
    if (!batched) shape.erase(shape.begin());
    return shape;
}

// Logits of an evaluation-mode forward: decoder (B, T, V), encoder (B, K).
val run_logits(const Model& model, const TokenCall& call, bool probabilities_of_next) {
    if (model.is_decoder()) {
        const Tensor3 logits = model.sequence_logits(call.tokens);  // (B, T, V)
        const std::size_t b = logits.shape(0), t = logits.shape(1), v = logits.shape(2);
        if (!probabilities_of_next) return tensor_to_js(logits.data(), result_shape({b, t, v}, call.batched));
        Tensor2 last = Tensor2::from_shape({b, v});  // (B, V) logits of the last position
        for (std::size_t i = 0; i < b; ++i) std::memcpy(&last(i, 0), &logits(i, t - 1, 0), v * sizeof(float));
        const Tensor2 p = softmax_rows(last);
        return tensor_to_js(p.data(), result_shape({b, v}, call.batched));
    }
    const Tensor2 logits = model.class_logits(call.tokens, call.padding);  // (B, K)
    if (!probabilities_of_next) return tensor_to_js(logits.data(), result_shape({logits.shape(0), logits.shape(1)}, call.batched));
    const Tensor2 p = softmax_rows(logits);
    return tensor_to_js(p.data(), result_shape({p.shape(0), p.shape(1)}, call.batched));
}

// Logits (B, K) of an image model, or the class probabilities; keeps the images' rank.
val run_image_logits(const Model& model, const val& images, const val& options, bool probabilities,
                     const char* where) {
    const JsOptions opt(options, {}, where);
    bool batched = false;
    const Tensor2 logits = model.image_logits(images_from_js(images, where, &batched));  // (B, K)
    const Tensor2 out = probabilities ? softmax_rows(logits) : logits;
    return tensor_to_js(out.data(), result_shape({out.shape(0), out.shape(1)}, batched));
}

// Logits (B, K) of a crossmodal model, or the match probabilities; keeps the input's rank.
val run_pair_logits(const Model& model, const val& pair, const val& options, bool probabilities, const char* where) {
    const JsOptions opt(options, {}, where);
    const PairCall call = pair_from_js(pair, where);
    const Tensor2 logits = model.pair_logits(call.tokens, call.images);  // (B, K)
    const Tensor2 out = probabilities ? softmax_rows(logits) : logits;
    return tensor_to_js(out.data(), result_shape({out.shape(0), out.shape(1)}, call.batched));
}

// The attention layer's block of an image model, and its windows on the patch grid.
val window_layout_of(const Model& model, const val& layer_value) {
    constexpr const char* where = "Model.windowLayout";
    const ImageClassifier& m = model.image_classifier();
    std::size_t layer = size_from_js(layer_value, where, "layer");
    const std::size_t per_side = m.windows_per_side(layer);  // ConfigError for a bad layer
    val out = val::object();
    out.set("patchSize", model.config().patch_size);
    out.set("windowsPerSide", per_side);
    if (!m.blocks.empty()) {  // a ViT: one window, the whole grid
        out.set("grid", model.config().patch_grid());
        out.set("window", model.config().patch_grid());
        out.set("shift", 0);
        out.set("cls", m.patch_emb.config().cls);
        return out;
    }
    for (const SwinStageLayers& stage : m.stages) {
        if (layer >= stage.blocks.size()) {
            layer -= stage.blocks.size();
            continue;
        }
        const SwinBlock& b = stage.blocks[layer];
        out.set("grid", b.grid);
        out.set("window", b.window);
        out.set("shift", b.shift);
        out.set("cls", false);
        break;
    }
    return out;
}

val logits_of(const Model& model, const val& tokens, const val& options) {
    if (model.is_image()) return run_image_logits(model, tokens, options, false, "Model.logits");
    if (model.is_crossmodal()) return run_pair_logits(model, tokens, options, false, "Model.logits");
    return run_logits(model, parse_tokens(model, tokens, options, {"padding"}, "Model.logits"), false);
}

val predict_of(const Model& model, const val& tokens, const val& options) {
    if (model.is_image()) return run_image_logits(model, tokens, options, true, "Model.predict");
    if (model.is_crossmodal()) return run_pair_logits(model, tokens, options, true, "Model.predict");
    return run_logits(model, parse_tokens(model, tokens, options, {"padding"}, "Model.predict"), true);
}

val forecast_of(const Model& model, const val& values, const val& time) {
    const SeriesCall call = series_from_js(values, time, "Model.forecast");
    const Tensor2 out = model.forecast(call.values, call.time);  // (B, horizon)
    return tensor_to_js(out.data(), result_shape({out.shape(0), out.shape(1)}, call.batched));
}

val attention_maps_of(const Model& model, const val& tokens, const val& options) {
    if (model.is_forecaster()) {
        constexpr const char* where = "Model.attentionMaps";
        const JsOptions opt(options, {"time", "batch"}, where);
        const SeriesCall call = series_from_js(tokens, opt.get("time"), where);
        return tensor_to_js(model.attention_maps(call.values, call.time, opt.size("batch", 0)));
    }
    if (model.is_image()) {
        constexpr const char* where = "Model.attentionMaps";
        const JsOptions opt(options, {"layer", "batch"}, where);
        bool batched = false;
        const Tensor3 images = images_from_js(tokens, where, &batched);
        return tensor_to_js(model.image_classifier().attention_maps(images, image_layer(model, opt, where),
                                                                    opt.size("batch", 0)));
    }
    if (model.is_crossmodal()) {
        constexpr const char* where = "Model.attentionMaps";
        const JsOptions opt(options, {"batch"}, where);
        const PairCall call = pair_from_js(tokens, where);
        return tensor_to_js(model.crossmodal().cross_attention_maps(call.tokens, {}, call.images, opt.size("batch", 0)));
    }
    const TokenCall call = parse_tokens(model, tokens, options, {"padding", "batch"}, "Model.attentionMaps");
    return tensor_to_js(model.attention_maps(call.tokens, call.padding, call.batch));
}

// model.trace(tokens, { layer, padding? }): every stage of one block, as a Trace.
TraceBinding trace_of(const Model& model, const val& tokens, const val& options) {
    constexpr const char* where = "Model.trace";
    if (model.is_forecaster()) {
        const JsOptions opt(options, {"layer", "time"}, where);
        if (!opt.has("layer")) fail<ConfigError>(where, ": option 'layer' is required (0..", model.config().num_layers - 1, ")");
        const SeriesCall call = series_from_js(tokens, opt.get("time"), where);
        return TraceBinding(model.trace_layer(call.values, call.time, size_from_js(opt.get("layer"), where, "layer")));
    }
    if (model.is_image()) {
        const JsOptions opt(options, {"layer"}, where);
        bool batched = false;
        const Tensor3 images = images_from_js(tokens, where, &batched);
        return TraceBinding(model.image_classifier().trace_layer(images, image_layer(model, opt, where)));
    }
    if (model.is_crossmodal()) {
        const JsOptions opt(options, {"layer"}, where);
        const CrossModalModel& m = model.crossmodal();
        if (!opt.has("layer")) {
            fail<ConfigError>(where, ": option 'layer' is required (0..", m.num_attention_layers() - 1,
                              "; the cross-attention is ", m.cross_attention_layer(), ")");
        }
        const PairCall call = pair_from_js(tokens, where);
        return TraceBinding(m.trace_layer(call.tokens, {}, call.images, size_from_js(opt.get("layer"), where, "layer")));
    }
    if (options.isUndefined() || options.isNull()) {
        fail<ConfigError>(where, ": pass { layer } (0..", model.config().num_layers - 1, "), the block to record");
    }
    const JsOptions opt(options, {"layer", "padding"}, where);
    if (!opt.has("layer")) {
        fail<ConfigError>(where, ": option 'layer' is required (0..", model.config().num_layers - 1, ")");
    }
    const std::size_t layer = size_from_js(opt.get("layer"), where, "layer");
    const std::size_t layers = model.config().num_layers;
    if (layer >= layers) {
        fail<ConfigError>(where, ": layer ", layer, " is out of range: the model has ", layers, " layer",
                          layers == 1 ? "" : "s", " (0..", layers - 1, ")");
    }
    const TokenCall call = parse_tokens(model, tokens, val::undefined(), {}, where);
    Mask2 padding;
    if (!opt.is_null("padding")) {
        if (model.is_decoder()) {
            fail<ConfigError>(where, ": option 'padding' needs an encoder model; a decoder is causal and pads at the end");
        }
        padding = mask_from_js(opt.get("padding"), where, "padding", !call.batched);
    }
    return TraceBinding(model.trace_layer(call.tokens, layer, padding));
}

val generate_of(const Model& model, const val& prompt, const val& max_new, const val& options) {
    constexpr const char* where = "Model.generate";
    const JsOptions opt(options, {"temperature", "seed"}, where);
    const std::vector<std::int32_t> ids = prompt_from_js(prompt, where);
    const std::size_t n = size_from_js(max_new, where, "maxNewTokens");
    GenerateOptions g;
    g.temperature = opt.float32("temperature", 0.0f);
    g.seed = opt.size("seed", 0);
    require_allocatable({n, model.config().vocab_size}, where, "the logits of the new tokens");
    const GenerateResult r = model.generate(ids, n, g);  // ConfigError for an encoder
    return int32_array_to_js(r.tokens.data(), r.tokens.size());
}

val save_of(const Model& model, const val& notes) {
    constexpr const char* where = "Model.save";
    std::vector<std::uint8_t> bytes = model.save();
    if (!notes.isUndefined() && !notes.isNull()) {
        // Free-form notes about the run (the task and its options) as "task.<key>" metadata, the
        // convention of the native CLI's checkpoints; loaders ignore them.
        if (notes.typeOf().as<std::string>() != "object" || notes.isArray()) {
            fail<ConfigError>(where, ": notes must be an object of strings and numbers");
        }
        io::SafeTensors st = io::SafeTensors::parse(bytes);
        const val keys = val::global("Object").call<val>("keys", notes);
        for (std::size_t i = 0, n = keys["length"].as<std::size_t>(); i < n; ++i) {
            const std::string key = keys[i].as<std::string>();
            const val v = notes[key];
            if (!v.isString() && !v.isNumber()) fail<ConfigError>(where, ": note '", key, "' must be a string or a number");
            st.metadata()[io::kTaskMetadataPrefix + key] = v.call<std::string>("toString");
        }
        bytes = st.serialize();
    }
    return uint8_array_to_js(bytes.data(), bytes.size());
}

}  // namespace

ModelBinding* ModelBinding::create(val options) {
    return guarded("new Model", [&] {
        const JsOptions opt(options, model_options(), "new Model");
        const ModelConfig config = config_from_js(opt);
        require_model_fits(config, "new Model");
        const std::uint64_t seed = opt.size("seed", 0);
        auto binding = std::make_unique<ModelBinding>(std::make_shared<Model>(config, seed));
        return binding.release();
    }, options);
}

ModelBinding* ModelBinding::create_without_options() { return create(val::undefined()); }

ModelBinding ModelBinding::load(val bytes) {
    return guarded("Model.load", [&] {
        const std::vector<std::uint8_t> data = bytes_from_js(bytes, "Model.load", "the checkpoint");
        return ModelBinding(std::make_shared<Model>(Model::load(data)));
    }, bytes);
}

val ModelBinding::checkpoint_notes(val bytes) {
    return guarded("Model.checkpointNotes", [&] {
        const io::SafeTensors st = io::SafeTensors::parse(bytes_from_js(bytes, "Model.checkpointNotes", "the checkpoint"));
        const std::string prefix = io::kTaskMetadataPrefix;
        val out = val::object();
        for (const auto& [key, value] : st.metadata()) {
            if (key.compare(0, prefix.size(), prefix) == 0) out.set(key.substr(prefix.size()), value);
        }
        return out;
    }, bytes);
}

val ModelBinding::config() const {
    return guarded("Model.config", [&] { return config_to_js(model_->config()); });
}

val ModelBinding::kind() const {
    return guarded("Model.kind", [&] { return val(std::string(model_kind_name(model_->kind()))); });
}

val ModelBinding::num_parameters() const {
    return guarded("Model.numParameters", [&] { return val(static_cast<double>(model_->num_parameters())); });
}

val ModelBinding::parameter_names() const {
    return guarded("Model.parameterNames", [&] {
        std::vector<std::string> names;
        for (const ParameterView& p : model_->parameters()) names.push_back(p.name);
        return strings_to_js(names);
    });
}

val ModelBinding::get_parameter(val name) const {
    return guarded("Model.getParameter", [&] {
        constexpr const char* where = "Model.getParameter";
        const std::vector<ParameterView> params = model_->parameters();
        const ParameterView& p = find_parameter(params, parameter_name(name, where), where);
        return tensor_to_js(p.data, p.shape);
    }, name);
}

void ModelBinding::set_parameter(val name, val tensor) {
    guarded("Model.setParameter", [&] {
        constexpr const char* where = "Model.setParameter";
        const std::string key = parameter_name(name, where);
        const std::vector<ParameterView> params = model_->parameters();
        const ParameterView& p = find_parameter(params, key, where);
        const std::string what = "'" + key + "'";
        const std::vector<float> data = floats_from_js(tensor, ShapeSpec(p.shape.begin(), p.shape.end()), where, what.c_str());
        assign_parameter(params, key, p.shape, data.data(), where);
    }, name, tensor);
}

// One overload per arity (embind checks the argument count); each guards its own arguments,
// so a failing call releases every handle it was given.
val ModelBinding::logits(val tokens) const {
    return guarded("Model.logits", [&] { return logits_of(*model_, tokens, val::undefined()); }, tokens);
}
val ModelBinding::logits(val tokens, val options) const {
    return guarded("Model.logits", [&] { return logits_of(*model_, tokens, options); }, tokens, options);
}

val ModelBinding::predict(val tokens) const {
    return guarded("Model.predict", [&] { return predict_of(*model_, tokens, val::undefined()); }, tokens);
}
val ModelBinding::predict(val tokens, val options) const {
    return guarded("Model.predict", [&] { return predict_of(*model_, tokens, options); }, tokens, options);
}

val ModelBinding::forecast(val values) const {
    return guarded("Model.forecast", [&] { return forecast_of(*model_, values, val::undefined()); }, values);
}
val ModelBinding::forecast(val values, val time) const {
    return guarded("Model.forecast", [&] { return forecast_of(*model_, values, time); }, values, time);
}

val ModelBinding::attention_maps(val tokens) const {
    return guarded("Model.attentionMaps", [&] { return attention_maps_of(*model_, tokens, val::undefined()); }, tokens);
}
val ModelBinding::attention_maps(val tokens, val options) const {
    return guarded("Model.attentionMaps", [&] { return attention_maps_of(*model_, tokens, options); }, tokens, options);
}

TraceBinding ModelBinding::trace(val tokens) const {
    return guarded("Model.trace", [&] { return trace_of(*model_, tokens, val::undefined()); }, tokens);
}
TraceBinding ModelBinding::trace(val tokens, val options) const {
    return guarded("Model.trace", [&] { return trace_of(*model_, tokens, options); }, tokens, options);
}

val ModelBinding::window_layout(val layer) const {
    return guarded("Model.windowLayout", [&] { return window_layout_of(*model_, layer); }, layer);
}

val ModelBinding::generate(val prompt, val max_new) const {
    return guarded("Model.generate", [&] { return generate_of(*model_, prompt, max_new, val::undefined()); }, prompt,
                   max_new);
}
val ModelBinding::generate(val prompt, val max_new, val options) const {
    return guarded("Model.generate", [&] { return generate_of(*model_, prompt, max_new, options); }, prompt, max_new,
                   options);
}

val ModelBinding::save() const {
    return guarded("Model.save", [&] { return save_of(*model_, val::undefined()); });
}
val ModelBinding::save(val notes) const {
    return guarded("Model.save", [&] { return save_of(*model_, notes); }, notes);
}

namespace {
const text::Tokenizer& require_tokenizer(const Model& model, const char* where) {
    if (!model.tokenizer()) {
        fail<ConfigError>(where, ": the model has no tokenizer (model.setTokenizer(lab.Tokenizer.fromFiles(...)))");
    }
    return *model.tokenizer();
}
}  // namespace

val ModelBinding::tokenizer() const {
    return guarded("Model.tokenizer", [&] {
        return model_->tokenizer() ? val(TokenizerBinding(model_->shared_tokenizer())) : val::null();
    });
}
void ModelBinding::set_tokenizer(val tokenizer) {
    guarded("Model.setTokenizer", [&] {
        if (tokenizer.isNull() || tokenizer.isUndefined()) {
            model_->set_tokenizer(nullptr);
        } else if (tokenizer.instanceof(val::module_property("Tokenizer"))) {
            model_->set_tokenizer(tokenizer.as<TokenizerBinding>().shared());
        } else {
            fail<ConfigError>("Model.setTokenizer: pass a Tokenizer or null");
        }
    }, tokenizer);
}
val ModelBinding::encode(val text) const {
    return guarded("Model.encode", [&] { return encode_to_js(require_tokenizer(*model_, "Model.encode"), text, "Model.encode"); },
                   text);
}
val ModelBinding::continue_text(val prompt, val max_new, val options) const {
    return guarded("Model.continueText", [&] {
        constexpr const char* where = "Model.continueText";
        const JsOptions opt(options, {"temperature", "seed"}, where);
        if (!prompt.isString()) fail<ConfigError>(where, ": the prompt must be a string");
        const std::size_t n = size_from_js(max_new, where, "maxNewTokens");
        GenerateOptions g;
        g.temperature = opt.float32("temperature", 0.0f);
        g.seed = opt.size("seed", 0);
        require_allocatable({n, model_->config().vocab_size}, where, "the logits of the new tokens");
        return val(attnlab::continue_text(*model_, prompt.as<std::string>(), n, g));
    }, prompt, max_new, options);
}
val ModelBinding::decode(val ids) const {
    return guarded("Model.decode", [&] { return decode_to_js(require_tokenizer(*model_, "Model.decode"), ids, "Model.decode"); },
                   ids);
}

void ModelBinding::load_parameters(val bytes) {
    guarded("Model.loadParameters", [&] {
        model_->load_parameters(bytes_from_js(bytes, "Model.loadParameters", "the checkpoint"));
    }, bytes);
}

EMSCRIPTEN_BINDINGS(attnlab_model) {
    using emscripten::select_overload;
    using M = ModelBinding;
    emscripten::class_<M>("Model")
        .constructor(&M::create_without_options)
        .constructor(&M::create)
        .class_function("load", &M::load)
        .class_function("checkpointNotes", &M::checkpoint_notes)
        .function("config", &M::config)
        .function("kind", &M::kind)
        .function("numParameters", &M::num_parameters)
        .function("parameterNames", &M::parameter_names)
        .function("getParameter", &M::get_parameter)
        .function("setParameter", &M::set_parameter)
        .function("logits", select_overload<val(val) const>(&M::logits))
        .function("logits", select_overload<val(val, val) const>(&M::logits))
        .function("predict", select_overload<val(val) const>(&M::predict))
        .function("predict", select_overload<val(val, val) const>(&M::predict))
        .function("forecast", select_overload<val(val) const>(&M::forecast))
        .function("forecast", select_overload<val(val, val) const>(&M::forecast))
        .function("attentionMaps", select_overload<val(val) const>(&M::attention_maps))
        .function("attentionMaps", select_overload<val(val, val) const>(&M::attention_maps))
        .function("trace", select_overload<TraceBinding(val) const>(&M::trace))
        .function("trace", select_overload<TraceBinding(val, val) const>(&M::trace))
        .function("windowLayout", &M::window_layout)
        .function("generate", select_overload<val(val, val) const>(&M::generate))
        .function("generate", select_overload<val(val, val, val) const>(&M::generate))
        .function("continueText", &M::continue_text)
        .function("tokenizer", &M::tokenizer)
        .function("setTokenizer", &M::set_tokenizer)
        .function("encode", &M::encode)
        .function("decode", &M::decode)
        .function("headScores", &M::head_scores)
        .function("ablate", select_overload<val(val) const>(&M::ablate))
        .function("ablate", select_overload<val(val, val) const>(&M::ablate))
        .function("patch", select_overload<val(val, val) const>(&M::patch))
        .function("patch", select_overload<val(val, val, val) const>(&M::patch))
        .function("logitLens", select_overload<val(val) const>(&M::logit_lens))
        .function("logitLens", select_overload<val(val, val) const>(&M::logit_lens))
        .function("residuals", &M::residuals)
        .function("logitAttribution", select_overload<val(val) const>(&M::logit_attribution))
        .function("logitAttribution", select_overload<val(val, val) const>(&M::logit_attribution))
        .function("save", select_overload<val() const>(&M::save))
        .function("save", select_overload<val(val) const>(&M::save))
        .function("loadParameters", &M::load_parameters);
}

}  // namespace attnlab::web
