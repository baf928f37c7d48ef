// src/cli/checkpoint_file.hpp: checkpoints on disk for the CLI, remembering their task.
//
// `attnlab train --save` stores the task's name and options in the checkpoint's metadata under
// "task.*" keys, so `attnlab eval` and `attnlab generate` need only --model; task flags given on
// the command line override the stored ones.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "args.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/train/tasks.hpp"

namespace attnlab::cli {

struct LoadedCheckpoint {
    Model model;
    std::unique_ptr<Task> task;  // null for a GPT-2 checkpoint (Hugging Face's), which has none
};

// Saves model to path with the task flags of args in the metadata (IoError naming the path).
void write_checkpoint(const Model& model, const Args& args, const std::string& path);
// Reads --model, and builds its task from the stored task.* metadata overridden by task flags.
// With task_free, a GPT-2 checkpoint in Hugging Face's format loads too (with config_path's
// config.json when not empty; cli/pretrained.hpp), without a task; else it is refused.
LoadedCheckpoint read_checkpoint(const Args& args, bool task_free = false, const std::string& config_path = "");
// Token ids of text for a character-level task; ConfigError naming a character it lacks.
std::vector<std::int32_t> encode_text(const Task& task, const std::string& text);

}  // namespace attnlab::cli
