// The engine's tables as JavaScript data: every choice (lab.choices()), ModelConfig's fields
// (lab.modelConfigFields()) and AttentionOptions' fields (lab.attentionOptionFields()).
//
// What it is for: scripts/gen_types.mjs writes them as TypeScript (web/generated/), so the
// TypeScript unions and interfaces are the C++ tables; a page or a tool can also read them at
// run time. The choices are those the two field tables hold, each once, in the order the tables
// first name them.
//
//   lab.choices();              // [{ type: 'Normalizer', what: 'normalizer', doc, values: [{ name, help }] }, ...]
//   lab.modelConfigFields();    // [{ name: 'd_model', js: 'dModel', cli: 'd-model', doc, type: 'number', default: 32 }, ...]
//   lab.attentionOptionFields(); // [{ name: 'mask.causal', js: 'causal', cli: null, doc, type: 'boolean', default: false }, ...]
#include <set>
#include <string>
#include <type_traits>

#include <emscripten/bind.h>

#include "attnlab/attention/attention_options.hpp"
#include "attnlab/interp/ablation.hpp"
#include "attnlab/interp/detectors.hpp"
#include "attnlab/interp/poem_patterns.hpp"
#include "attnlab/model/config.hpp"
#include "fields.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

val text_or_null(const char* s) { return s ? val(std::string(s)) : val::null(); }

// {name, js, cli, doc, type, default} of one row whose default value is `value`.
template <class Field, class T>
val field_row(const Field& field, const T& value) {
    val row = val::object();
    row.set("name", std::string(field.name));
    row.set("js", text_or_null(field.js));
    row.set("cli", text_or_null(field.cli));
    row.set("doc", std::string(field.doc));
    row.set("type", ts_type<T>());
    row.set("default", field_to_js(value));
    return row;
}

template <class Enum>
val choice_to_js() {
    val values = val::array();
    for (const auto& v : choice_values<Enum>()) {
        val value = val::object();
        value.set("name", std::string(v.name));
        value.set("help", std::string(v.help));
        values.call<void>("push", value);
    }
    val out = val::object();
    out.set("type", std::string(ChoiceTraits<Enum>::type));
    out.set("what", std::string(ChoiceTraits<Enum>::what));
    out.set("doc", std::string(ChoiceTraits<Enum>::doc));
    out.set("values", values);
    return out;
}

val model_config_fields() {
    val out = val::array();
    const ModelConfig defaults;
    defaults.for_each_field([&](const ModelConfigField& field, const auto& value) { out.call<void>("push", field_row(field, value)); });
    return out;
}

val attention_option_fields() {
    val out = val::array();
    const AttentionOptions defaults;
    for_each_attention_option(defaults, [&](const AttentionOptionField& field, const auto& value) {
        out.call<void>("push", field_row(field, value));
    });
    return out;
}

val choices() {
    val out = val::array();
    std::set<std::string> seen;
    const auto add = [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (is_choice_v<T>) {
            if (seen.insert(std::string(ChoiceTraits<T>::type)).second) out.call<void>("push", choice_to_js<T>());
        }
    };
    const ModelConfig config;
    config.for_each_field([&](const ModelConfigField&, const auto& value) { add(value); });
    const AttentionOptions options;
    for_each_attention_option(options, [&](const AttentionOptionField&, const auto& value) { add(value); });
    // The interpretability tools' choices (Model.ablate's method; the detector patterns, HeadScore's
    // keys; the poem's patterns, PoemScore's keys).
    add(AblationMethod{});
    add(HeadPattern{});
    add(PoemPattern{});
    return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_tables) {
    emscripten::function("choices", &choices);
    emscripten::function("modelConfigFields", &model_config_fields);
    emscripten::function("attentionOptionFields", &attention_option_fields);
}

}  // namespace attnlab::web
