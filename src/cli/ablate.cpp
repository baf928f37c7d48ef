// `attnlab ablate`: switch heads off (interp/ablation.hpp) and report the change in the loss on a
// text and in the next-token distribution, for a set of heads or for each head alone.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/interp/ablation.hpp"
#include "attnlab/interp/logit_lens.hpp"
#include "commands.hpp"
#include "interp_flags.hpp"

namespace attnlab::cli {
namespace {

nlohmann::json top_json(const Subject& s, const Tensor1& probs, std::size_t k) {
    Tensor2 row = Tensor2::from_shape({1, probs.size()});
    std::copy(probs.begin(), probs.end(), row.begin());
    nlohmann::json out = nlohmann::json::array();
    for (std::int32_t id : interp::top_ids(row, 0, k)) {
        out.push_back({{"id", id}, {"p", probs(static_cast<std::size_t>(id))}, {"text", token_label(s, id)}});
    }
    return out;
}

nlohmann::json change_json(const interp::Ablation& a) {
    return {{"loss_ablated", a.loss_ablated}, {"loss_change", a.loss_ablated - a.loss_clean}, {"kl_last", a.kl_last}, {"kl_mean", a.kl_mean}};
}

void print_top(const Subject& s, const char* what, const nlohmann::json& top) {
    std::printf("%s:", what);
    for (const auto& t : top) {
        std::printf("  %d %s %.4f", t["id"].get<int>(), t["text"].get<std::string>().c_str(), t["p"].get<double>());
    }
    std::printf("\n");
    (void)s;
}

}  // namespace

int run_ablate(int argc, char** argv) {
    constexpr const char* where = "attnlab ablate";
    Args args("ablate", "Switches heads off and reports what changes: the mean next-token loss on the text (nats) and\n"
                        "KL(clean || ablated) of the next-token distributions (at the last position and averaged over all).\n"
                        "zero: the head's output before W_O is 0; mean: it is its mean over the text's positions.\n"
                        "JSON with --heads: {\"method\", \"heads\": [{\"layer\", \"head\"}], \"loss_clean\", \"loss_ablated\", \"loss_change\",\n"
                        "\"kl_last\", \"kl_mean\", \"top_clean\", \"top_ablated\"}; with --each: {\"method\", \"loss_clean\", \"heads\":\n"
                        "[{\"layer\", \"head\", \"loss_ablated\", \"loss_change\", \"kl_last\", \"kl_mean\"}]}. Definitions: docs/interpretability.md.\n"
                        "examples: attnlab ablate --model lm.safetensors --tokens 3,1,4,1,5,9,2,6 --heads 1.0,1.1 --method mean\n"
                        "          attnlab ablate --model gpt2/model.safetensors --text \"Hello world, hello\" --tokenizer gpt2/ --each --json a.json");
    add_subject_flags(args);
    args.add("text", "", "the text (needs a tokenizer: --tokenizer DIR, the checkpoint's own, or a char_lm alphabet)");
    args.add("tokens", "", "the text as comma-separated token ids");
    args.add("heads", "", "the heads to ablate together, as layer.head pairs: 0.1,1.3");
    args.add_switch("each", "ablate every head alone, one after the other");
    args.add("method", "zero", choice_help<AblationMethod>("what an ablated head's output becomes"));
    args.add("top", "5", "how many next tokens to show");
    args.add("json", "", "write the result as JSON to this file");
    if (!args.parse(argc, argv, 2)) return 0;
    if (args.given("heads") == args.get_switch("each")) fail<ConfigError>(where, ": give --heads L.H,... or --each (exactly one)");
    const AblationMethod method = choice_from_name<AblationMethod>(args.get("method"), where);
    const Subject subject = load_subject(args, where);
    const DecoderLM& lm = subject.decoder();
    const std::vector<std::int32_t> tokens = sequence_from(args, subject, "text", "tokens", where);
    const std::string method_name(choice_name(method));
    const std::size_t top = args.get_size("top");
    if (args.get_switch("each")) {
        const std::vector<interp::Ablation> each = interp::ablate_each(lm, tokens, method);
        nlohmann::json heads = nlohmann::json::array();
        std::printf("%s ablation of each head on %zu tokens: loss %.4f nats clean\n", method_name.c_str(), tokens.size(), each.front().loss_clean);
        std::printf("layer head  loss change   KL last   KL mean\n");
        for (std::size_t i = 0; i < each.size(); ++i) {
            const std::size_t l = i / lm.config().num_heads, h = i % lm.config().num_heads;
            nlohmann::json row = change_json(each[i]);
            row["layer"] = l;
            row["head"] = h;
            heads.push_back(row);
            std::printf("%5zu %4zu %+12.4f %9.4f %9.4f\n", l, h, each[i].loss_ablated - each[i].loss_clean, each[i].kl_last, each[i].kl_mean);
        }
        if (!args.get("json").empty()) {
            write_json_file({{"method", method_name}, {"loss_clean", each.front().loss_clean}, {"heads", heads}}, args.get("json"), where);
        }
        return 0;
    }
    const auto heads = parse_heads(args.get("heads"), lm, where);
    const interp::Ablation a = interp::ablate(lm, tokens, heads, method);
    nlohmann::json out = change_json(a);
    out["method"] = method_name;
    out["loss_clean"] = a.loss_clean;
    out["heads"] = nlohmann::json::array();
    for (const auto& [l, h] : heads) out["heads"].push_back({{"layer", l}, {"head", h}});
    out["top_clean"] = top_json(subject, a.probs_clean, top);
    out["top_ablated"] = top_json(subject, a.probs_ablated, top);
    if (!args.get("json").empty()) write_json_file(out, args.get("json"), where);
    std::printf("%s ablation of %zu head(s) on %zu tokens\n", method_name.c_str(), heads.size(), tokens.size());
    std::printf("loss %.4f -> %.4f nats (%+.4f); KL(clean || ablated) last %.4f, mean %.4f\n", a.loss_clean, a.loss_ablated,
                a.loss_ablated - a.loss_clean, a.kl_last, a.kl_mean);
    print_top(subject, "next tokens, clean  ", out["top_clean"]);
    print_top(subject, "next tokens, ablated", out["top_ablated"]);
    return 0;
}

}  // namespace attnlab::cli
