// attnlab/model/field_text.hpp: a config field's value as text and back: the checkpoint
// metadata's form, which the CLI's flag values share.
//
// What it is for: ModelConfig::to_metadata / from_metadata (model/config.hpp), the CLI's model
// and task flags (src/cli/model_flags.cpp) and the bindings' enum options. Sizes are decimal,
// booleans "true"/"false", floats have 9 significant digits (round-trips float32 exactly), an
// unset optional float is "none", a list is comma-separated ("12,24"; "" when empty), a scale
// (attention/scaled_dot_product.hpp) is "auto", "off" or its factor, and a choice
// (core/choice.hpp) is its value's name. Not for: JSON (the bindings convert to
// JavaScript values themselves).
//
//   std::string t = attnlab::format_field(attnlab::Normalizer::relu);          // "relu"
//   std::size_t n; attnlab::parse_field("attnlab", "--d-model", "64", n);      // 64
//   // parse_field("attnlab", "--d-model", "-1", n) throws ConfigError
//   //   "attnlab: --d-model must be a non-negative integer, got '-1'"
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/choice.hpp"

namespace attnlab {

std::string format_field(std::size_t value);
std::string format_field(bool value);
std::string format_field(float value);
std::string format_field(double value);                        // 17 significant digits
std::string format_field(const std::optional<float>& value);  // "none" when unset
std::string format_field(const std::vector<std::size_t>& value);
std::string format_field(const ScaleOptions& value);  // "auto" (1/sqrt(D)), "off", or the factor
template <class Enum, std::enable_if_t<is_choice_v<Enum>, int> = 0>
std::string format_field(Enum value) {
    return std::string(choice_name(value));
}

// parse_field throws ConfigError "<where>: <key> must be ..., got '<text>'"; a choice's
// "<where>: unknown <what> '<text>'; valid: <names>".
void parse_field(const char* where, const char* key, const std::string& text, std::size_t& out);
void parse_field(const char* where, const char* key, const std::string& text, bool& out);
void parse_field(const char* where, const char* key, const std::string& text, float& out);
void parse_field(const char* where, const char* key, const std::string& text, double& out);
void parse_field(const char* where, const char* key, const std::string& text, std::optional<float>& out);
void parse_field(const char* where, const char* key, const std::string& text, std::vector<std::size_t>& out);
void parse_field(const char* where, const char* key, const std::string& text, ScaleOptions& out);
template <class Enum, std::enable_if_t<is_choice_v<Enum>, int> = 0>
void parse_field(const char* where, const char* /*key*/, const std::string& text, Enum& out) {
    out = choice_from_name<Enum>(text, where);
}

// True for the types above: those a flag or a metadata entry can hold (masks, for one, are not).
template <class T, class = void>
struct has_field_text : std::false_type {};
template <class T>
struct has_field_text<T, std::void_t<decltype(format_field(std::declval<const T&>()))>> : std::true_type {};
template <class T>
inline constexpr bool has_field_text_v = has_field_text<T>::value;

}  // namespace attnlab
