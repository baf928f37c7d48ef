// src/cli/text_flags.hpp: the tokenizer of a command, from --tokenizer DIR or from the
// checkpoint given with --model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "args.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/text/tokenizer.hpp"

namespace attnlab::cli {

// --tokenizer DIR (load_tokenizer_directory) when given, else the tokenizer of the checkpoint
// --model names (when the command has that flag and it carries one), else null.
std::shared_ptr<const text::Tokenizer> tokenizer_from_flags(const Args& args, const char* where);

// Sets --tokenizer DIR on model when given (ConfigError if it does not fit the model); returns
// the model's tokenizer, or null.
const text::Tokenizer* apply_tokenizer_flag(const Args& args, Model& model);

// "1,2,3" -> {1, 2, 3}; ConfigError starting with `where` naming an item that is not a token id,
// or for an empty list.
std::vector<std::int32_t> parse_token_ids(const std::string& list, const char* where);

}  // namespace attnlab::cli
