// `attnlab lens`: the logit lens at one position (interp/logit_lens.hpp) and the direct logit
// attribution of one token there (interp/direct_logit_attribution.hpp).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/interp/direct_logit_attribution.hpp"
#include "attnlab/interp/logit_lens.hpp"
#include "commands.hpp"
#include "interp_flags.hpp"

namespace attnlab::cli {
namespace {

nlohmann::json attribution_json(const interp::Attribution& a, std::int32_t token) {
    nlohmann::json heads = nlohmann::json::array();
    for (std::size_t l = 0; l < a.heads.shape(0); ++l)
        for (std::size_t h = 0; h < a.heads.shape(1); ++h) heads.push_back({{"layer", l}, {"head", h}, {"logit", a.heads(l, h)}});
    return {{"token", token}, {"logit", a.logit}, {"heads", heads}, {"attn_bias", a.attn_bias}, {"mlp", a.mlp},
            {"embed", a.embed}, {"ln_bias", a.ln_bias}};
}

}  // namespace

int run_lens(int argc, char** argv) {
    constexpr const char* where = "attnlab lens";
    Args args("lens", "The logit lens: at one position, the residual stream entering every block (and leaving the last)\n"
                      "read out through the final LayerNorm (pre-LN models) and the unembedding, with its top tokens; and\n"
                      "direct logit attribution: each head's direct contribution to one token's logit there, the final\n"
                      "LayerNorm's scale frozen at its value in the run (pre-LN models; the parts sum to the logit).\n"
                      "JSON: {\"position\", \"layers\": [{\"layer\", \"top\": [{\"id\", \"logit\", \"text\"}]}], \"attribution\": {\"token\",\n"
                      "\"logit\", \"heads\": [{\"layer\", \"head\", \"logit\"}], \"attn_bias\", \"mlp\", \"embed\", \"ln_bias\"} or null (post-LN)}.\n"
                      "Definitions: docs/interpretability.md.\n"
                      "example: attnlab lens --model gpt2/model.safetensors --text \"The capital of France is\" --tokenizer gpt2/");
    add_subject_flags(args);
    args.add("text", "", "the prompt as text (needs a tokenizer: --tokenizer DIR, the checkpoint's own, or a char_lm alphabet)");
    args.add("tokens", "", "the prompt as comma-separated token ids");
    args.add("position", "", "the position read (default: the last)");
    args.add("top", "5", "how many tokens each layer shows");
    args.add("token", "", "the token whose logit is attributed (default: the model's top prediction at the position)");
    args.add("json", "", "write the lens and the attribution as JSON to this file");
    if (!args.parse(argc, argv, 2)) return 0;
    const Subject subject = load_subject(args, where);
    const DecoderLM& lm = subject.decoder();
    const auto tokens = sequence_from(args, subject, "text", "tokens", where);
    const std::size_t position = args.given("position") ? args.get_size("position") : tokens.size() - 1;
    const Tensor2 lens = interp::logit_lens(lm, tokens, position);
    const std::size_t layers = lm.config().num_layers, top = args.get_size("top");
    const std::int32_t token = args.given("token") ? token_flag(args, "token", lm, where) : interp::top_ids(lens, layers, 1).front();
    nlohmann::json out{{"position", position}, {"layers", nlohmann::json::array()}};
    std::printf("logit lens at position %zu of %zu (top %zu per layer; layer %zu is the model's output)\n", position, tokens.size(), top, layers);
    for (std::size_t l = 0; l <= layers; ++l) {
        nlohmann::json row = nlohmann::json::array();
        std::printf("layer %2zu:", l);
        for (std::int32_t id : interp::top_ids(lens, l, top)) {
            row.push_back({{"id", id}, {"logit", lens(l, static_cast<std::size_t>(id))}, {"text", token_label(subject, id)}});
            std::printf("  %d %s %.3f", id, token_label(subject, id).c_str(), static_cast<double>(lens(l, static_cast<std::size_t>(id))));
        }
        std::printf("\n");
        out["layers"].push_back({{"layer", l}, {"top", row}});
    }
    if (lm.config().norm == NormPlacement::pre) {
        const interp::Attribution a = interp::direct_logit_attribution(lm, tokens, position, token);
        out["attribution"] = attribution_json(a, token);
        std::printf("direct logit attribution of token %d %s (logit %.4f; the parts sum to %.4f):\n", token,
                    token_label(subject, token).c_str(), a.logit, a.total());
        std::printf("  embed %+.4f  ln_f bias %+.4f\n", a.embed, a.ln_bias);
        for (std::size_t l = 0; l < layers; ++l) {
            std::printf("  layer %zu: heads", l);
            for (std::size_t h = 0; h < a.heads.shape(1); ++h) std::printf(" %+.4f", static_cast<double>(a.heads(l, h)));
            std::printf("  b_O %+.4f  mlp %+.4f\n", a.attn_bias[l], a.mlp[l]);
        }
    } else {
        out["attribution"] = nullptr;
        std::printf("no direct logit attribution: a post-LN model's logit is not a sum of its heads' outputs\n");
    }
    if (!args.get("json").empty()) write_json_file(out, args.get("json"), where);
    return 0;
}

}  // namespace attnlab::cli
