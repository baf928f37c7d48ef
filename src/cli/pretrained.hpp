// src/cli/pretrained.hpp: model files for the commands that read one: an attnlab checkpoint, or
// a GPT-2 checkpoint in Hugging Face's format (io/hf_gpt2.hpp) with its optional config.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/facade/model.hpp"

namespace attnlab::cli {

// The bytes of a file; IoError naming `what` and the path if it cannot be read.
std::vector<std::uint8_t> read_file_bytes(const std::string& path, const char* what);

// Whether bytes hold a Hugging Face GPT-2 checkpoint rather than an attnlab one (io::is_hf_gpt2
// on its header; a file whose header does not parse is left to the attnlab loader to refuse).
bool is_hf_gpt2_file(const std::vector<std::uint8_t>& bytes);

// What GPT-2 loaders said in this run, joined by "; " (see load_hf_gpt2_model).
std::string& loader_notes();

// A GPT-2 checkpoint as a Model, with config.json read from config_path when not empty. What the
// loader inferred (n_head = n_embd / 64, ...) joins loader_notes(), which main prints on stderr on
// one "attnlab: note:" line once the command has succeeded (a refusal stays one line).
Model load_hf_gpt2_model(const std::vector<std::uint8_t>& bytes, const std::string& config_path);

// --model FILE [--config FILE]: either kind of checkpoint. ConfigError for --config with an
// attnlab checkpoint (its config is inside it).
Model load_model_file(const std::string& path, const std::string& config_path, const char* where);

// ConfigError if a prompt of n tokens does not fit a model with learned positions (GPT-2's
// n_positions), naming both.
void require_prompt_fits(const Model& model, std::size_t n, const char* where);

}  // namespace attnlab::cli
