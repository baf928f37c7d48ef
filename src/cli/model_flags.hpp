// src/cli/model_flags.hpp: the flags shared by train / eval / generate — model architecture,
// task and training options — declared once and turned into configs once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "args.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"

namespace attnlab::cli {

void add_task_flags(Args& args);
void add_model_flags(Args& args);
void add_training_flags(Args& args);

// The task flags, in add_task_flags' order: what a checkpoint stores as task.<flag>.
const std::vector<const char*>& task_flag_names();
// TaskOptions from the value of each task flag (value_of(flag), "" = not given); ConfigError
// naming the flag and its text when it does not parse.
TaskOptions task_options_of(const std::function<std::string(const char*)>& value_of);
TaskOptions task_options(const Args& args);
std::unique_ptr<Task> task_from(const Args& args);
// The model config for `task`: encoder for classification tasks, forecaster for regression
// tasks (features, horizon and time periods from the task), decoder otherwise, vocabulary and
// classes from the task, the rest from the flags.
ModelConfig model_config(const Args& args, const Task& task);
TrainerOptions trainer_options(const Args& args);

}  // namespace attnlab::cli
