// `attnlab tokenize`: the token ids of a text, as one JSON array on stdout and nothing else.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "commands.hpp"
#include "text_flags.hpp"

namespace attnlab::cli {

int run_tokenize(int argc, char** argv) {
    Args args("tokenize", "Prints the token ids of a text as one JSON array.\n"
                          "DIR holds GPT-2's vocab.json + merges.txt (or encoder.json + vocab.bpe), or a BERT-style vocab.txt.\n"
                          "example: attnlab tokenize --tokenizer gpt2/ --text \"Hello world\"     # [15496,995]");
    args.add("tokenizer", "", "directory of the tokenizer's files");
    args.add("model", "", "or a checkpoint that carries its tokenizer");
    args.add("text", "", "the text (UTF-8)");
    if (!args.parse(argc, argv, 2)) return 0;
    if (!args.given("text")) fail<ConfigError>("attnlab tokenize: --text is required");
    const std::shared_ptr<const text::Tokenizer> tokenizer = tokenizer_from_flags(args, "attnlab tokenize");
    if (!tokenizer) fail<ConfigError>("attnlab tokenize: give --tokenizer DIR or --model FILE (a checkpoint with a tokenizer)");
    const nlohmann::json ids = tokenizer->encode(args.get("text"));
    std::printf("%s\n", ids.dump().c_str());
    return 0;
}

}  // namespace attnlab::cli
