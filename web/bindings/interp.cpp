// web/bindings/interp.cpp: the interpretability tools of include/attnlab/interp/ as methods of a
// JavaScript decoder Model, and lab.randomRepeat.
//
//   const seq = lab.randomRepeat(20, model.config().vocabSize, 1);         // Int32Array (40)
//   model.headScores(seq);      // [{ layer, head, previous_token, duplicate_token, induction, first_token, self }]
//   model.ablate(seq, { heads: [[1, 0]], method: 'mean' });   // { lossClean, lossAblated, klLast, klMean, ... }
//   model.patch(clean, corrupted, { answer: 7, wrong: 3 });    // { cleanDiff, corruptedDiff, heads, residual }
//   model.logitLens(seq, { position: 39 });                    // { shape: [L + 1, V], data }: logits
//   model.logitLens(seq, { probabilities: true });             // the same rows through the softmax
//   model.residuals(seq);                                      // { shape: [L + 1, T, C], data }
//   model.logitAttribution(seq, { token: 7 });                 // { logit, heads, attnBias, mlp, embed, lnBias }
// A score no row has is null; the definitions are docs/interpretability.md's.
#include <cstdint>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <xtensor/xview.hpp>

#include "attnlab/interp/ablation.hpp"
#include "attnlab/interp/detectors.hpp"
#include "attnlab/interp/direct_logit_attribution.hpp"
#include "attnlab/interp/logit_lens.hpp"
#include "attnlab/interp/patching.hpp"
#include "attnlab/interp/run.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "convert.hpp"
#include "model.hpp"
#include "model_inputs.hpp"

namespace attnlab::web {
namespace {

const DecoderLM& decoder_of(const Model& model, const char* where) {
    if (!model.is_decoder() || model.is_lstm()) {
        fail<ConfigError>(where, ": the interpretability tools read a Transformer decoder's heads; this model's kind is '",
                          choice_name(model.kind()), "'", model.is_lstm() ? " with the LSTM architecture" : "");
    }
    return model.decoder();
}

std::vector<std::int32_t> sequence_of(const val& tokens, const char* where, const char* what) {
    bool batched = false;
    const Index2 ids = tokens_from_js(tokens, where, what, &batched);
    if (batched && ids.shape(0) != 1) fail<ShapeError>(where, ": ", what, " must be one sequence, got a batch of ", ids.shape(0));
    return std::vector<std::int32_t>(ids.begin(), ids.end());
}

val optional_number(const std::optional<double>& v) { return v ? val(*v) : val::null(); }

val doubles_to_js(const std::vector<double>& xs) {
    val out = val::array();
    for (double x : xs) out.call<void>("push", x);
    return out;
}

// What a JS value is, for a message: "string", "object", "a 3-element array".
std::string js_kind(const val& v) {
    if (v.isArray()) return "a " + std::to_string(v["length"].as<std::size_t>()) + "-element array";
    if (v.isNull()) return "null";
    return v.typeOf().as<std::string>();
}

// [[layer, head], ...] -> head ids (their ranges checked by the engine).
std::vector<interp::HeadId> heads_from_js(const val& list, const char* where) {
    if (!list.isArray()) fail<ConfigError>(where, ": options.heads must be an array of [layer, head] pairs, got ", js_kind(list));
    std::vector<interp::HeadId> out;
    const std::size_t n = list["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
        const val pair = list[i];
        const std::string name = "options.heads[" + std::to_string(i) + "]";
        if (!pair.isArray() || pair["length"].as<std::size_t>() != 2) {
            fail<ConfigError>(where, ": ", name, " must be a [layer, head] pair, got ", js_kind(pair));
        }
        out.emplace_back(size_from_js(pair[0], where, (name + "[0] (the layer)").c_str()),
                         size_from_js(pair[1], where, (name + "[1] (the head)").c_str()));
    }
    return out;
}

std::size_t position_of(const JsOptions& opt, std::size_t t) { return opt.size("position", t - 1); }

// options[key]: a token id of the model's vocabulary (the engine checks it again).
std::int32_t token_id(const JsOptions& opt, const char* key, const DecoderLM& lm) {
    if (!opt.has(key)) fail<ConfigError>(opt.where(), ": options.", key, " (a token id) is required");
    const std::size_t id = opt.size(key, 0), v = lm.config().vocab_size;
    if (id >= v) fail<ValueError>(opt.where(), ": options.", key, " ", id, " is outside the vocabulary 0..", v - 1);
    return static_cast<std::int32_t>(id);
}

val head_scores_of(const Model& model, const val& tokens) {
    constexpr const char* where = "Model.headScores";
    const auto scores = interp::detect_heads(decoder_of(model, where), sequence_of(tokens, where, "tokens"));
    val out = val::array();
    for (const interp::HeadScores& h : scores) {
        val row = val::object();
        row.set("layer", h.layer);
        row.set("head", h.head);
        for (const auto& v : choice_values<HeadPattern>()) row.set(std::string(v.name), optional_number(h.score(v.value)));
        out.call<void>("push", row);
    }
    return out;
}

val ablate_of(const Model& model, const val& tokens, const val& options) {
    constexpr const char* where = "Model.ablate";
    const JsOptions opt(options, {"heads", "method"}, where);
    const DecoderLM& lm = decoder_of(model, where);
    if (!opt.has("heads")) fail<ConfigError>(where, ": options.heads ([[layer, head], ...]) is required");
    const AblationMethod method = choice_from_name<AblationMethod>(opt.string("method", "zero"), where);
    const interp::Ablation a = interp::ablate(lm, sequence_of(tokens, where, "tokens"), heads_from_js(opt.get("heads"), where), method);
    val out = val::object();
    out.set("lossClean", a.loss_clean);
    out.set("lossAblated", a.loss_ablated);
    out.set("klLast", a.kl_last);
    out.set("klMean", a.kl_mean);
    out.set("probsClean", tensor_to_js(a.probs_clean));
    out.set("probsAblated", tensor_to_js(a.probs_ablated));
    return out;
}

val patch_of(const Model& model, const val& clean, const val& corrupted, const val& options) {
    constexpr const char* where = "Model.patch";
    const JsOptions opt(options, {"answer", "wrong"}, where);
    const DecoderLM& lm = decoder_of(model, where);
    const interp::Patching p = interp::patch(lm, sequence_of(clean, where, "clean"), sequence_of(corrupted, where, "corrupted"),
                                             token_id(opt, "answer", lm), token_id(opt, "wrong", lm));
    val out = val::object();
    out.set("cleanDiff", p.clean_diff);
    out.set("corruptedDiff", p.corrupted_diff);
    out.set("heads", tensor_to_js(p.heads));
    out.set("residual", tensor_to_js(p.residual));
    return out;
}

val logit_lens_of(const Model& model, const val& tokens, const val& options) {
    constexpr const char* where = "Model.logitLens";
    const JsOptions opt(options, {"position", "probabilities"}, where);
    const auto seq = sequence_of(tokens, where, "tokens");
    const Tensor2 lens = interp::logit_lens(decoder_of(model, where), seq, position_of(opt, seq.size()));  // (L + 1, V)
    // probabilities: each layer's read-out through the softmax, as the model's own last step turns logits into a distribution.
    return tensor_to_js(opt.boolean("probabilities", false) ? softmax_rows(lens) : lens);
}

// tokens (T) -> (L + 1, T, C): the residual stream entering each block, [L] leaving the last (before ln_f).
val residuals_of(const Model& model, const val& tokens) {
    constexpr const char* where = "Model.residuals";
    const DecoderLM& lm = decoder_of(model, where);
    const auto seq = sequence_of(tokens, where, "tokens");
    interp::check_tokens(lm, seq, where);
    const interp::Run r = interp::run(lm, seq);
    const std::size_t t = seq.size(), c = lm.config().d_model;
    Tensor3 out = xt::zeros<float>({r.residuals.size(), t, c});
    for (std::size_t l = 0; l < r.residuals.size(); ++l) xt::view(out, l) = r.residuals[l];
    return tensor_to_js(out);
}

val logit_attribution_of(const Model& model, const val& tokens, const val& options) {
    constexpr const char* where = "Model.logitAttribution";
    const JsOptions opt(options, {"position", "token"}, where);
    const DecoderLM& lm = decoder_of(model, where);
    const auto seq = sequence_of(tokens, where, "tokens");
    const interp::Attribution a = interp::direct_logit_attribution(lm, seq, position_of(opt, seq.size()), token_id(opt, "token", lm));
    val out = val::object();
    out.set("logit", a.logit);
    out.set("heads", tensor_to_js(a.heads));
    out.set("attnBias", doubles_to_js(a.attn_bias));
    out.set("mlp", doubles_to_js(a.mlp));
    out.set("embed", a.embed);
    out.set("lnBias", a.ln_bias);
    return out;
}

val random_repeat_of(val n, val vocab, val seed) {
    constexpr const char* where = "lab.randomRepeat";
    return guarded(where, [&] {
        const std::size_t count = size_from_js(n, where, "n");
        // 2n ids: refused up front past one array's budget (an allocator failure would abort the module).
        if (count > max_tensor_elements() / 2) {
            fail<ValueError>(where, ": n ", count, " (2n = ", 2 * std::uint64_t{count}, " ids) is over the budget of ", max_tensor_elements(),
                             " elements of one array");
        }
        const auto seq = interp::random_repeat(count, size_from_js(vocab, where, "vocab"), size_from_js(seed, where, "seed"));
        return int32_array_to_js(seq.data(), seq.size());
    }, n, vocab, seed);
}

}  // namespace

val ModelBinding::head_scores(val tokens) const {
    return guarded("Model.headScores", [&] { return head_scores_of(*model_, tokens); }, tokens);
}
val ModelBinding::ablate(val tokens) const {
    return guarded("Model.ablate", [&] { return ablate_of(*model_, tokens, val::undefined()); }, tokens);
}
val ModelBinding::ablate(val tokens, val options) const {
    return guarded("Model.ablate", [&] { return ablate_of(*model_, tokens, options); }, tokens, options);
}
val ModelBinding::patch(val clean, val corrupted) const {
    return guarded("Model.patch", [&] { return patch_of(*model_, clean, corrupted, val::undefined()); }, clean, corrupted);
}
val ModelBinding::patch(val clean, val corrupted, val options) const {
    return guarded("Model.patch", [&] { return patch_of(*model_, clean, corrupted, options); }, clean, corrupted, options);
}
val ModelBinding::logit_lens(val tokens) const {
    return guarded("Model.logitLens", [&] { return logit_lens_of(*model_, tokens, val::undefined()); }, tokens);
}
val ModelBinding::logit_lens(val tokens, val options) const {
    return guarded("Model.logitLens", [&] { return logit_lens_of(*model_, tokens, options); }, tokens, options);
}
val ModelBinding::residuals(val tokens) const {
    return guarded("Model.residuals", [&] { return residuals_of(*model_, tokens); }, tokens);
}
val ModelBinding::logit_attribution(val tokens) const {
    return guarded("Model.logitAttribution", [&] { return logit_attribution_of(*model_, tokens, val::undefined()); }, tokens);
}
val ModelBinding::logit_attribution(val tokens, val options) const {
    return guarded("Model.logitAttribution", [&] { return logit_attribution_of(*model_, tokens, options); }, tokens, options);
}

EMSCRIPTEN_BINDINGS(attnlab_interp) { emscripten::function("randomRepeat", &random_repeat_of); }

}  // namespace attnlab::web
