// web/bindings/poem.cpp: a regulated poem's patterns of verse (include/attnlab/interp/poem_patterns.hpp)
// and every head's score against them (interp::pattern_score), for the page's figures.
//
//   const texts = ['', '白', '日', '，', '黄', '河', '。'];      // each token's text ('' for ⟨s⟩)
//   lab.poemForm(texts);                   // [null, { line: 0, column: 0, mark: false }, ..., { line: 0, column: 2, mark: true }, ...]
//   lab.poemPatterns(texts);               // { paired_line: { shape: [7, 7], data }, paired_next, rhyme, rhyme_next }
//   lab.poemScores(model.attentionMaps(ids), texts);  // [{ layer, head, paired_line, paired_next, rhyme, rhyme_next }]
// A score no row has is null (interp::pattern_score's nullopt).
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <xtensor/xadapt.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/interp/detectors.hpp"
#include "attnlab/interp/poem_patterns.hpp"
#include "convert.hpp"

namespace attnlab::web {
namespace {

// form of T tokens -> T entries: { line, column, mark } of a token in a line, null outside lines.
val form_to_js(const interp::PoemForm& form) {
    val out = val::array();
    for (std::size_t i = 0; i < form.line.size(); ++i) {
        if (form.line[i] == interp::kNoLine) {
            out.call<void>("push", val::null());
            continue;
        }
        val slot = val::object();
        slot.set("line", form.line[i]);
        slot.set("column", form.column[i]);
        slot.set("mark", static_cast<bool>(form.mark[i]));
        out.call<void>("push", slot);
    }
    return out;
}

// texts (T) -> lab.poemForm's slots.
val poem_form_of(val texts) {
    return guarded("lab.poemForm", [&] { return form_to_js(interp::poem_form(strings_from_js(texts, "lab.poemForm", "texts"))); }, texts);
}

// texts (T) -> { <pattern>: (T, T) of 0/1 } for the four patterns, in PoemPattern's order.
val poem_patterns_of(val texts) {
    return guarded("lab.poemPatterns", [&] {
        const interp::PoemForm form = interp::poem_form(strings_from_js(texts, "lab.poemPatterns", "texts"));
        val out = val::object();
        for (const auto& v : choice_values<PoemPattern>()) out.set(std::string(v.name), tensor_to_js(interp::poem_pattern(v.value, form)));
        return out;
    }, texts);
}

// maps (L, H, T, T) of causal attention, texts (T) -> L·H rows { layer, head, <pattern>: score | null }.
val poem_scores_body(const val& maps, const val& texts) {
    constexpr const char* where = "lab.poemScores";
    const std::vector<std::string> words = strings_from_js(texts, where, "texts");
    const std::vector<std::size_t> shape = js_tensor_shape(maps, where, "maps");
    const std::size_t t = words.size();
    if (shape.size() != 4 || shape[2] != t || shape[3] != t) {
        fail<ShapeError>(where, ": maps must have shape (L, H, T, T) with T = ", t, " (the texts' length), got ", shape_string(shape));
    }
    const std::vector<float> data = floats_from_js(maps, {-1, -1, static_cast<std::ptrdiff_t>(t), static_cast<std::ptrdiff_t>(t)}, where, "maps");
    const interp::PoemForm form = interp::poem_form(words);
    std::vector<Tensor2> masks;
    for (const auto& v : choice_values<PoemPattern>()) masks.push_back(interp::poem_pattern(v.value, form));
    val out = val::array();
    for (std::size_t l = 0; l < shape[0]; ++l)
        for (std::size_t h = 0; h < shape[1]; ++h) {
            const float* w = data.data() + (l * shape[1] + h) * t * t;
            const Tensor2 weights = xt::adapt(w, t * t, xt::no_ownership(), std::array<std::size_t, 2>{t, t});
            val row = val::object();
            row.set("layer", l);
            row.set("head", h);
            std::size_t i = 0;
            for (const auto& v : choice_values<PoemPattern>()) {
                const std::optional<double> s = interp::pattern_score(weights, masks[i++]);
                row.set(std::string(v.name), s ? val(*s) : val::null());
            }
            out.call<void>("push", row);
        }
    return out;
}

val poem_scores_of(val maps, val texts) {
    return guarded("lab.poemScores", [&] { return poem_scores_body(maps, texts); }, maps, texts);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_poem) {
    emscripten::function("poemForm", &poem_form_of);
    emscripten::function("poemPatterns", &poem_patterns_of);
    emscripten::function("poemScores", &poem_scores_of);
}

}  // namespace attnlab::web
