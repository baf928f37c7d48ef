// libFuzzer target: the CLI's flag parsing (src/cli/args.cpp) and the conversion of parsed
// flags into a task, a model config and trainer options (src/cli/model_flags.cpp), as
// `attnlab train` does before it trains anything.
//
// Input layout: NUL-separated command-line arguments (after `attnlab train`).
// Holds for every input: parsing and conversion return or throw an attnlab::Error (a one-line
// message for the user); no other exception, no undefined behaviour (e.g. a float flag beyond
// the float range). Seeds: tests/fuzz/corpus/cli_args/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "args.hpp"
#include "model_flags.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> words{"attnlab", "train"};
    std::string word;
    for (std::size_t i = 0; i < size && words.size() < 64; ++i) {
        if (data[i] == 0) {
            words.push_back(word);
            word.clear();
        } else {
            word += static_cast<char>(data[i]);
        }
    }
    if (!word.empty()) words.push_back(word);
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());

    attnlab::cli::Args args("train", "fuzzed");
    attnlab::cli::add_task_flags(args);
    attnlab::cli::add_model_flags(args);
    attnlab::cli::add_training_flags(args);
    args.add("threads", "0", "engine threads");
    try {
        if (!args.parse(static_cast<int>(argv.size()), argv.data(), 2)) return 0;
        args.get_size("threads");
        const auto task = attnlab::cli::task_from(args);
        attnlab::cli::model_config(args, *task);
        attnlab::cli::trainer_options(args);
    } catch (const attnlab::Error&) {
    }
    return 0;
}
