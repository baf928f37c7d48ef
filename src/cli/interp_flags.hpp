// src/cli/interp_flags.hpp: what the interpretability commands (heads, ablate, patch, lens)
// share: the decoder from --model [--config], its tokenizer (--tokenizer DIR, the checkpoint's
// own, or a char_lm checkpoint's alphabet), the sequences of --text / --tokens flags, the
// labels of tokens and heads, and the JSON file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/train/tasks.hpp"

namespace attnlab::cli {

struct Subject {
    Model model;
    std::unique_ptr<Task> task;  // a char_lm checkpoint's task (its alphabet reads --text), else null
    const DecoderLM& decoder() const { return model.decoder(); }
    const text::Tokenizer* tokenizer() const { return model.tokenizer(); }
};

// --model, --config, --tokenizer.
void add_subject_flags(Args& args);
// The decoder of --model (an attnlab checkpoint or a GPT-2 one); ConfigError for another model.
Subject load_subject(const Args& args, const char* where);

// The sequence of `text_flag` (through the tokenizer or the char_lm alphabet) or `tokens_flag`
// (ids): exactly one of them must be given (ConfigError naming both otherwise), and it must fit
// the model (ValueError naming the id or the length).
std::vector<std::int32_t> sequence_from(const Args& args, const Subject& subject, const std::string& text_flag,
                                        const std::string& tokens_flag, const char* where);

// A token as text for a table ("" without a tokenizer); JSON-quoted.
std::string token_label(const Subject& subject, std::int32_t id);

// "1.3,0.0" -> {(1, 3), (0, 0)}: layer.head pairs, checked against the model (ValueError naming
// a head or layer out of range; ConfigError for text that is not layer.head).
std::vector<std::pair<std::size_t, std::size_t>> parse_heads(const std::string& list, const DecoderLM& model,
                                                             const char* where);

// One token id of flag `name`, checked against the vocabulary (ValueError naming it).
std::int32_t token_flag(const Args& args, const std::string& name, const DecoderLM& model, const char* where);

// Writes json (one line) to path; IoError naming it when that fails.
void write_json_file(const nlohmann::json& json, const std::string& path, const char* where);

}  // namespace attnlab::cli
