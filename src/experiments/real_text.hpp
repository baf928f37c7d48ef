// src/experiments/real_text.hpp: a shipped text model (models/, docs/text_models.md) and a fixed
// piece of its held-out text, as the experiments that study real models read them (heads-real,
// importance --model). Internal to src/experiments/.
//
// The text, always the same for a given count:
//   tang   the first `count` held-out regulated poems (ids in data/splits/tang_heldout.txt) of
//          chinese-poetry's poet.tang.0.json and poet.tang.1000.json (21 between them), each one sequence <bos> poem <eos> as the model was
//          trained on (the model's tokenizer converts the traditional text to simplified);
//          each token with its text, from which interp/poem_patterns.hpp reads the poem's lines.
//   brown  the held-out Brown file ca20 (the first of data/splits/brown_heldout.txt), its first
//          `count` windows of the model's context length, each token with the Brown tag of its word.
// Files are read through experiments/inputs.hpp, so the page's worker can provide them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnlab/core/tensor.hpp"
#include "attnlab/facade/model.hpp"

namespace attnlab::experiments::detail {

inline constexpr std::size_t kNoIndex = std::numeric_limits<std::size_t>::max();

// One held-out sequence and where each of its T tokens stands in the text.
struct RealSequence {
    std::vector<std::int32_t> ids;   // (T) as the model reads it
    std::vector<std::string> text;   // (T) tang: each token's text, "" for <bos> and <eos> (read by interp::poem_form)
    std::vector<std::size_t> word;   // (T) brown: index of the tagged word the token is part of (kNoIndex: none)
    std::vector<std::string> tag;    // (T) brown: that word's coarse tag: noun, verb, det, adj, or ""
};

struct RealText {
    std::string name;    // "tang", "brown"
    std::string source;  // what the text is, one line
    Model model;
    std::vector<RealSequence> sequences;
};

// The shipped models the experiments know: "tang", "brown".
const std::vector<std::string>& real_model_names();

// The files load_real_text reads for the model at `model_path` trained on `corpus`: the
// checkpoint, the split, the text.
std::vector<std::string> real_text_files(const std::string& corpus, const std::string& model_path, const std::string& data_dir);

// The checkpoint at model_path and the held-out text of the corpus it was trained on (its
// "task.corpus": tang or brown) under data_dir (count poems or windows). IoError naming a missing
// file; ConfigError for a model of another corpus, or not `expected_corpus` when that is given;
// ValueError when the text has fewer than `count`.
RealText load_real_text(const std::string& model_path, const std::string& data_dir, std::size_t count, const char* where,
                        const std::string& expected_corpus = "");

// A Brown tag ("nns", "np-tl", "vbd", "at", "jj") as noun, verb, det, adj, or "".
std::string coarse_brown_tag(const std::string& tag);

// A pattern a model's text offers beyond the five of interp/detectors.hpp: its name (the
// column the tables show) and its keys (T, T), 1 where key j belongs to query i's pattern.
struct RealPattern {
    std::string name;
    std::function<Tensor2(const RealSequence&)> keys;
};
// tang: paired line, rhyme (interp::poem_pattern's paired_line and rhyme); brown: noun -> determiner, verb -> noun, noun -> adjective.
std::vector<RealPattern> real_patterns(const std::string& name);

// A token as a reader sees it: a character, a word piece ("␣" for a space, "↵" for a line break).
std::string real_token_label(const text::Tokenizer& tokenizer, std::int32_t id);

}  // namespace attnlab::experiments::detail
