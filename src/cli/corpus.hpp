// src/cli/corpus.hpp: `attnlab train --corpus`, `attnlab eval` of a text model, and the text of
// `attnlab generate` for char-token models: the flags, the checkpoint's corpus metadata and the
// held-out report (train/text_corpus.hpp computes; this file only reads flags and prints).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "args.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/train/text_corpus.hpp"

namespace attnlab::cli {

// --corpus, --data, --chars, --merges, --tokens, --script, --save-f16, --stats.
void add_corpus_flags(Args& args);
bool corpus_given(const Args& args);
CorpusSpec corpus_spec(const Args& args);
// The context T of a corpus run: --length, default 64.
std::size_t corpus_length(const Args& args);

// The held-out figures of a trained text model (printed, and written as JSON by --stats).
struct TextModelReport {
    TextEval eval;
    double bits_per_unit = 0;
};
// Saves the model trained on `corpus` to `path` (with --save-f16 in fp16) with the spec and T as
// "task." metadata, reloads what was written and evaluates it on the held-out documents, so the
// stated loss is the saved model's. Returns the report.
TextModelReport save_and_evaluate(const Model& model, const CorpusSpec& spec, const TextCorpus& corpus,
                                  std::size_t seq_len, const Args& args, const std::string& path);
// Writes the report as JSON to --stats (when given), with the corpus's and the run's facts.
void write_stats(const Args& args, const TextCorpus& corpus, const Model& model, const TextModelReport& r,
                 std::size_t steps, double seconds);

// The corpus spec and T stored in a checkpoint's metadata, if it was trained on a corpus.
struct StoredCorpus {
    bool present = false;
    CorpusSpec spec;
    std::size_t seq_len = 0;
};
StoredCorpus stored_corpus(const std::vector<std::uint8_t>& checkpoint, const std::string& data_dir);
// `attnlab eval` of a text model: the held-out loss over the corpus rebuilt with the model's tokenizer.
int eval_text_model(Model& model, const StoredCorpus& stored, const std::string& path);

}  // namespace attnlab::cli
