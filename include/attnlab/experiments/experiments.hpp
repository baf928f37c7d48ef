// attnlab/experiments/experiments.hpp: the article's claims as seeded runs that return numbers.
//
// What it is for: each function below trains (or just initialises) a few tiny Transformers that
// differ in one switch of the article, and returns what it measured as named tables and curves
// plus a one-line conclusion computed from those numbers. The same calls serve the CLI
// (`attnlab experiment <name>`, which prints and writes CSV) and, later, the browser (which plots).
// Every run is deterministic for its options: weights come from Rng(seed) and batches from the
// trainer's seeded stream, evaluation from a fixed evaluation seed.
// Not for: printing (the caller formats the result), or tuning: defaults are chosen so the claim
// shows within about a minute on two cores, not to reach the best accuracy.
//
//   attnlab::experiments::ScalingOptions options;        // d_k = 512, copy task
//   options.steps = 100;
//   attnlab::experiments::Result r = attnlab::experiments::run_scaling(options, [](const auto& p) {
//       std::fprintf(stderr, "%s %zu/%zu loss %.3f\n", p.run.c_str(), p.step, p.total, p.loss);
//   });
//   std::puts(r.conclusion.c_str());   // "scaled reached loss ... at step 100; unscaled ...: 2.1x higher"
//
// Experiments and the article sections they test:
//   scaling     §2.2  1/sqrt(d_k) on vs off at large d_k: saturation at init, loss curves
//   positional  §4.1, §4.3  none / sinusoidal / learned / rope: accuracy at L, extrapolation to 2L
//   mask        §6.1  decoder with and without the causal mask: leaked training loss, broken generation
//   heads       §3.3  head-count sweep at a fixed d_model: loss, accuracy, speed
//   norm        §9.3  deep Pre-LN vs Post-LN, with and without warm-up, at a high learning rate
//   kv_heads    §3.3  MHA / GQA / MQA: parameters, accuracy, KV-cache bytes per token
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::experiments {

// ---- What every experiment returns ----------------------------------------------------------

// A table for reading: every cell already formatted (numbers with the precision that matters).
struct Table {
    std::string name;                            // "init", "final", ...
    std::vector<std::string> columns;            // header
    std::vector<std::vector<std::string>> rows;  // each the width of columns
};

// Curves for plotting that share an x axis: lines[i].y[j] is the value at x[j]. A run that
// stopped early (a non-finite loss) has NaN after its last step.
struct Line {
    std::string name;       // "scaled", "post-LN, no warm-up", ...
    std::vector<double> y;  // same length as Series::x
};
struct Series {
    std::string name;     // "train_loss": also the CSV file suffix
    std::string x_label;  // "step"
    std::string y_label;  // "mean training loss since the previous point"
    std::vector<double> x;
    std::vector<Line> lines;
};

struct Result {
    std::string name;                                          // "scaling"
    std::string claim;                                         // the article's claim, with its section
    std::vector<std::pair<std::string, std::string>> config;   // what was run, as key/value
    std::vector<Table> tables;
    std::vector<Series> series;
    std::vector<std::string> notes;                            // unsupported runs, caught errors
    std::string conclusion;                                    // one line computed from the numbers
};

// Reported during training so a caller can show progress; never required.
struct Progress {
    std::string run;          // which model of the experiment is training ("unscaled")
    std::size_t run_index;    // 0-based, of num_runs
    std::size_t num_runs;
    std::size_t step;         // steps done in this run
    std::size_t total;        // steps this run will take
    float loss;               // training loss of the last step
};
using ProgressFn = std::function<void(const Progress&)>;

// ---- Options common to the training experiments ----------------------------------------------

struct TrainingOptions {
    std::size_t steps = 300;        // optimisation steps per run
    std::size_t batch_size = 16;    // sequences per step
    float lr = 3e-3f;               // peak learning rate (AdamW, cosine decay over steps)
    std::size_t warmup_steps = 20;  // linear warm-up
    std::size_t log_every = 25;     // one curve point (mean training loss) every this many steps
    std::size_t eval_batches = 4;   // held-out batches for the final evaluation
    std::uint64_t seed = 1;         // weights and batches; every run of an experiment uses the same

    // Throws ConfigError naming the bad value (zero steps, batch or log_every; lr <= 0).
    void validate(const char* where) const;
};

// ---- The experiments -------------------------------------------------------------------------

// §2.2: one attention head with a large head dimension, trained with and without 1/sqrt(d_k).
// Table "init": std of the scaled scores over causal (visible) pairs, mean row entropy of the
// softmax against the entropy of uniform attention, mean of each row's largest weight, gradient
// norm of the first step. Series "train_loss": both curves. Table "final": held-out loss/accuracy.
struct ScalingOptions {
    std::string task = "copy";  // a fixed offset: with scaling one head learns it in ~60 steps
    std::size_t length = 8;     // task length (reverse: T = 2L)
    std::size_t d_model = 512;  // C; with num_heads = 1, d_k = C
    std::size_t num_heads = 1;
    std::size_t num_layers = 1;
    std::size_t ff_dim = 128;   // small: the experiment is about attention, the FFN only costs time
    TrainingOptions train{200, 16, 3e-3f, 20, 20, 4, 1};
};
Result run_scaling(const ScalingOptions& options, const ProgressFn& progress = {});

// §4.1/§4.3: the same order-dependent task with each positional encoding, trained at `length`,
// evaluated at `length` and at `test_length` (default 2 x length). A learned table cannot hold
// positions beyond max_len = the training length: its forward throws ValueError, reported as a
// note and "n/a" in the table, not hidden.
struct PositionalOptions {
    std::string task = "k_back";  // target[t] = x(t - k): order is everything
    std::size_t length = 24;      // training length
    std::size_t test_length = 0;  // 0 = 2 x length
    std::size_t k = 3;            // k_back distance
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t num_layers = 2;
    std::vector<std::string> encodings{"none", "sinusoidal", "learned", "rope"};
    TrainingOptions train{250, 16, 3e-3f, 20, 25, 4, 1};
};
Result run_positional(const PositionalOptions& options, const ProgressFn& progress = {});

// §6.1: a decoder trained with and without the causal mask. Without it position t sees token
// t + 1 (its own target): the training loss collapses, yet greedy generation, which has no
// future to peek at, fails. Reports teacher-forced accuracy next to generated-answer accuracy,
// and a few generated samples (LM tasks without a prompt are prompted with the first half of a
// sequence and scored against the rest). Needs a way to switch the decoder's mask off: if the engine has
// none (ModelConfig metadata key "causal"), only the masked run is done and a note says what is
// missing.
struct MaskOptions {
    std::string task = "char_lm";   // next character of English text: a masked model cannot get near 0 loss
    std::size_t length = 32;
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t num_layers = 2;
    std::size_t samples = 3;        // generated examples shown
    std::size_t gen_examples = 32;  // prompts whose generated answers are scored
    TrainingOptions train{300, 16, 3e-3f, 20, 25, 4, 1};
};
Result run_mask(const MaskOptions& options, const ProgressFn& progress = {});
// Whether this build's DecoderLM can be trained without its causal mask (see run_mask).
bool decoder_mask_switch_supported();

// §3.3: a sweep over the number of heads at a fixed d_model (head dim = d_model / heads).
struct HeadsOptions {
    std::string task = "reverse";
    std::size_t length = 8;
    std::size_t d_model = 64;
    std::size_t num_layers = 2;
    std::vector<std::size_t> heads{1, 2, 4, 8, 16};
    TrainingOptions train{250, 16, 3e-3f, 20, 25, 4, 1};
};
Result run_heads(const HeadsOptions& options, const ProgressFn& progress = {});

// §9.3: deeper models, Pre-LN vs Post-LN, each without and with warm-up, at a high learning rate.
// A run whose loss or gradient turns non-finite stops (the trainer throws) and reports its step;
// a run whose final held-out loss stays above `stuck_fraction` of the loss of uniform guessing
// is reported as not learning.
struct NormOptions {
    std::string task = "reverse";
    std::size_t length = 6;
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t num_layers = 6;
    float clip_norm = 0.0f;        // no clipping by default: clipping is itself a stabiliser
    float stuck_fraction = 0.9f;
    TrainingOptions train{200, 16, 1e-2f, 50, 20, 4, 1};  // warmup_steps: of the "warm-up" runs only
};
Result run_norm(const NormOptions& options, const ProgressFn& progress = {});

// §3.3 MQA/GQA: the same model with num_kv_heads = each entry (num_heads must be a multiple).
// Reports parameters, held-out accuracy, the KV cache per generated token
// (2 · layers · Hkv · D floats) and greedy generation speed with the KV cache.
struct KvHeadsOptions {
    std::string task = "reverse";
    std::size_t length = 6;
    std::size_t d_model = 64;
    std::size_t num_heads = 4;
    std::size_t num_layers = 2;
    std::vector<std::size_t> kv_heads{4, 2, 1};
    std::size_t gen_tokens = 200;  // tokens generated to time the cached decoder
    TrainingOptions train{250, 16, 3e-3f, 20, 25, 4, 1};
};
Result run_kv_heads(const KvHeadsOptions& options, const ProgressFn& progress = {});

// The experiment names, in a stable order: scaling, positional, mask, heads, norm, kv_heads.
std::vector<std::string> experiment_names();

}  // namespace attnlab::experiments
