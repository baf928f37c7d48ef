// src/cli/model_flags.hpp: the flags shared by train / eval / generate — model architecture,
// task and training options — declared once and turned into configs once.
#pragma once

#include <memory>
#include <string>

#include "args.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"

namespace attnlab::cli {

void add_task_flags(Args& args);
void add_model_flags(Args& args);
void add_training_flags(Args& args);

TaskOptions task_options(const Args& args);
std::unique_ptr<Task> task_from(const Args& args);
// The model config for `task`: encoder for classification tasks, decoder otherwise, vocabulary
// and classes from the task, the rest from the flags.
ModelConfig model_config(const Args& args, const Task& task);
TrainerOptions trainer_options(const Args& args);

}  // namespace attnlab::cli
