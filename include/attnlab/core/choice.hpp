// attnlab/core/choice.hpp: an enumerated choice (a normaliser, an attention variant, a number
// format, ...) declared once: the enum, each value's name and help, and what the choice is.
//
// What it is for: one line per value, from which everything else derives: the enum the kernels
// switch on, name <-> value (with a ConfigError listing the valid names), the CLI flags' help,
// the checkpoint metadata (model/field_text.hpp), the JavaScript option check, lab.choices() and
// the TypeScript unions generated from it (scripts/gen_types.mjs), and the docs' tables (checked
// by tests/docs/test_choice_tables.cpp). A new value is one more line in its list; a new choice
// is one list and one ATTNLAB_CHOICE line.
// Not for: sets of names that are not an enum of the engine (task names live in train/tasks.hpp's
// registry, stage names in attention/stage.hpp, experiment names in experiments/registry.hpp).
//
//   #define ATTNLAB_NORMALIZER_VALUES(X) X(softmax, "rows sum to 1") X(relu, "max(s_ij, 0) / n_i")
//   ATTNLAB_CHOICE(Normalizer, "normalizer", ATTNLAB_NORMALIZER_VALUES,
//                  "what turns the scaled, masked scores into weights")
//
//   attnlab::choice_name(attnlab::Normalizer::relu);                 // "relu"
//   attnlab::choice_from_name<attnlab::Normalizer>("tanh", "demo");  // ConfigError:
//       // "demo: unknown normalizer 'tanh'; valid: softmax, relu"
//   attnlab::choice_names<attnlab::Normalizer>();                     // "softmax, relu"
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "attnlab/core/error.hpp"

namespace attnlab {

// One value of a choice: the enumerator, its name (the text form everywhere: CLI, JavaScript,
// checkpoints) and what it means.
template <class Enum>
struct ChoiceValue {
    Enum value;
    std::string_view name;
    std::string_view help;
};

// The table of one choice, specialised by ATTNLAB_CHOICE for its enum:
//   what    the choice in messages ("unknown <what> 'x'") and in help texts: "normalizer"
//   type    the enum's name, also its TypeScript union's name: "Normalizer"
//   doc     what the choice decides, one line
//   values  every value, in the order help texts and the page list them
template <class Enum>
struct ChoiceTraits {
    static constexpr bool is_choice = false;
};

template <class T>
inline constexpr bool is_choice_v = ChoiceTraits<T>::is_choice;

// The values of Enum, in their table's order.
template <class Enum>
constexpr const auto& choice_values() {
    static_assert(is_choice_v<Enum>, "not a choice: declare it with ATTNLAB_CHOICE");
    return ChoiceTraits<Enum>::values;
}

// The name of `value` ("" for a value outside the table, which only a cast can make).
template <class Enum>
constexpr std::string_view choice_name(Enum value) {
    for (const auto& v : choice_values<Enum>()) {
        if (v.value == value) return v.name;
    }
    return {};
}

// The value called `name`, if any.
template <class Enum>
constexpr std::optional<Enum> find_choice(std::string_view name) {
    for (const auto& v : choice_values<Enum>()) {
        if (v.name == name) return v.value;
    }
    return std::nullopt;
}

// Every name of Enum joined by `separator`: "softmax, sigmoid, relu".
template <class Enum>
std::string choice_names(std::string_view separator = ", ") {
    std::string out;
    for (const auto& v : choice_values<Enum>()) {
        if (!out.empty()) out += separator;
        out += v.name;
    }
    return out;
}

// Every name of Enum, in order.
template <class Enum>
std::vector<std::string> choice_name_list() {
    std::vector<std::string> out;
    for (const auto& v : choice_values<Enum>()) out.emplace_back(v.name);
    return out;
}

// The value called `name`; ConfigError "<where>: unknown <what> '<name>'; valid: <names>"
// otherwise (without "<where>: " when where is empty).
template <class Enum>
Enum choice_from_name(std::string_view name, std::string_view where = {}) {
    if (const std::optional<Enum> value = find_choice<Enum>(name)) return *value;
    fail<ConfigError>(where, where.empty() ? "" : ": ", "unknown ", ChoiceTraits<Enum>::what, " '", name,
                      "'; valid: ", choice_names<Enum>());
}

// "<doc>. <name>: <help>; <name>: <help>; ...": a flag's or an option's help. (A value's help
// holds no ';', so the list reads unambiguously.)
template <class Enum>
std::string choice_help(std::string_view doc) {
    std::string out(doc);
    out += ". ";
    bool first = true;
    for (const auto& v : choice_values<Enum>()) {
        if (!first) out += "; ";
        first = false;
        out += v.name;
        if (!v.help.empty()) {
            out += ": ";
            out += v.help;
        }
    }
    return out;
}

}  // namespace attnlab

// One value of a choice list: X(name, help). The enumerator and its text are the same word.
#define ATTNLAB_CHOICE_ENUMERATOR(id, help) id,
#define ATTNLAB_CHOICE_VALUE(id, help) ::attnlab::ChoiceValue<Self>{Self::id, #id, help},

// Declares `enum class Enum : std::uint8_t` with the values of LIST (a macro taking X and
// expanding to X(name, help) per value) and its ChoiceTraits (see above). Use inside namespace
// attnlab.
#define ATTNLAB_CHOICE(Enum, what_text, LIST, doc_text)                                          \
    enum class Enum : std::uint8_t { LIST(ATTNLAB_CHOICE_ENUMERATOR) };                          \
    template <>                                                                                  \
    struct ChoiceTraits<Enum> {                                                                  \
        using Self = Enum;                                                                       \
        static constexpr bool is_choice = true;                                                  \
        static constexpr std::string_view what = what_text;                                      \
        static constexpr std::string_view type = #Enum;                                          \
        static constexpr std::string_view doc = doc_text;                                        \
        static constexpr ::attnlab::ChoiceValue<Enum> values[] = {LIST(ATTNLAB_CHOICE_VALUE)};   \
    };
