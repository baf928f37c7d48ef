#include "attnlab/train/tasks.hpp"
#include "attnlab/train/caption_match.hpp"
#include "attnlab/train/series.hpp"
#include "attnlab/train/shapes.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

constexpr std::size_t kMaxVocab = 65536;

// -------------------------------------------------------------------------------------------
// Option checking shared by make_task.

struct OptionChecker {
    const std::string& task;

    std::size_t get(const std::optional<std::size_t>& value, const char* option, std::size_t fallback,
                    std::size_t lo, std::size_t hi, const char* why = "") const {
        const std::size_t v = value.value_or(fallback);
        if (v < lo || v > hi) {
            fail<ConfigError>("make_task(\"", task, "\"): ", option, " must be in [", lo, ", ", hi, "]", why,
                              ", got ", option, "=", v);
        }
        return v;
    }
    void unused(const std::optional<std::size_t>& value, const char* option, const char* used_by) const {
        if (value) {
            fail<ConfigError>("make_task(\"", task, "\"): option ", option, " does not apply to this task (",
                              used_by, "), got ", option, "=", *value);
        }
    }
};

void require_batch_size(std::size_t batch_size, std::size_t t, const std::string& task) {
    if (batch_size == 0) fail<ConfigError>(task, "::sample: batch_size must be positive, got 0");
    require_allocatable({batch_size, t}, "Task::sample", "the batch");
}

// The batch's tensors take the shapes of this task (shape_to keeps the storage of a tensor that
// already has its shape, so sample_into then allocates nothing); one the task does not use is left empty.
template <class Tensor>
void make_empty(Tensor& t) {
    if (t.size() != 0) t = Tensor();
}
void make_series_empty(Batch& batch) {
    make_empty(batch.values);
    make_empty(batch.time);
    make_empty(batch.forecast);
    make_empty(batch.baseline);
}
void shape_sequence_batch(Batch& batch, std::size_t b, std::size_t t) {
    shape_to(batch.tokens, std::array<std::size_t, 2>{b, t});
    shape_to(batch.targets, std::array<std::size_t, 2>{b, t});
    make_empty(batch.labels);
    make_empty(batch.padding);
    make_empty(batch.pixels);
    make_series_empty(batch);
}

// Scratch of the tasks' samplers, one per thread (a Task is shared and const): grown on first
// use, then reused, so sampling a batch of an unchanged size allocates nothing.
struct SampleScratch {
    std::vector<std::int32_t> example, perm, values, word, stack;
    std::vector<std::size_t> closes, others;
};
SampleScratch& sample_scratch() {
    thread_local SampleScratch scratch;
    return scratch;
}

void require_token(std::int32_t token, std::size_t position, std::size_t vocab, const std::string& task) {
    if (token < -1 || token >= static_cast<std::int32_t>(vocab)) {
        fail<ValueError>(task, "::decode: token ", token, " at position ", position, " is outside [0, ", vocab,
                         ") (and is not -1, the ignored target)");
    }
}

std::int32_t draw(Rng& rng, std::size_t n) { return static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(n))); }

// Words separated by spaces: each token through `word`, -1 as "_".
template <class Word>
std::string join_words(const std::int32_t* tokens, std::size_t n, std::size_t vocab, const std::string& task,
                       Word word) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        require_token(tokens[i], i, vocab, task);
        if (i) out += ' ';
        out += tokens[i] < 0 ? std::string("_") : word(tokens[i]);
    }
    return out;
}

// -------------------------------------------------------------------------------------------
// copy / reverse / sort: prompt a1..aL, SEP, answer. Example has 2L + 1 tokens, T = 2L.

enum class Transform { copy, reverse, sort };

class PromptAnswerTask final : public Task {
public:
    PromptAnswerTask(Transform transform, std::size_t length, std::size_t vocab)
        : transform_(transform), length_(length), vocab_(vocab) {}

    std::string name() const override {
        switch (transform_) {
            case Transform::copy: return "copy";
            case Transform::reverse: return "reverse";
            case Transform::sort: return "sort";
        }
        return "";
    }
    TaskKind kind() const override { return TaskKind::sequence; }
    std::size_t vocab_size() const override { return vocab_ + 1; }
    std::size_t seq_len() const override { return 2 * length_; }
    std::size_t num_classes() const override { return vocab_size(); }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        const std::size_t L = length_, T = seq_len();
        require_batch_size(batch_size, T, name());
        shape_sequence_batch(batch, batch_size, T);
        std::vector<std::int32_t>& example = sample_scratch().example;
        example.resize(2 * L + 1);  // prompt, SEP, answer
        for (std::size_t b = 0; b < batch_size; ++b) {
            for (std::size_t i = 0; i < L; ++i) example[i] = draw(rng, vocab_);
            example[L] = sep();
            std::copy(example.begin(), example.begin() + L, example.begin() + L + 1);
            if (transform_ == Transform::reverse) std::reverse(example.begin() + L + 1, example.end());
            if (transform_ == Transform::sort) std::sort(example.begin() + L + 1, example.end());
            for (std::size_t t = 0; t < T; ++t) {
                batch.tokens(b, t) = example[t];
                batch.targets(b, t) = t < L ? -1 : example[t + 1];  // only answer tokens count
            }
        }
    }

    std::string decode(const std::int32_t* tokens, std::size_t n) const override {
        return join_words(tokens, n, vocab_size(), name(),
                          [&](std::int32_t t) { return t == sep() ? std::string("|") : std::to_string(t); });
    }

private:
    std::int32_t sep() const { return static_cast<std::int32_t>(vocab_); }

    Transform transform_;
    std::size_t length_, vocab_;
};

// -------------------------------------------------------------------------------------------
// assoc_recall: k1 v1 .. kN vN SEP q v(q). Example has 2N + 3 tokens, T = 2N + 2; only the last
// position (input q) has a target. Keys 0..V-1 are distinct within an example; values V..2V-1.

class AssocRecallTask final : public Task {
public:
    AssocRecallTask(std::size_t pairs, std::size_t keys) : pairs_(pairs), keys_(keys) {}

    std::string name() const override { return "assoc_recall"; }
    TaskKind kind() const override { return TaskKind::sequence; }
    std::size_t vocab_size() const override { return 2 * keys_ + 1; }
    std::size_t seq_len() const override { return 2 * pairs_ + 2; }
    std::size_t num_classes() const override { return vocab_size(); }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        const std::size_t N = pairs_, T = seq_len();
        require_batch_size(batch_size, T, name());
        shape_sequence_batch(batch, batch_size, T);
        batch.targets.fill(-1);
        // Partial Fisher-Yates over a permutation of the keys: any starting order gives a uniform
        // random choice of N distinct keys, so the array is reused across examples.
        SampleScratch& scratch = sample_scratch();
        std::vector<std::int32_t>& perm = scratch.perm;
        std::vector<std::int32_t>& values = scratch.values;
        perm.resize(keys_);
        for (std::size_t i = 0; i < keys_; ++i) perm[i] = static_cast<std::int32_t>(i);
        values.resize(N);
        for (std::size_t b = 0; b < batch_size; ++b) {
            for (std::size_t i = 0; i < N; ++i) {
                std::swap(perm[i], perm[i + rng.below(static_cast<std::uint32_t>(keys_ - i))]);
                values[i] = static_cast<std::int32_t>(keys_) + draw(rng, keys_);
                batch.tokens(b, 2 * i) = perm[i];
                batch.tokens(b, 2 * i + 1) = values[i];
            }
            const std::size_t q = rng.below(static_cast<std::uint32_t>(N));
            batch.tokens(b, 2 * N) = static_cast<std::int32_t>(2 * keys_);  // SEP
            batch.tokens(b, 2 * N + 1) = perm[q];
            batch.targets(b, 2 * N + 1) = values[q];
        }
    }

    std::string decode(const std::int32_t* tokens, std::size_t n) const override {
        const auto K = static_cast<std::int32_t>(keys_);
        return join_words(tokens, n, vocab_size(), name(), [&](std::int32_t t) {
            if (t == 2 * K) return std::string("|");
            return t < K ? "k" + std::to_string(t) : "v" + std::to_string(t - K);
        });
    }

private:
    std::size_t pairs_, keys_;
};

// -------------------------------------------------------------------------------------------
// k_back: x0..x(L-1) uniform symbols; target[t] = x(t-k) for t >= k, -1 before.

class KBackTask final : public Task {
public:
    KBackTask(std::size_t length, std::size_t k, std::size_t vocab) : length_(length), k_(k), vocab_(vocab) {}

    std::string name() const override { return "k_back"; }
    TaskKind kind() const override { return TaskKind::sequence; }
    std::size_t vocab_size() const override { return vocab_; }
    std::size_t seq_len() const override { return length_; }
    std::size_t num_classes() const override { return vocab_size(); }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        const std::size_t T = length_;
        require_batch_size(batch_size, T, name());
        shape_sequence_batch(batch, batch_size, T);
        for (std::size_t b = 0; b < batch_size; ++b) {
            for (std::size_t t = 0; t < T; ++t) {
                batch.tokens(b, t) = draw(rng, vocab_);
                batch.targets(b, t) = t < k_ ? -1 : batch.tokens(b, t - k_);
            }
        }
    }

    std::string decode(const std::int32_t* tokens, std::size_t n) const override {
        return join_words(tokens, n, vocab_size(), name(), [](std::int32_t t) { return std::to_string(t); });
    }

private:
    std::size_t length_, k_, vocab_;
};

// -------------------------------------------------------------------------------------------
// brackets: even-length words over `kinds` bracket pairs, padded to T = length with PAD.
// Token 2i opens kind i, 2i + 1 closes it, PAD = 2 * kinds. Label 1 = balanced.

constexpr char kBracketChars[] = "()[]{}<>";

class BracketsTask final : public Task {
public:
    BracketsTask(std::size_t length, std::size_t kinds) : length_(length), kinds_(kinds) {}

    std::string name() const override { return "brackets"; }
    TaskKind kind() const override { return TaskKind::classification; }
    std::size_t vocab_size() const override { return 2 * kinds_ + 1; }
    std::size_t seq_len() const override { return length_; }
    std::size_t num_classes() const override { return 2; }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        const std::size_t T = length_;
        require_batch_size(batch_size, T, name());
        shape_to(batch.tokens, std::array<std::size_t, 2>{batch_size, T});
        shape_to(batch.padding, std::array<std::size_t, 2>{batch_size, T});
        shape_to(batch.labels, std::array<std::size_t, 1>{batch_size});
        make_empty(batch.targets);
        make_empty(batch.pixels);
        make_series_empty(batch);
        const auto pad = static_cast<std::int32_t>(2 * kinds_);
        SampleScratch& scratch = sample_scratch();
        std::vector<std::int32_t>& word = scratch.word;
        for (std::size_t b = 0; b < batch_size; ++b) {
            // The length is drawn before the label and is always even, so neither the length nor
            // its parity says anything about the class.
            const std::size_t n = 2 * (1 + rng.below(static_cast<std::uint32_t>(T / 2)));
            const bool balanced = rng.below(2) == 1;
            if (balanced) balanced_word(n, rng, scratch, word);
            else unbalanced_word(n, rng, scratch, word);
            for (std::size_t t = 0; t < T; ++t) {
                batch.tokens(b, t) = t < n ? word[t] : pad;
                batch.padding(b, t) = t < n ? 0 : 1;
            }
            batch.labels(b) = balanced ? 1 : 0;
        }
    }

    std::string decode(const std::int32_t* tokens, std::size_t n) const override {
        std::string out;
        for (std::size_t i = 0; i < n; ++i) {
            require_token(tokens[i], i, vocab_size(), name());
            if (tokens[i] < 0) out += '_';
            else if (tokens[i] == static_cast<std::int32_t>(2 * kinds_)) out += '.';
            else out += kBracketChars[tokens[i]];
        }
        return out;
    }

private:
    // word = a random balanced word of even length n: open while there is room, close when the
    // depth equals the remaining length, otherwise a fair coin. A close matches the innermost open.
    void balanced_word(std::size_t n, Rng& rng, SampleScratch& scratch, std::vector<std::int32_t>& word) const {
        std::vector<std::int32_t>& stack = scratch.stack;
        word.clear();
        stack.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t depth = stack.size(), remaining = n - i;
            const bool open = depth == 0 || (depth < remaining && rng.below(2) == 0);
            if (open) {
                stack.push_back(2 * draw(rng, kinds_));
                word.push_back(stack.back());
            } else {
                word.push_back(stack.back() + 1);
                stack.pop_back();
            }
        }
    }

    static bool is_balanced(const std::vector<std::int32_t>& word, std::vector<std::int32_t>& stack) {
        stack.clear();
        for (std::int32_t t : word) {
            if (t % 2 == 0) stack.push_back(t);
            else if (stack.empty() || stack.back() != t - 1) return false;
            else stack.pop_back();
        }
        return stack.empty();
    }

    // word = an unbalanced word of even length n. Half of the negatives are hard: a shuffled
    // balanced word keeps every kind's counts (so counting cannot tell it apart), and with two or
    // more kinds a quarter swap two closing brackets of different kinds ("([])" -> "([)]"), which
    // keeps the depth profile too. The last quarter are uniform random words, which mostly have
    // the wrong counts.
    void unbalanced_word(std::size_t n, Rng& rng, SampleScratch& scratch, std::vector<std::int32_t>& word) const {
        const std::uint32_t type = rng.below(4);
        if (type == 2 && kinds_ >= 2) {
            balanced_word(n, rng, scratch, word);
            std::vector<std::size_t>& closes = scratch.closes;
            std::vector<std::size_t>& others = scratch.others;
            closes.clear();
            for (std::size_t i = 0; i < n; ++i)
                if (word[i] % 2 == 1) closes.push_back(i);
            const std::size_t i = closes[rng.below(static_cast<std::uint32_t>(closes.size()))];
            others.clear();
            for (std::size_t j : closes)
                if (word[j] != word[i]) others.push_back(j);
            if (!others.empty()) {
                // At the earlier of the two positions the innermost open is of the other kind.
                std::swap(word[i], word[others[rng.below(static_cast<std::uint32_t>(others.size()))]]);
                return;
            }
        }
        if (type == 3) {
            word.resize(n);
            for (auto& t : word) t = draw(rng, 2 * kinds_);
            if (!is_balanced(word, scratch.stack)) return;
        }
        balanced_word(n, rng, scratch, word);
        for (int attempt = 0; attempt < 8; ++attempt) {
            for (std::size_t i = n - 1; i > 0; --i) std::swap(word[i], word[rng.below(static_cast<std::uint32_t>(i + 1))]);
            if (!is_balanced(word, scratch.stack)) return;
        }
        // A reversed balanced word starts with a closing bracket: unbalanced, same counts.
        std::reverse(word.begin(), word.end());
    }

    std::size_t length_, kinds_;
};

// -------------------------------------------------------------------------------------------
// char_lm: windows of length + 1 characters of the corpus; targets = the next character.

class CharLmTask final : public Task {
public:
    explicit CharLmTask(std::size_t length) : length_(length) {
        const std::string& text = char_lm_corpus();
        std::array<bool, 256> seen{};
        for (char c : text) seen[static_cast<unsigned char>(c)] = true;
        id_.fill(-1);
        for (std::size_t c = 0; c < 256; ++c) {
            if (!seen[c]) continue;
            id_[c] = static_cast<std::int32_t>(chars_.size());
            chars_.push_back(static_cast<char>(c));
        }
        ids_.reserve(text.size());
        for (char c : text) ids_.push_back(id_[static_cast<unsigned char>(c)]);
    }

    std::string name() const override { return "char_lm"; }
    TaskKind kind() const override { return TaskKind::sequence; }
    std::size_t vocab_size() const override { return chars_.size(); }
    std::size_t seq_len() const override { return length_; }
    std::size_t num_classes() const override { return vocab_size(); }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        const std::size_t T = length_;
        require_batch_size(batch_size, T, name());
        shape_sequence_batch(batch, batch_size, T);
        const auto starts = static_cast<std::uint32_t>(ids_.size() - T);  // window [s, s + T] fits
        for (std::size_t b = 0; b < batch_size; ++b) {
            const std::size_t s = rng.below(starts);
            for (std::size_t t = 0; t < T; ++t) {
                batch.tokens(b, t) = ids_[s + t];
                batch.targets(b, t) = ids_[s + t + 1];
            }
        }
    }

    std::string decode(const std::int32_t* tokens, std::size_t n) const override {
        std::string out;
        for (std::size_t i = 0; i < n; ++i) {
            require_token(tokens[i], i, vocab_size(), name());
            out += tokens[i] < 0 ? '_' : chars_[static_cast<std::size_t>(tokens[i])];
        }
        return out;
    }

private:
    std::size_t length_;
    std::string chars_;                 // (V) distinct corpus bytes in increasing order
    std::array<std::int32_t, 256> id_;  // byte -> token, -1 if absent
    std::vector<std::int32_t> ids_;     // the corpus as tokens
};

}  // namespace

std::vector<std::string> task_names() {
    return {"copy", "reverse", "sort", "assoc_recall", "k_back", "brackets", "char_lm", "shapes", "caption_match", "series"};
}

std::unique_ptr<Task> make_task(const std::string& name, const TaskOptions& options) {
    const OptionChecker check{name};
    if (name == "series") return make_series_task(options);
    if (const char* option = first_series_option(options)) {
        fail<ConfigError>("make_task(\"", name, "\"): option ", option, " does not apply to this task (only series uses it)");
    }
    if (name == "copy" || name == "reverse" || name == "sort") {
        check.unused(options.k, "k", "only k_back uses it");
        const std::size_t length = check.get(options.length, "length", 16, 1, kMaxTaskLength);
        const std::size_t vocab = check.get(options.vocab, "vocab", 10, 2, kMaxVocab);
        const Transform transform = name == "copy"      ? Transform::copy
                                    : name == "reverse" ? Transform::reverse
                                                        : Transform::sort;
        return std::make_unique<PromptAnswerTask>(transform, length, vocab);
    }
    if (name == "assoc_recall") {
        check.unused(options.k, "k", "only k_back uses it");
        const std::size_t pairs = check.get(options.length, "length", 8, 1, kMaxTaskLength / 2);
        if (options.vocab && *options.vocab < pairs) {
            fail<ConfigError>("make_task(\"assoc_recall\"): vocab (number of keys) must be >= length (number of "
                              "pairs) so the keys can be distinct, got vocab=",
                              *options.vocab, ", length=", pairs);
        }
        const std::size_t keys = check.get(options.vocab, "vocab", std::max<std::size_t>(16, pairs), 2, kMaxVocab);
        return std::make_unique<AssocRecallTask>(pairs, keys);
    }
    if (name == "k_back") {
        const std::size_t length = check.get(options.length, "length", 64, 2, kMaxTaskLength);
        const std::size_t k = check.get(options.k, "k", 8, 1, length - 1, " (k < length, so some target exists)");
        const std::size_t vocab = check.get(options.vocab, "vocab", 10, 2, kMaxVocab);
        return std::make_unique<KBackTask>(length, k, vocab);
    }
    if (name == "brackets") {
        check.unused(options.k, "k", "only k_back uses it");
        const std::size_t length = check.get(options.length, "length", 16, 2, kMaxTaskLength);
        const std::size_t kinds = check.get(options.vocab, "vocab", 2, 1, 4, " (bracket kinds: () [] {} <>)");
        return std::make_unique<BracketsTask>(length, kinds);
    }
    if (name == "char_lm") {
        check.unused(options.k, "k", "only k_back uses it");
        check.unused(options.vocab, "vocab", "the corpus fixes the vocabulary");
        const std::size_t length = check.get(options.length, "length", 64, 1, char_lm_corpus().size() - 1,
                                             " (a window of length + 1 must fit in the corpus)");
        return std::make_unique<CharLmTask>(length);
    }
    if (name == "shapes") {
        check.unused(options.k, "k", "only k_back uses it");
        return make_shapes_task(options.length.value_or(16), options.vocab.value_or(6));
    }
    if (name == "caption_match") {
        check.unused(options.k, "k", "only k_back uses it");
        return make_caption_match_task(options.length.value_or(16), options.vocab.value_or(6));
    }
    std::string valid;
    for (const auto& n : task_names()) valid += (valid.empty() ? "" : ", ") + n;
    fail<ConfigError>("make_task: unknown task '", name, "'; valid names: ", valid);
}

}  // namespace attnlab
