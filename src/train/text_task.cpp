#include "attnlab/train/text_task.hpp"

#include <algorithm>
#include <array>

#include "attnlab/core/error.hpp"
#include "attnlab/text/char_vocab.hpp"

namespace attnlab {

namespace {
// Window starts of a document of n tokens for windows of T + 1: one for a short document.
std::uint64_t starts_of(std::size_t n, std::size_t T) { return n <= T + 1 ? 1 : n - T; }

void shape_text_batch(Batch& batch, std::size_t b, std::size_t t) {
    shape_to(batch.tokens, std::array<std::size_t, 2>{b, t});
    shape_to(batch.targets, std::array<std::size_t, 2>{b, t});
    batch.labels = Index1();
    batch.padding = Mask2();
    batch.pixels = Tensor3();
}

// Row `row` of batch: the window of doc starting at `start`, padded past its end.
void fill_window(Batch& batch, std::size_t row, const std::vector<std::int32_t>& doc, std::size_t start,
                 std::size_t T, std::int32_t pad) {
    for (std::size_t t = 0; t < T; ++t) {
        const std::size_t i = start + t;
        batch.tokens(row, t) = i < doc.size() ? doc[i] : pad;
        batch.targets(row, t) = i + 1 < doc.size() ? doc[i + 1] : -1;
    }
}
}  // namespace

TextTask::TextTask(std::string name, TokenDocuments documents, std::size_t seq_len,
                   std::shared_ptr<const text::Tokenizer> tokenizer, std::int32_t pad)
    : name_(std::move(name)), documents_(std::move(documents)), seq_len_(seq_len), tokenizer_(std::move(tokenizer)),
      pad_(pad) {
    const std::string where = "TextTask(\"" + name_ + "\")";
    if (!tokenizer_) fail<ConfigError>(where, ": needs a tokenizer");
    if (seq_len_ == 0 || seq_len_ > kMaxTaskLength) {
        fail<ConfigError>(where, ": the sequence length must be in 1 .. ", kMaxTaskLength, ", got ", seq_len_);
    }
    const auto V = static_cast<std::int32_t>(tokenizer_->vocab_size());
    if (pad_ < 0 || pad_ >= V) fail<ConfigError>(where, ": the pad token ", pad_, " is outside the vocabulary of ", V);
    if (documents_.empty()) fail<ConfigError>(where, ": the corpus has no documents");
    first_start_.push_back(0);
    for (std::size_t d = 0; d < documents_.size(); ++d) {
        for (std::size_t i = 0; i < documents_[d].size(); ++i) {
            const std::int32_t id = documents_[d][i];
            if (id < 0 || id >= V) {
                fail<ValueError>(where, ": document ", d, " token ", i, " is ", id, ", outside the vocabulary of ", V);
            }
        }
        total_tokens_ += documents_[d].size();
        first_start_.push_back(first_start_.back() + starts_of(documents_[d].size(), seq_len_));
    }
    std::size_t longest = 0;
    for (const auto& d : documents_) longest = std::max(longest, d.size());
    if (total_tokens_ < seq_len_ + 1) {
        fail<ConfigError>(where, ": the corpus has ", total_tokens_, " tokens, fewer than one sequence of ",
                          seq_len_ + 1);
    }
    if (longest < 2) fail<ConfigError>(where, ": no document has two tokens, so there is nothing to predict");
}

void TextTask::sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const {
    if (batch_size == 0) fail<ConfigError>(name_, "::sample: batch_size must be positive, got 0");
    require_allocatable({batch_size, seq_len_}, "Task::sample", "the batch");
    shape_text_batch(batch, batch_size, seq_len_);
    const std::uint64_t total = first_start_.back();
    for (std::size_t b = 0; b < batch_size; ++b) {
        // A start uniform over all windows (the modulo bias of 64 bits over < 2^40 starts is negligible).
        const std::uint64_t r = rng.next_u64() % total;
        const auto it = std::upper_bound(first_start_.begin(), first_start_.end(), r);
        const auto d = static_cast<std::size_t>(it - first_start_.begin()) - 1;
        fill_window(batch, b, documents_[d], static_cast<std::size_t>(r - first_start_[d]), seq_len_, pad_);
    }
}

std::string TextTask::decode(const std::int32_t* tokens, std::size_t n) const {
    std::vector<std::int32_t> ids;
    for (std::size_t i = 0; i < n; ++i)
        if (tokens[i] >= 0) ids.push_back(tokens[i]);
    return tokenizer_->decode(ids);
}

TextEval evaluate_text(Model& model, const TokenDocuments& documents, std::size_t seq_len, std::int32_t pad,
                       std::size_t batch_size) {
    if (seq_len == 0 || batch_size == 0) {
        fail<ConfigError>("evaluate_text: seq_len and batch_size must be positive, got ", seq_len, ", ", batch_size);
    }
    struct Window {
        std::size_t doc, start;
    };
    std::vector<Window> windows;
    for (std::size_t d = 0; d < documents.size(); ++d) {
        for (std::size_t s = 0; s + 1 < documents[d].size(); s += seq_len) windows.push_back({d, s});
    }
    TextEval e;
    Batch batch;
    for (std::size_t first = 0; first < windows.size(); first += batch_size) {
        const std::size_t rows = std::min(batch_size, windows.size() - first);
        shape_text_batch(batch, rows, seq_len);
        for (std::size_t r = 0; r < rows; ++r) {
            const Window& w = windows[first + r];
            fill_window(batch, r, documents[w.doc], w.start, seq_len, pad);
        }
        const CrossEntropyResult res = model.evaluate(batch);
        e.nats += static_cast<double>(res.loss) * static_cast<double>(res.count);
        e.targets += res.count;
    }
    return e;
}

std::string continue_text(const Model& model, const std::string& prompt, std::size_t max_new,
                          const GenerateOptions& options) {
    const text::Tokenizer* tok = model.tokenizer();
    if (!tok) fail<ConfigError>("continue_text: the model carries no tokenizer");
    if (prompt.empty()) fail<ConfigError>("continue_text: the prompt is empty");
    std::vector<std::int32_t> ids = tok->encode(prompt);
    if (const auto begin = tok->begin_id()) ids.insert(ids.begin(), *begin);
    const GenerateResult r = model.generate(ids, max_new, options);
    std::vector<std::int32_t> out(r.tokens.begin() + static_cast<std::ptrdiff_t>(ids.size()), r.tokens.end());
    if (const auto end = tok->end_id()) out.erase(std::find(out.begin(), out.end(), *end), out.end());
    return tok->decode_like(out, prompt);
}

}  // namespace attnlab
