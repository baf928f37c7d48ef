// web/bindings/fields.hpp: the values of a field table (ModelConfig's, model/config_fields.hpp;
// AttentionOptions', attention/attention_options.hpp) to and from JavaScript, and their
// TypeScript types.
//
// What it is for: the bindings convert every field of a table in one loop
// (ModelConfig::for_each_field, for_each_attention_option), so each field type converts here
// once: sizes as non-negative integers, booleans, floats as finite float32, an optional float as
// a number or null, a list of sizes as number[], a scale as true | false | number, a mask as a
// {shape, data} tensor or null, and a choice (core/choice.hpp) by name. ts_type<T>() is the
// TypeScript of each, which lab.modelConfigFields() and lab.attentionOptionFields() report and
// scripts/gen_types.mjs writes into web/generated/types.d.ts.
// Not for: validation (the engine's validate() names what is wrong with a value).
//
//   config.for_each_field([&](const ModelConfigField& f, auto& value) { if (f.js) field_from_js(opt, f.js, value); });
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <emscripten/val.h>

#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/choice.hpp"
#include "attnlab/core/tensor.hpp"
#include "convert.hpp"

namespace attnlab::web {

using emscripten::val;

// A field from its option, if given (else `value` keeps its default); each type as JsOptions
// checks it, a choice by name (ConfigError "<where>: unknown <what> ...; valid: ...").
void field_from_js(const JsOptions& opt, const char* key, std::size_t& value);
void field_from_js(const JsOptions& opt, const char* key, bool& value);
void field_from_js(const JsOptions& opt, const char* key, float& value);
void field_from_js(const JsOptions& opt, const char* key, double& value);
void field_from_js(const JsOptions& opt, const char* key, std::optional<float>& value);  // null: unset
void field_from_js(const JsOptions& opt, const char* key, std::vector<std::size_t>& value);
void field_from_js(const JsOptions& opt, const char* key, ScaleOptions& value);  // true | false | factor
template <class Enum, std::enable_if_t<is_choice_v<Enum>, int> = 0>
void field_from_js(const JsOptions& opt, const char* key, Enum& value) {
    if (opt.has(key)) value = choice_from_name<Enum>(opt.string(key, ""), opt.where());
}

val field_to_js(std::size_t value);
val field_to_js(bool value);
val field_to_js(float value);
val field_to_js(double value);
val field_to_js(const std::optional<float>& value);  // null when unset
val field_to_js(const std::vector<std::size_t>& value);
val field_to_js(const ScaleOptions& value);  // true (1/sqrt(D)), false, or the factor
val field_to_js(const Mask2& value);         // null when empty
template <class Enum, std::enable_if_t<is_choice_v<Enum>, int> = 0>
val field_to_js(Enum value) {
    return val(std::string(choice_name(value)));
}

// The TypeScript type of a field of type T ("number", "boolean", "Normalizer", ...).
template <class T>
std::string ts_type() {
    if constexpr (is_choice_v<T>) {
        return std::string(ChoiceTraits<T>::type);
    } else if constexpr (std::is_same_v<T, bool>) {
        return "boolean";
    } else if constexpr (std::is_same_v<T, std::optional<float>>) {
        return "number | null";
    } else if constexpr (std::is_same_v<T, std::vector<std::size_t>>) {
        return "number[]";
    } else if constexpr (std::is_same_v<T, ScaleOptions>) {
        return "boolean | number";
    } else if constexpr (std::is_same_v<T, Mask2>) {
        return "Mask | null";
    } else {
        static_assert(std::is_arithmetic_v<T>, "ts_type: a field type without a TypeScript type");
        return "number";
    }
}

}  // namespace attnlab::web
