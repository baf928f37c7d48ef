// attnlab/train/text_task.hpp: language modelling on real text — documents of token ids as a Task.
//
// What it is for: training the shipped text models (scripts/train_text_models.sh) and a user's
// `--corpus FILE` through the same Trainer as the generated tasks. A TextTask holds documents
// already tokenised (text/char_vocab.hpp, text/byte_bpe.hpp). A sample is a window of T + 1
// tokens of one document: tokens are its first T, targets its last T. A document of at most
// T + 1 tokens (a Tang poem: <bos> poem <eos>) is one sample from its start, padded with
// `pad` whose targets are -1 (ignored); a longer one gives every window start, each equally
// likely over the whole corpus. evaluate_text() is the held-out loss: every document cut into
// consecutive windows, each target counted once, in order, so the number is deterministic. Not
// for: reading or tokenising corpora (text/corpora.hpp).
//
//   attnlab::TextTask task("tang", docs, /*T=*/72, tokenizer, CharTokenizer::kEos);
//   attnlab::Trainer trainer(model, task, options);
//   attnlab::TextEval e = attnlab::evaluate_text(model, heldout_docs, 72, CharTokenizer::kEos);
//   e.bits_per_token();
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/facade/model.hpp"
#include "attnlab/text/tokenizer.hpp"
#include "attnlab/train/tasks.hpp"

namespace attnlab {

using TokenDocuments = std::vector<std::vector<std::int32_t>>;

class TextTask final : public Task {
public:
    // ConfigError for no documents, T == 0, a pad outside the vocabulary, or fewer than T + 1
    // tokens in all (naming the counts); ValueError for a token outside the tokenizer's vocabulary.
    TextTask(std::string name, TokenDocuments documents, std::size_t seq_len,
             std::shared_ptr<const text::Tokenizer> tokenizer, std::int32_t pad);

    std::string name() const override { return name_; }
    TaskKind kind() const override { return TaskKind::sequence; }
    std::size_t vocab_size() const override { return tokenizer_->vocab_size(); }
    std::size_t seq_len() const override { return seq_len_; }
    std::size_t num_classes() const override { return vocab_size(); }
    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override;
    // The tokenizer's decode; an ignored target (-1) reads as nothing.
    std::string decode(const std::int32_t* tokens, std::size_t n) const override;

    const TokenDocuments& documents() const { return documents_; }
    std::size_t total_tokens() const { return total_tokens_; }
    const std::shared_ptr<const text::Tokenizer>& tokenizer() const { return tokenizer_; }

private:
    std::string name_;
    TokenDocuments documents_;
    std::size_t seq_len_;
    std::shared_ptr<const text::Tokenizer> tokenizer_;
    std::int32_t pad_;
    std::vector<std::uint64_t> first_start_;  // (documents + 1) prefix sums of each document's window starts
    std::size_t total_tokens_ = 0;
};

// Held-out loss of a decoder over whole documents.
struct TextEval {
    double nats = 0;          // summed cross-entropy of every counted target, in nats
    std::size_t targets = 0;  // counted targets (every token of every document but its first)
    double mean_nats() const { return targets ? nats / static_cast<double>(targets) : 0.0; }
    double bits_per_token() const { return mean_nats() / std::log(2.0); }
};

// Every document cut into windows of T + 1 tokens overlapping by one (window k covers tokens
// kT .. kT + T), each window's targets counted once; batches of `batch_size` windows in
// document order through Model::evaluate. A window's context is its own tokens only (a target
// late in a long document sees at most T tokens before it).
TextEval evaluate_text(Model& model, const TokenDocuments& documents, std::size_t seq_len, std::int32_t pad,
                       std::size_t batch_size = 32);

// The continuation of a text prompt by a decoder that carries its tokenizer (greedy unless
// options.temperature > 0). With a CharTokenizer the prompt follows <bos>, each character
// converted to the script the model was trained on, generation stops at <eos>, and the answer
// is written in the script the prompt used (ScriptConverter::detect). With another tokenizer the
// prompt's ids are continued for max_new tokens. ConfigError for a model without a tokenizer or
// an empty prompt.
std::string continue_text(const Model& model, const std::string& prompt, std::size_t max_new,
                          const GenerateOptions& options = {});

}  // namespace attnlab
