// `attnlab logits`: the next-token logits of a prompt under a model (an attnlab decoder or a
// GPT-2 checkpoint), as JSON for other programs and the top 5 for people.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "commands.hpp"
#include "pretrained.hpp"
#include "text_flags.hpp"

namespace attnlab::cli {
int run_logits(int argc, char** argv) {
    Args args("logits", "Prints the top 5 next tokens of a prompt and, with --json, writes the logits of its first and last\n"
                        "positions: {\"tokens\": [...], \"logits_first\": [...], \"logits_last\": [...]} (vocab-many floats each).\n"
                        "The model is an attnlab decoder checkpoint or a GPT-2 model.safetensors (Hugging Face).\n"
                        "examples: attnlab logits --model gpt2/model.safetensors --config gpt2/config.json --tokens 15496,995\n"
                        "          attnlab logits --model gpt2/model.safetensors --text \"Hello world\" --tokenizer gpt2/ --json out.json");
    args.add("model", "", "decoder checkpoint: attnlab's, or a GPT-2 model.safetensors");
    args.add("config", "", "config.json of a GPT-2 checkpoint (without it the sizes come from the shapes)");
    args.add("tokens", "", "the prompt as comma-separated token ids");
    args.add("text", "", "the prompt as text (needs a tokenizer: --tokenizer DIR or the checkpoint's own)");
    args.add("tokenizer", "", "directory of a tokenizer's files (vocab.json + merges.txt, encoder.json + vocab.bpe, vocab.txt)");
    args.add("json", "", "write the logits as JSON to this file");
    if (!args.parse(argc, argv, 2)) return 0;
    if (args.given("tokens") == args.given("text")) {
        fail<ConfigError>("attnlab logits: give the prompt as --tokens 1,2,3 or as --text TEXT with --tokenizer DIR (exactly one)");
    }
    Model model = load_model_file(args.get("model"), args.get("config"), "attnlab logits");
    if (!model.is_decoder()) fail<ConfigError>("attnlab logits: --model holds no decoder (it predicts no next token)");
    const text::Tokenizer* tokenizer = apply_tokenizer_flag(args, model);
    std::vector<std::int32_t> ids;
    if (args.given("tokens")) {
        ids = parse_token_ids(args.get("tokens"), "attnlab logits");
    } else {
        if (!tokenizer) fail<ConfigError>("attnlab logits: --text needs --tokenizer DIR (the model carries no tokenizer)");
        ids = tokenizer->encode(args.get("text"));
        if (ids.empty()) fail<ConfigError>("attnlab logits: the text \"", args.get("text"), "\" has no tokens");
    }
    require_prompt_fits(model, ids.size(), "attnlab logits");
    Index2 tokens = Index2::from_shape({1, ids.size()});
    std::copy(ids.begin(), ids.end(), tokens.data());
    const Tensor3 logits = model.sequence_logits(tokens);  // (1, T, V)
    const std::size_t t = logits.shape(1), v = logits.shape(2);
    const float* first = logits.data();
    const float* last = logits.data() + (t - 1) * v;

    if (!args.get("json").empty()) {
        nlohmann::json out;
        out["tokens"] = ids;
        out["logits_first"] = std::vector<float>(first, first + v);
        out["logits_last"] = std::vector<float>(last, last + v);
        std::ofstream file(args.get("json"));
        if (!(file << out.dump() << "\n")) fail<IoError>("attnlab logits: cannot write '", args.get("json"), "'");
    }
    // softmax of the last row, in double, for the probabilities shown.
    const double top = *std::max_element(last, last + v);
    double sum = 0;
    for (std::size_t i = 0; i < v; ++i) sum += std::exp(double(last[i]) - top);
    std::vector<std::size_t> order(v);
    std::iota(order.begin(), order.end(), 0);
    const std::size_t k = std::min<std::size_t>(5, v);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](std::size_t a, std::size_t b) { return last[a] > last[b] || (last[a] == last[b] && a < b); });
    std::printf("top %zu next tokens after %zu prompt tokens:\n", k, t);
    for (std::size_t r = 0; r < k; ++r) {
        const std::size_t id = order[r];
        const std::string shown = tokenizer && id < tokenizer->vocab_size()
                                      ? nlohmann::json(tokenizer->decode({static_cast<std::int32_t>(id)})).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                      : std::string();
        std::printf("  %zu. id %-7zu logit %9.4f  p %.4f  %s\n", r + 1, id, static_cast<double>(last[id]),
                    std::exp(double(last[id]) - top) / sum, shown.c_str());
    }
    return 0;
}

}  // namespace attnlab::cli
