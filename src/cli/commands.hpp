// src/cli/commands.hpp: the subcommands of the attnlab tool. Each returns the process exit code
// and throws attnlab::Error for bad input (main prints it on one line and exits with 2).
#pragma once

namespace attnlab::cli {

int run_demo(int argc, char** argv);
int run_train(int argc, char** argv);
int run_eval(int argc, char** argv);
int run_generate(int argc, char** argv);
int run_experiment(int argc, char** argv);
int run_tokenize(int argc, char** argv);
int run_logits(int argc, char** argv);
int run_export(int argc, char** argv);
int run_heads(int argc, char** argv);
int run_ablate(int argc, char** argv);
int run_patch(int argc, char** argv);
int run_lens(int argc, char** argv);
int run_corpus(int argc, char** argv);

}  // namespace attnlab::cli
