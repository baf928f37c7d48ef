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
// Experiments and the article sections they test (registry.hpp lists them with their parameters):
//   scaling      §2.2  1/sqrt(d_k) on vs off at large d_k: saturation at init, softmax-gradient norm, loss curves
//   heads        §3.2/§3.3  head-count sweep at d_model 512 and 64: loss, accuracy, speed
//   cost         §3.2  multiply-adds and wall time of one attention layer for h = 1..16 at a fixed d_model
//   lstm         §1.1/§5.1  k_back recall at distances up to 500: LSTM vs Transformer of about equal size
//   positional   §4.1, §4.3  none / sinusoidal / learned / rope: accuracy at L and 2L, permutation gap
//   permutation  §4.1  f(permuted x) vs permuted f(x) for each positional encoding
//   mask         §6.1  decoder with and without the causal mask: leaked training loss, broken generation
//   norm         §9.3  deep Pre-LN vs Post-LN, with and without warm-up, at a high learning rate
//   kv_heads     §3.3  MHA / GQA / MQA: parameters, accuracy, KV-cache bytes per token
//   importance   §9.2  attention weight vs weight·||v|| vs removing the key: rank correlations
//   fp16         §6.3  fp16 attention with its softmax in fp16 vs fp32 from a bad init: the step it broke, max scores
//   variants     §5.3  full / window / block-sparse / linear as n grows: time, memory, long-range accuracy
//   normalizer   §9.1  softmax / sigmoid / relu weights: loss curves, accuracy, entropy of the weights
//   tie_qk       §2.1  separate W_Q, W_K vs one tied matrix on k_back: accuracy and where the weights go
//   induction    §5.2/§3.2  1- vs 2-layer attention-only decoders on repeated random tokens: the phase change
//   series       §7.2  forecasting a periodic series: Transformer (sinusoidal, time-aware) vs LSTM vs seasonal naive
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
// A column whose name ends in "/s" or "(ms)" holds wall-time measurements: the only cells that
// differ between two runs of the same command (tests mask them).
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

// A conclusion or timing line as data: a template id of the experiment plus named values, so a
// page can say it in the reader's language with the same numbers. Each experiment has one table of
// English templates ("the claim held: {kv} keeps {floats} floats per token ..."), defined next to
// its run function and listed in its registry entry (Experiment::messages); Result::conclusion is
// that message rendered with that table.
struct Message;
// One named value: a text formatted in C++ ("93.8%", "0.412", "rope": numbers look the same in
// every language), or a list of messages of the same table, each rendered and joined with
// `separator` (a one-part list is how a message nests a phrase chosen by the run).
struct MessageValue {
    std::string text;
    std::vector<Message> parts;  // when is_list
    std::string separator;       // "; ", ", " or "" (each part carries its own lead-in)
    bool is_list = false;

    MessageValue(std::string value);
    MessageValue(const char* value);
    MessageValue(std::vector<Message> list, std::string joined_by);
    MessageValue(Message phrase);
};
struct Message {
    std::string id;  // a key of the experiment's template table; empty: no message
    std::vector<std::pair<std::string, MessageValue>> values;
};
// An experiment's English templates: id -> text where {name} stands for the value `name`.
using MessageTemplates = std::vector<std::pair<std::string, std::string>>;
// The message in the language of `templates`. Error naming the id and the placeholder when the
// table has no template for an id (of the message or of a part), a placeholder has no value, or
// a value has no placeholder: every value is shown and nothing is left in braces.
std::string render_message(const Message& message, const MessageTemplates& templates);

// Whether the article's claim held in a run: chosen by the same tests that choose the opening
// phrase of Result::conclusion ("the claim held", "half the claim held: ...", "the claim did NOT
// hold here"), so a page can say it in the reader's language. `partly` is a claim of two parts of
// which one held; `untested` a run whose options left out what the claim compares (heads without
// d_model 512, variants without full attention).
enum class Verdict { untested, held, partly, not_held };
// "untested", "held", "partly", "not_held": the name in `--json` and in JavaScript.
const char* verdict_name(Verdict v);

struct Result {
    std::string name;                                          // "scaling"
    std::string claim;                                         // the article's claim, with its section
    std::string command;                                       // the CLI command that repeats it (run_experiment)
    std::vector<std::pair<std::string, std::string>> config;   // what was run, as key/value
    std::vector<Table> tables;
    std::vector<Series> series;
    std::vector<std::string> notes;                            // unsupported runs, caught errors
    // The texts of tables, charts and notes made from a template (a run name "MHA kv=4", a column
    // "loss @48", a note "unscaled stopped: <error>"), each with its message (ids of the
    // experiment's templates), so a page can say them in another language; the other texts are
    // fixed words.
    std::vector<std::pair<std::string, Message>> phrases;
    std::string conclusion;                                    // one line computed from the numbers
    Message conclusion_message;                                // conclusion as template id + values (conclusion renders it)
    Verdict verdict = Verdict::untested;                       // the opening phrase of conclusion, as a value
    std::string timing;                                        // what the wall-time columns show (differs run to run), or empty
    Message timing_message;                                    // timing as template id + values; id empty when there is none
};

// Reported during training so a caller can show progress; never required.
struct Progress {
    std::string run;          // which model of the experiment is training ("unscaled")
    std::size_t run_index;    // 0-based, of num_runs
    std::size_t num_runs;
    std::size_t step;         // steps done in this run
    std::size_t total;        // steps this run will take
    float loss;               // training loss of the last step
    // What the experiment measured at this step beside the training loss, by name
    // ("repeated_half_loss"), so a page can draw it as it comes; empty at most steps and in most
    // experiments (the induction experiment fills it at each logged step).
    std::vector<std::pair<std::string, double>> values = {};
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
    // Table "softmax_gradient": for each d_k, the Frobenius norm of the softmax Jacobian
    // diag(w) − w wᵀ averaged over rows of `keys` scores q·k of unit-normal q, k (Rng(seed)),
    // with and without 1/sqrt(d_k).
    std::vector<std::size_t> gradient_dims{16, 32, 64, 128, 256, 512};
    std::size_t keys = 16;
    TrainingOptions train{200, 16, 3e-3f, 20, 20, 4, 1};
};
Result run_scaling(const ScalingOptions& options, const ProgressFn& progress = {});
// The mean Frobenius norm of the softmax Jacobian over `rows` rows of `keys` scores q·k·scale,
// q and k of `d_k` unit-normal entries drawn from Rng(seed) (the "softmax_gradient" table).
double softmax_jacobian_norm(std::size_t d_k, std::size_t keys, std::size_t rows, bool scaled, std::uint64_t seed);

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
    std::string task = "reverse";   // a masked decoder learns to generate it; the unmasked one reads the answer
    std::size_t length = 6;
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t num_layers = 2;
    std::size_t samples = 3;        // generated examples shown
    std::size_t gen_examples = 32;  // prompts whose generated answers are scored
    TrainingOptions train{400, 16, 3e-3f, 20, 25, 4, 1};
};
Result run_mask(const MaskOptions& options, const ProgressFn& progress = {});

// §3.2/§3.3: a sweep over the number of heads at each width in d_models (head dim = width /
// heads; head counts that do not divide a width, or leave RoPE an odd head dim, are skipped
// with a note). The article's h = 8 at 512 is a claim about large models trained for days; the
// runs here are short, and the conclusion reports which head count won at each width.
struct HeadsOptions {
    std::string task = "reverse";
    std::size_t length = 8;
    std::vector<std::size_t> d_models{512, 64};
    std::size_t num_layers = 1;
    std::vector<std::size_t> heads{1, 2, 4, 8, 16};
    TrainingOptions train{150, 16, 1e-3f, 15, 25, 4, 1};
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

// §3.2: multi-head attention costs what one head costs. One self-attention layer (x (B, T, C)
// -> (B, T, C), no mask) for each head count: its multiply-adds counted from the shapes of the
// products it runs (projections 4·T·C·C, scores and context 2·T·S·C per sequence, whatever h),
// and its measured forward and backward time (best of `repeats`).
struct CostOptions {
    std::size_t d_model = 256;
    std::size_t length = 128;  // T = S
    std::size_t batch = 2;
    std::vector<std::size_t> heads{1, 2, 4, 8, 16};
    std::size_t repeats = 5;
    std::uint64_t seed = 1;
};
Result run_cost(const CostOptions& options, const ProgressFn& progress = {});

// §4.1: self-attention without positions is permutation-equivariant: f(P x) = P f(x). An
// unmasked decoder (causal = false: a causal mask itself breaks the symmetry) at its
// initialisation, for each encoding: the largest |f(P x) − P f(x)| over `batches` sequences, each
// with its own random permutation, against the largest |f(x)|.
struct PermutationOptions {
    std::size_t length = 16;
    std::size_t vocab = 10;
    std::size_t d_model = 32;
    std::size_t num_heads = 4;
    std::size_t num_layers = 2;
    std::size_t batches = 8;
    std::vector<std::string> encodings{"none", "sinusoidal", "learned", "rope"};
    double tolerance = 1e-4;  // relative gap below which outputs count as equal (float rounding)
    std::uint64_t seed = 1;
};
Result run_permutation(const PermutationOptions& options, const ProgressFn& progress = {});


// §9.2: attention weight is not importance. A decoder trained on `task`, then for every query of
// held-out sequences (last block, each head) three rankings of the keys it can see: by the
// weight w_ij, by w_ij·||v_j W_O-slice|| (the norm of what the key adds to the output), and by
// ablation: the change of the block's attention output at i when key j is masked out. Reports
// Spearman rank correlations of the weight and of weight·||v|| with the ablation ranking, and how
// often each one's top key is the ablation's top key.
struct ImportanceOptions {
    std::string task = "k_back";
    std::size_t length = 12;
    std::size_t k = 3;
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t num_layers = 2;
    std::size_t sequences = 8;  // held-out sequences analysed
    // A shipped text model (real_text: tang or brown, read from its task.corpus) compared as
    // well, on `real_sequences` held-out poems or windows under data_dir; "none": the toy alone.
    std::string model_path = "none";
    std::string data_dir = "data";
    std::size_t real_sequences = 4;
    TrainingOptions train{200, 16, 3e-3f, 20, 25, 4, 1};
};
Result run_importance(const ImportanceOptions& options, const ProgressFn& progress = {});

// §1.1/§5.1: a recurrent network forgets the start of long sequences; attention reaches any
// distance in one step. For each distance k in `distances`: k_back (target[t] = x(t − k)) at
// length k + `extra`, trained separately for an LSTM and a Transformer of about the same number of
// parameters; held-out accuracy vs distance, and the time per training step.
struct LstmOptions {
    std::vector<std::size_t> distances{2, 20, 100, 500};  // the first short enough for the LSTM to learn
    std::size_t extra = 16;        // scored positions: t = k .. k + extra - 1
    std::size_t vocab = 8;
    std::size_t d_model = 32;      // one Transformer block (rope), 2 heads, ff 4 x d_model
    std::size_t lstm_width = 0;    // one LSTM layer; 0 = the width whose parameter count is closest to the Transformer's
    TrainingOptions train{500, 8, 1e-2f, 10, 25, 2, 1};
};
Result run_lstm(const LstmOptions& options, const ProgressFn& progress = {});

// §7.2: on strongly periodic series a tuned LSTM is sometimes steadier than attention. The series
// task (sums of sines with periods `periods`, trend, noise, drift) forecast `horizon` steps from
// `context`: a Transformer with sinusoidal positions, the same with the time-aware encoding (pe
// time), and one LSTM layer of about the Transformers' parameter count, each trained from
// `seeds` seeds (weights and batches); held-out MSE and MAE per seed, their mean and spread, and
// the seasonal-naive baseline on the same batches. "Steadier" is measured as the standard
// deviation of the held-out MSE across seeds.
struct SeriesExperimentOptions {
    std::size_t context = 48;
    std::size_t horizon = 12;
    std::vector<std::size_t> periods{12, 24};
    float noise = 0.1f;
    float drift = 0.0f;
    std::size_t d_model = 32;      // Transformer width, 4 heads, ff 4 x d_model
    std::size_t layers = 2;        // Transformer blocks
    std::size_t lstm_width = 0;    // one LSTM layer; 0 = the width whose parameter count is closest to the Transformer's
    std::size_t seeds = 3;         // runs per model: seeds train.seed, train.seed + 1, ...
    TrainingOptions train{600, 16, 3e-3f, 30, 50, 8, 1};
};
Result run_series(const SeriesExperimentOptions& options, const ProgressFn& progress = {});
// §6.3: the same decoder trained from a bad initialisation (scores multiplied by `score_scale`
// instead of 1/sqrt(D)) at a high learning rate, three ways: attention in fp32; in fp16 with its
// softmax in fp16 (SoftmaxPrecision::same); in fp16 with its softmax in float32. Table "final":
// the step each run broke (its loss or gradient turned non-finite) or "survived", its largest
// attention score and the first curve point past ln 65504 = 11.09. Series "max_score": the largest
// |scaled score| of each interval, next to "train_loss".
struct Fp16Options {
    std::string task = "copy";
    std::size_t length = 8;
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t num_layers = 1;
    float score_scale = 0.5f;     // the bad init: twice 1/sqrt(D) = 0.25 (D = 16)
    bool stable_softmax = false;  // the article's naive exp(s) / Σ exp(s)
    TrainingOptions train{300, 16, 3e-3f, 0, 10, 4, 1};  // no warm-up: the scores grow from the first step
};
Result run_fp16(const Fp16Options& options, const ProgressFn& progress = {});

// §5.3: attention variants as the sequence grows. Each variant (full; window: a sliding window
// of `window` keys; block_sparse: BigBird blocks of `block_size`; linear: kernelised, O(n)) is
// counted from its mechanism at every length: the query-key pairs it scores (causal: key <=
// query) and the floats of attention it holds per head (its weights, or linear attention's D x D
// state), whatever code path the engine takes. At each n in `lengths` a one-block decoder is
// trained on k_back with k = n / 2 (a relation longer than the window), its held-out accuracy;
// at each n in `timed_lengths` one causal self-attention layer (B = batch, T = S = n, d_model)
// is timed forward and backward (best of `repeats`).
struct VariantsOptions {
    std::vector<std::size_t> lengths{64, 128, 256};          // trained (k_back accuracy) and counted
    std::vector<std::size_t> timed_lengths{512, 1024, 2048};  // timed (one layer's forward and backward) and counted
    std::vector<std::string> variants{"full", "window", "block_sparse", "linear"};
    std::size_t window = 16;      // W of the window variant
    std::size_t block_size = 16;  // b of the block_sparse variant (1 window block, 1 global, 1 random)
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t batch = 4;        // of the timed layer
    std::size_t repeats = 3;
    TrainingOptions train{150, 8, 1e-2f, 10, 25, 2, 1};
};
Result run_variants(const VariantsOptions& options, const ProgressFn& progress = {});

// §9.1: the same decoder trained with each attention normaliser (attention/normalizer.hpp):
// softmax, sigmoid σ(s − ln n_i), relu max(s, 0) / n_i. Series "train_loss"; table "final":
// held-out loss and accuracy, and the mean entropy (nats) of the attention rows of the trained
// model on held-out sequences, each row's weights divided by their sum (sigmoid and relu rows do
// not sum to 1), against ln of the keys it sees.
struct NormalizerOptions {
    std::string task = "reverse";
    std::size_t length = 6;
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t num_layers = 2;
    std::vector<std::string> normalizers{"softmax", "sigmoid", "relu"};
    std::size_t sequences = 8;  // held-out sequences for the entropy
    TrainingOptions train{300, 16, 3e-3f, 20, 25, 4, 1};
};
Result run_normalizer(const NormalizerOptions& options, const ProgressFn& progress = {});

// §2.1: separate W_Q and W_K against one tied matrix (ModelConfig::tie_qk). With Q = K the
// scores q_i·k_j = (W x_i)·(W x_j) form a Gram matrix: symmetric, and no score of a row exceeds
// the larger of its two diagonal entries (Cauchy-Schwarz), so a query cannot prefer another key
// over itself unless that key's vector is longer. k_back (target[t] = x(t − k)) asks exactly for
// that: attend k positions back, not to yourself. Table "final": held-out accuracy, and on
// held-out sequences in the last block the mean weight on the query's own position and on
// position t − k.
struct TieQkOptions {
    std::string task = "k_back";
    std::size_t length = 16;
    std::size_t k = 3;
    std::size_t d_model = 32;
    std::size_t num_heads = 2;
    std::size_t num_layers = 1;
    std::size_t sequences = 8;  // held-out sequences for the weights
    TrainingOptions train{300, 16, 3e-3f, 20, 25, 4, 1};
};
Result run_tie_qk(const TieQkOptions& options, const ProgressFn& progress = {});

// §3.2: the heads of the shipped text models (models/: tang, brown) scored by the head detectors
// (interp/detectors.hpp) and the patterns of their text (tang: the same column of the paired
// line, the previous rhyme position; brown: three part-of-speech pairs from the Brown tags) on
// a fixed held-out text. A head's label is its best score when that is at least `threshold`;
// table "counts": how many heads of each label; "samples: evidence": each labelled head's
// strongest examples (query, key, weight, in context).
struct HeadsRealOptions {
    std::string models_dir = "models";             // the shipped checkpoints: <dir>/<name>.safetensors
    std::string data_dir = "data";                 // splits/ and node_modules/ (scripts/fetch_data.sh)
    std::vector<std::string> models{"tang", "brown"};
    std::size_t poems = 16;                        // tang: held-out poems (at most 21)
    std::size_t windows = 8;                       // brown: windows of the context length (at most 16)
    float threshold = 0.4f;                        // a label needs at least this share
    std::size_t examples = 3;                      // evidence rows per labelled head
};
Result run_heads_real(const HeadsRealOptions& options, const ProgressFn& progress = {});
// §5.2/§3.2: induction heads (Olsson et al. 2022) form in a sudden phase change. Attention-only
// decoders (no feed-forward: ModelConfig::attention_only), one per depth in `layers`, trained as
// language models (a target at every position) on random repeating sequences: n tokens drawn
// uniformly from 0..vocab-1, n itself drawn per sequence in [length/4, length/2], then the same
// n again and again up to `length` tokens. The period varies, so no fixed offset predicts the
// repeat: only a head that finds the previous occurrence of the current token and reads the
// token after it (an induction head, which needs a previous-token head in an earlier layer)
// does. At step 0 and every log_every steps, on held-out sequences
// interp::random_repeat(length/2, vocab, seed): the mean loss of the first half's predictions
// (tokens 1..N-1, nothing to copy) and of the repeated half's (tokens N+1..2N-1; token N, the
// first of the repeat, is left out: nothing before it says the sequence starts over), and the
// best induction score over heads (interp detectors, the score of `attnlab heads`, averaged over
// the sequences); eval_batches x batch_size sequences, the same at every point. Series
// "repeated_half_loss", "first_half_loss", "induction_score", "train_loss" (x: steps from 0);
// tables "phase_change" (find_induction_phase_change of each run) and "final". Each measurement
// is also a progress point's values (first_half_loss, repeated_half_loss, induction_score, and
// phase_start, phase_end once the curves so far show a phase change), so a page draws it live.
struct InductionOptions {
    std::size_t vocab = 32;
    std::size_t length = 32;               // T of the training sequences; held-out N = T/2
    std::vector<std::size_t> layers{2, 1};  // depths to train, in this order
    std::size_t d_model = 64;
    std::size_t num_heads = 4;
    float window = 0.25f;                  // the largest share of the steps a sharp drop may take
    TrainingOptions train{1000, 32, 1e-2f, 20, 20, 1, 1};  // lr: constant after the warm-up
};
Result run_induction(const InductionOptions& options, const ProgressFn& progress = {});

// The phase change of one run, found from its logged curves (steps ascending, from 0). The model
// copies when the repeated half ends at most half the first half's loss (repeated[last] <=
// first[last] / 2) and below where it began. The window is the steepest stretch: the two points
// at most window_share x span steps apart (span: the run's steps) between which the repeated-half
// loss falls most, trimmed to where it falls (from the last point within 10% of that fall of its
// top to the first within 10% of its bottom). It is sharp when that fall is at least half of the
// whole run's (repeated[0] - repeated[last]), and the best induction score jumped when it rose by
// at least 0.2 from the window's start to its end. `found` needs all three.
struct InductionPhaseChange {
    bool copies = false, sharp = false, score_jumped = false, found = false;
    double start = 0, end = 0;                    // steps of the window (when copies)
    double loss_before = 0, loss_after = 0;       // repeated-half loss before the window, at its end
    double score_before = 0, score_after = 0;     // best induction score there
};
// ConfigError when the four lists differ in length or are empty.
InductionPhaseChange find_induction_phase_change(const std::vector<double>& steps, const std::vector<double>& first,
                                                 const std::vector<double>& repeated, const std::vector<double>& score,
                                                 double window_share, double span);

}  // namespace attnlab::experiments
