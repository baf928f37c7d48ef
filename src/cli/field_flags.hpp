// src/cli/field_flags.hpp: a field table's rows as command-line flags, declared and read back
// from the same row.
//
// A row with a CLI flag (ModelConfig's table, model/config_fields.hpp; AttentionOptions',
// attention/attention_options.hpp) becomes a value flag whose default is the field's text form
// (model/field_text.hpp), or, for a bool, a switch that sets the opposite of its default. A
// choice's help lists its values (core/choice.hpp).
//
//   AttentionOptions defaults;
//   for_each_attention_option(defaults, [&](const auto& field, const auto& value) { add_field_flag(args, field, value); });
//   ... args.parse(argc, argv, 2);
//   for_each_attention_option(options, [&](const auto& field, auto& value) { read_field_flag(args, field, value); });
#pragma once

#include <string>
#include <type_traits>

#include "args.hpp"
#include "attnlab/core/choice.hpp"
#include "attnlab/model/field_text.hpp"

namespace attnlab::cli {

// The help of a field's flag: its doc, and for a choice what each value means.
template <class T, class Field>
std::string field_flag_help(const Field& field) {
    if constexpr (is_choice_v<T>) return choice_help<T>(field.doc);
    return field.doc;
}

// Declares the flag of `field` (none when it has no CLI flag), `value` being its default; `help`
// is a value flag's (a switch's reads "<name> = <the opposite>: <doc>").
template <class Field, class T>
void add_field_flag(Args& args, const Field& field, const T& value, const std::string& help) {
    if constexpr (has_field_text_v<T>) {
        if (!field.cli) return;
        if constexpr (std::is_same_v<T, bool>) {
            args.add_switch(field.cli, std::string(field.name) + " = " + format_field(!value) + ": " + field.doc);
        } else {
            args.add(field.cli, format_field(value), help);
        }
    }
}
template <class Field, class T>
void add_field_flag(Args& args, const Field& field, const T& value) {
    add_field_flag(args, field, value, field_flag_help<T>(field));
}

// Sets `value` from the flag of `field` (a switch flips it); ConfigError naming the flag and
// its text when it does not parse.
template <class Field, class T>
void read_field_flag(const Args& args, const Field& field, T& value) {
    if constexpr (has_field_text_v<T>) {
        if (!field.cli) return;
        if constexpr (std::is_same_v<T, bool>) {
            if (args.get_switch(field.cli)) value = !value;
        } else {
            const std::string flag = std::string("--") + field.cli;
            parse_field("attnlab", flag.c_str(), args.get(field.cli), value);
        }
    }
}

}  // namespace attnlab::cli
