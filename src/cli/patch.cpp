// `attnlab patch`: activation patching (interp/patching.hpp) from a clean prompt into a corrupted
// one of the same length: the share of the logit difference of a token pair each head's output,
// and each layer's residual at each position, restores.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/interp/patching.hpp"
#include "commands.hpp"
#include "interp_flags.hpp"

namespace attnlab::cli {
namespace {

nlohmann::json rows_json(const Tensor2& t) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < t.shape(0); ++i) {
        nlohmann::json row = nlohmann::json::array();
        for (std::size_t j = 0; j < t.shape(1); ++j) row.push_back(t(i, j));
        out.push_back(row);
    }
    return out;
}

void print_table(const char* corner, const char* column, const Tensor2& t) {
    std::printf("%-6s", corner);
    for (std::size_t j = 0; j < t.shape(1); ++j) std::printf(" %s%-5zu", column, j);
    std::printf("\n");
    for (std::size_t i = 0; i < t.shape(0); ++i) {
        std::printf("%-6zu", i);
        for (std::size_t j = 0; j < t.shape(1); ++j) std::printf(" %+6.3f", static_cast<double>(t(i, j)));
        std::printf("\n");
    }
}

}  // namespace

int run_patch(int argc, char** argv) {
    constexpr const char* where = "attnlab patch";
    Args args("patch", "Activation patching: copies one activation of the clean run into the corrupted run (prompts of the\n"
                       "same length) and reports the share of the logit difference d = logit[answer] - logit[wrong] at the\n"
                       "last position it restores: (d_patched - d_corrupted) / (d_clean - d_corrupted). Every head's output\n"
                       "before W_O (all positions) gives the layers x heads table; the residual entering each block at each\n"
                       "position gives the layers x positions table.\n"
                       "JSON: {\"clean_logit_diff\", \"corrupted_logit_diff\", \"heads\": [[L x H]], \"residual\": [[L x T]]}.\n"
                       "Definitions: docs/interpretability.md.\n"
                       "example: attnlab patch --model lm.safetensors --clean-tokens 5,1,7,2,5 --corrupted-tokens 5,1,3,2,5 --answer 7 --wrong 3");
    add_subject_flags(args);
    args.add("clean", "", "the clean prompt as text (needs a tokenizer)");
    args.add("clean-tokens", "", "the clean prompt as comma-separated token ids");
    args.add("corrupted", "", "the corrupted prompt as text");
    args.add("corrupted-tokens", "", "the corrupted prompt as comma-separated token ids");
    args.add("answer", "", "the token id the clean prompt should be completed with");
    args.add("wrong", "", "the token id the corrupted prompt leads to");
    args.add("json", "", "write the tables as JSON to this file");
    if (!args.parse(argc, argv, 2)) return 0;
    if (!args.given("answer") || !args.given("wrong")) fail<ConfigError>(where, ": --answer ID and --wrong ID are required");
    const Subject subject = load_subject(args, where);
    const DecoderLM& lm = subject.decoder();
    const auto clean = sequence_from(args, subject, "clean", "clean-tokens", where);
    const auto corrupted = sequence_from(args, subject, "corrupted", "corrupted-tokens", where);
    const std::int32_t answer = token_flag(args, "answer", lm, where), wrong = token_flag(args, "wrong", lm, where);
    const interp::Patching p = interp::patch(lm, clean, corrupted, answer, wrong);
    if (!args.get("json").empty()) {
        write_json_file({{"clean_logit_diff", p.clean_diff}, {"corrupted_logit_diff", p.corrupted_diff},
                         {"heads", rows_json(p.heads)}, {"residual", rows_json(p.residual)}},
                        args.get("json"), where);
    }
    std::printf("logit difference (answer %d %s - wrong %d %s): clean %.4f, corrupted %.4f\n", answer,
                token_label(subject, answer).c_str(), wrong, token_label(subject, wrong).c_str(), p.clean_diff, p.corrupted_diff);
    std::printf("restored share, head outputs (rows: layers):\n");
    print_table("layer", "h", p.heads);
    std::printf("restored share, residual entering each block (rows: layers, columns: positions):\n");
    print_table("layer", "t", p.residual);
    return 0;
}

}  // namespace attnlab::cli
