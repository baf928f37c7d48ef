// `attnlab heads`: every head's detector scores (interp/detectors.hpp) on a text, on token ids or
// on a repeated random sequence, as a table and as JSON.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/interp/detectors.hpp"
#include "attnlab/interp/run.hpp"
#include "commands.hpp"
#include "interp_flags.hpp"

namespace attnlab::cli {
namespace {

nlohmann::json score_json(const std::optional<double>& s) { return s ? nlohmann::json(*s) : nlohmann::json(nullptr); }

void print_heads_table(const std::vector<interp::HeadScores>& heads) {
    std::printf("layer head");
    for (const auto& v : choice_values<HeadPattern>()) std::printf(" %15s", std::string(v.name).c_str());
    std::printf("\n");
    for (const interp::HeadScores& h : heads) {
        std::printf("%5zu %4zu", h.layer, h.head);
        for (const auto& s : h.scores) {
            if (s) std::printf(" %15.4f", *s);
            else std::printf(" %15s", "-");
        }
        std::printf("\n");
    }
    for (const auto& v : choice_values<HeadPattern>()) {
        const interp::HeadScores* best = nullptr;
        for (const interp::HeadScores& h : heads) {
            const auto& s = h.score(v.value);
            if (s && (!best || *s > *best->score(v.value))) best = &h;
        }
        if (best) std::printf("top %s head: %zu.%zu (%.4f)\n", std::string(v.name).c_str(), best->layer, best->head, *best->score(v.value));
        else std::printf("top %s head: none (no query row has a key of this pattern)\n", std::string(v.name).c_str());
    }
}

}  // namespace

int run_heads(int argc, char** argv) {
    constexpr const char* where = "attnlab heads";
    Args args("heads", "Scores every head of a decoder by five attention patterns (TransformerLens' head detector, \"mul\"):\n"
                       "the mean, over query rows 1..T-1 that have a key of the pattern, of the share of the row's weight on\n"
                       "those keys. previous_token: key i-1; duplicate_token: earlier keys with the query's token; induction:\n"
                       "the key after each of those; first_token: key 0; self: key i. '-' (JSON null): no row has such a key.\n"
                       "JSON: {\"heads\": [{\"layer\", \"head\", \"previous_token\", \"duplicate_token\", \"induction\", \"first_token\", \"self\"}]}\n"
                       "Definitions: docs/interpretability.md.\n"
                       "examples: attnlab heads --model gpt2/model.safetensors --config gpt2/config.json --random-repeat 50 --json heads.json\n"
                       "          attnlab heads --model lm.safetensors --text \"the cat sat on the mat\" --tokenizer gpt2/");
    add_subject_flags(args);
    args.add("text", "", "the sequence as text (needs a tokenizer: --tokenizer DIR, the checkpoint's own, or a char_lm alphabet)");
    args.add("tokens", "", "the sequence as comma-separated token ids");
    args.add("random-repeat", "", "N: N random token ids (uniform over the vocabulary, seeded), then the same N again");
    args.add("seed", "1", "the seed of --random-repeat");
    args.add("json", "", "write the scores as JSON to this file");
    if (!args.parse(argc, argv, 2)) return 0;
    const int sources = int(args.given("text")) + int(args.given("tokens")) + int(args.given("random-repeat"));
    if (sources != 1) fail<ConfigError>(where, ": give exactly one of --text TEXT, --tokens 1,2,3, --random-repeat N");
    const Subject subject = load_subject(args, where);
    const DecoderLM& lm = subject.decoder();
    std::vector<std::int32_t> tokens;
    std::string source;
    if (args.given("random-repeat")) {
        const std::size_t n = args.get_size("random-repeat");
        if (n == 0) fail<ConfigError>(where, ": --random-repeat N needs N >= 1");
        tokens = interp::random_repeat(n, lm.config().vocab_size, static_cast<std::uint64_t>(args.get_size("seed")));
        interp::check_tokens(lm, tokens, where);
        source = "random-repeat " + std::to_string(n) + ", seed " + args.get("seed");
    } else {
        tokens = sequence_from(args, subject, "text", "tokens", where);
        source = args.given("text") ? "text" : "token ids";
    }
    const std::vector<interp::HeadScores> heads = interp::detect_heads(lm, tokens);
    if (!args.get("json").empty()) {
        nlohmann::json list = nlohmann::json::array();
        for (const interp::HeadScores& h : heads) {
            nlohmann::json row;
            row["layer"] = h.layer;
            row["head"] = h.head;
            for (const auto& v : choice_values<HeadPattern>()) row[std::string(v.name)] = score_json(h.score(v.value));
            list.push_back(row);
        }
        write_json_file(nlohmann::json{{"heads", list}}, args.get("json"), where);
    }
    const ModelConfig& c = lm.config();
    std::printf("heads of a %zu-layer, %zu-head decoder on %zu tokens (%s)\n", c.num_layers, c.num_heads, tokens.size(),
                source.c_str());
    print_heads_table(heads);
    return 0;
}

}  // namespace attnlab::cli
