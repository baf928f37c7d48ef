// The attnlab command-line tool. `attnlab --help` lists the subcommands.
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "pretrained.hpp"

namespace {
struct Command {
    const char* name;
    const char* summary;
    int (*run)(int, char**);
};
const Command kCommands[] = {
    {"demo", "print every stage of one multi-head attention call on a short sentence", attnlab::cli::run_demo},
    {"train", "train a tiny Transformer on a generated task (copy, reverse, sort, brackets, char_lm, ...)",
     attnlab::cli::run_train},
    {"eval", "evaluate a saved model on its task", attnlab::cli::run_eval},
    {"generate", "continue a prompt with a saved decoder model", attnlab::cli::run_generate},
    {"experiment", "re-run a claim of the article as a seeded experiment (scaling, positional, mask, ...)",
     attnlab::cli::run_experiment},
    {"tokenize", "print the token ids of a text (GPT-2's BPE, or a BERT-style vocab.txt)", attnlab::cli::run_tokenize},
    {"logits", "the next-token logits of a prompt (an attnlab decoder or a GPT-2 checkpoint), as JSON and the top 5",
     attnlab::cli::run_logits},
    {"export", "write a decoder as a Hugging Face GPT-2 (model.safetensors + config.json)", attnlab::cli::run_export},
    {"heads", "score every head of a decoder by attention patterns (previous token, induction, ...)", attnlab::cli::run_heads},
    {"ablate", "switch heads off and report the change in loss and in the next-token distribution", attnlab::cli::run_ablate},
    {"patch", "activation patching: the share of a logit difference each head or residual restores", attnlab::cli::run_patch},
    {"lens", "the logit lens at every layer and each head's direct contribution to a logit", attnlab::cli::run_lens},
    {"corpus", "write the training text of tang or brown, the text the page's lab trains on", attnlab::cli::run_corpus},
};

void print_usage() {
    std::cout << "usage: attnlab <command> [flags]\n\ncommands:\n";
    for (const auto& c : kCommands) std::cout << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
    std::cout << "\n`attnlab <command> --help` describes each command's flags.\n";
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        print_usage();
        return argc < 2 ? 2 : 0;
    }
    const std::string name = argv[1];
    for (const auto& c : kCommands) {
        if (name != c.name) continue;
        try {
            const int status = c.run(argc, argv);
            if (!attnlab::cli::loader_notes().empty()) std::cerr << "attnlab: note: " << attnlab::cli::loader_notes() << "\n";
            return status;
        } catch (const std::exception& e) {
            std::cerr << "attnlab: error: " << e.what() << "\n";
            return 2;
        }
    }
    std::cerr << "attnlab: error: unknown command '" << name << "' (see attnlab --help)\n";
    return 2;
}
