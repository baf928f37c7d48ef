// attnlab/train/tasks.hpp: seeded toy tasks that tiny Transformers learn in seconds.
//
// What it is for: generating training and evaluation batches with nothing downloaded — the same
// batches natively and in WebAssembly for the same seed (all randomness comes from attnlab::Rng).
// Each task knows its vocabulary, its sequence length and how to turn tokens back into text.
// Not for: tokenising user text, loading datasets from disk, or computing the loss (see metrics.hpp
// for accuracy; the model owns the loss).
//
//   attnlab::TaskOptions options;
//   options.length = 8;                                       // prompt length
//   auto task = attnlab::make_task("reverse", options);       // T = 16, vocab_size = 11
//   attnlab::Rng rng(7);
//   attnlab::Batch batch = task->sample(32, rng);             // tokens, targets: (32, 16)
//   task->sample_into(32, rng, batch);                        // the next batch, same buffers
//   std::cout << task->decode(&batch.tokens(0, 0), task->seq_len()) << "\n";  // "3 1 4 ... | 4 ..."
//
// Three kinds of task:
//  * sequence: a causal decoder LM reads tokens (B, T) and predicts targets (B, T). targets[b][t]
//    is the token the model should output after reading tokens[b][0..t], or -1 where the loss and
//    accuracy must ignore the position (the prompt of a prompt/answer task).
//  * classification: an encoder reads tokens (B, T) with a padding mask (B, T) and predicts one
//    label per sequence in [0, num_classes()). targets is empty; pooling (mean over non-padding,
//    or a first-position read-out) is the model's choice: no CLS token is inserted.
//  * regression: a forecaster reads values (B, T, F) with timestamps and predicts forecast
//    (B, horizon); the batch also carries the seasonal-naive baseline (series, train/series.hpp).
//
// Token layouts (V = the `vocab` option; T = seq_len(); SEP = the separator token):
//
//   task          layout of one example                   vocab_size  T        targets != -1
//   copy          a1..aL SEP a1..aL                       V + 1       2L       t >= L (L answers)
//   reverse       a1..aL SEP aL..a1                       V + 1       2L       t >= L
//   sort          a1..aL SEP sorted(a) ascending          V + 1       2L       t >= L
//   assoc_recall  k1 v1 .. kN vN SEP q v(q)               2V + 1      2N + 2   t = T - 1 only
//   k_back        x0 .. x(L-1), target[t] = x(t-k)        V           L        t >= k
//   brackets      '(' ')' '[' ']' .. then PAD             2V + 1      L        (labels instead)
//   char_lm       c0 .. c(L-1), target[t] = c(t+1)        corpus      L        all
//
// For prompt/answer tasks the example (prompt, SEP, answer) has 2L + 1 tokens; tokens is the
// example without its last token and targets the example without its first, so the input at
// position L is SEP and its target is the first answer token. Symbols are 0..V-1, SEP = V.
// assoc_recall: keys are 0..V-1 (distinct within an example), values are V..2V-1, SEP = 2V.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/batch.hpp"

namespace attnlab {


enum class TaskKind {
    sequence,        // decoder LM: a target per position
    classification,  // encoder: one label per sequence
    regression,      // forecaster: horizon real values per example (series), MSE loss
};

// What a batch's model input is.
enum class TaskInput {
    tokens,  // Batch::tokens (B, T) ids in [0, vocab_size())
    pixels,  // Batch::pixels (B, S, S) grayscale images, S = image_size(); tokens empty (train/shapes.hpp)
    paired,  // Batch::pixels (B, S, S) and Batch::tokens (B, T): an image and a caption of it
             // (train/caption_match.hpp); the crossmodal architecture reads both
    values,  // Batch::values (B, T, F), time, forecast, baseline; tokens empty (train/series.hpp)
};

// Seed-independent configuration. An unset field takes the task's default (see make_task); a
// field the task does not use must stay unset (ConfigError otherwise), so a typo in a command
// line cannot silently do nothing.
struct TaskOptions {
    std::optional<std::size_t> length;  // prompt length / pairs (assoc_recall) / max length (brackets) / image side (shapes)
    std::optional<std::size_t> vocab;   // symbols / keys (assoc_recall) / bracket kinds (brackets) / classes (shapes)
    std::optional<std::size_t> k;       // k_back: distance to the recalled token
    // series only (SeriesOptions in train/series.hpp holds the defaults and ranges):
    std::optional<std::size_t> context;               // T, steps the model reads
    std::optional<std::size_t> horizon;               // steps to forecast
    std::optional<std::vector<std::size_t>> periods;  // P_k of the sines (and of pe time)
    std::optional<std::size_t> features;              // F, series per example
    std::optional<float> trend;                       // largest |slope| per step
    std::optional<float> noise;                       // noise standard deviation
    std::optional<float> drift;                       // relative growth of the periods over an example
};

// Largest `length` any task accepts (keeps T * B allocations sane; k_back with k = 512 needs 513).
inline constexpr std::size_t kMaxTaskLength = 8192;

class Task {
public:
    virtual ~Task() = default;
    virtual std::string name() const = 0;
    virtual TaskKind kind() const = 0;
    // Token tasks, unless the task says otherwise; an image task has vocab_size() 0 and
    // seq_len() S·S (its pixels).
    virtual TaskInput input() const { return TaskInput::tokens; }
    // S of an image task's (B, S, S) pixels; 0 for token tasks.
    virtual std::size_t image_size() const { return 0; }
    // A series task's F (values per step), horizon and periods; 0, 0, {} for other tasks.
    virtual std::size_t num_features() const { return 0; }
    virtual std::size_t horizon() const { return 0; }
    virtual std::vector<std::size_t> time_periods() const { return {}; }
    // Number of distinct input tokens, specials (SEP, PAD) included.
    virtual std::size_t vocab_size() const = 0;
    // T of every batch.
    virtual std::size_t seq_len() const = 0;
    // Width of the model's output layer: vocab_size() for sequence tasks, the number of labels
    // for classification tasks, horizon() for regression tasks.
    virtual std::size_t num_classes() const = 0;
    // batch_size > 0 examples drawn from rng; the same rng state gives the same batch.
    Batch sample(std::size_t batch_size, Rng& rng) const {
        Batch batch;
        sample_into(batch_size, rng, batch);
        return batch;
    }
    // The same batch as sample(), written into `batch`: tensors that already have the task's
    // shapes are reused and the unused ones emptied, so a training loop that samples into one
    // Batch allocates nothing after the first step. Safe to call from several threads at once.
    virtual void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const = 0;
    // Human-readable text of n tokens: "3 1 4 | 4 1 3", "(()[])", or the corpus characters.
    // -1 (an ignored target) reads as "_"; any other out-of-range token throws ValueError.
    virtual std::string decode(const std::int32_t* tokens, std::size_t n) const = 0;
};

// Names accepted by make_task, in a stable order:
// copy, reverse, sort, assoc_recall, k_back, brackets, char_lm, shapes, caption_match, series.
std::vector<std::string> task_names();

// Defaults: copy/reverse/sort length 16, vocab 10; assoc_recall length (pairs) 8, vocab (keys) 16;
// k_back length 64, k 8, vocab 10; brackets length 16, vocab (kinds) 2; char_lm length 64;
// shapes length (image side) 16, vocab (classes) 6 (train/shapes.hpp); caption_match length
// (image side) 16, vocab (shape classes) 6 (train/caption_match.hpp); series: SeriesOptions'
// defaults (context 48, horizon 12, periods 12 and 24, ...: train/series.hpp), and it takes only
// the series options (context, horizon, periods, features, trend, noise, drift), which no other
// task takes.
// Throws ConfigError listing the valid names for an unknown name, and naming the option and its
// value for a bad or inapplicable option.
std::unique_ptr<Task> make_task(const std::string& name, const TaskOptions& options = {});

// The embedded English text char_lm samples from (a few KB written for attnlab, public domain).
const std::string& char_lm_corpus();

}  // namespace attnlab
