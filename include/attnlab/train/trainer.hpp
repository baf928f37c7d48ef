// attnlab/train/trainer.hpp: the training loop — sample a batch, forward, backward, clip, step.
//
// What it is for: training a Model on a Task with the article's switches, one optimisation step
// per call, returning the metrics the CLI's progress bar and the page's curves show (loss,
// accuracy, gradient norm, the largest attention score, per-head entropy, wall time). A
// non-finite loss or gradient stops training with a ValueError naming the step, instead of
// training on garbage. Constructing one calls keep_freed_memory() (train/memory.hpp). Not for:
// data loading from disk (tasks are generated) or distributed training.
//
//   attnlab::Model model(config, 1);
//   auto task = attnlab::make_task("reverse", {});
//   attnlab::TrainerOptions options; options.lr = 3e-3f; options.total_steps = 3000;
//   attnlab::Trainer trainer(model, *task, options);
//   attnlab::StepMetrics m;
//   for (int i = 0; i < 3000; ++i) trainer.step(m);  // allocation-free after the first steps
//   attnlab::EvalResult e = trainer.evaluate(8);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/train/metrics.hpp"
#include "attnlab/train/optimizer.hpp"
#include "attnlab/train/schedule.hpp"
#include "attnlab/train/tasks.hpp"

namespace attnlab {

// Loss scaling for low-precision training (Micikevicius et al. 2018, "Mixed Precision
// Training"): the loss's gradient is multiplied by `scale` before backward, so the small
// gradients the attention layers store in fp16 (model/config.hpp precision) do not flush to
// zero, and the parameter gradients are divided by it again before clipping and the update.
// Static: a fixed factor; non-finite gradients then stop training like any other. Dynamic
// (PyTorch's GradScaler): starts at `scale`; a step whose gradients overflow is skipped (no
// update) and the scale halves; after `growth_interval` clean steps in a row it doubles.
struct LossScaling {
    bool dynamic = false;
    float scale = 1.0f;                  // static: the factor (1 = off); dynamic: the first factor
    std::size_t growth_interval = 100;   // dynamic: clean steps before the scale doubles

    // "N" (a positive finite number: static) or "dynamic" (starting at 65536); ConfigError
    // naming the text otherwise.
    static LossScaling parse(const std::string& text);
    // "N" or "dynamic"
    std::string to_string() const;
};

struct TrainerOptions {
    std::string optimizer = "adamw";  // "adamw" or "sgd"
    float lr = 3e-3f;                 // peak learning rate
    float min_lr = 0.0f;              // cosine schedule: final learning rate
    float weight_decay = 0.01f;       // adamw: decoupled, on matrices only (nanoGPT's rule)
    float beta1 = 0.9f, beta2 = 0.98f;  // adamw
    float momentum = 0.9f;            // sgd
    std::size_t batch_size = 32;      // sequences per step
    std::size_t warmup_steps = 100;   // linear warm-up
    std::size_t total_steps = 0;      // > 0: cosine decay to min_lr over total_steps; 0: constant
    float clip_norm = 1.0f;           // clip the global gradient norm to this; 0 = no clipping
    std::uint64_t seed = 1;           // seeds the batches
    bool track_attention = true;      // record max score and head entropy each step (a small cost)
    LossScaling loss_scale;           // off (static 1) unless asked for

    // Throws ConfigError naming the bad value.
    void validate() const;
};

struct EvalResult {
    float loss = 0.0f;        // mean cross-entropy over all counted targets (regression: the MSE)
    float accuracy = 0.0f;    // fraction of counted targets predicted exactly (regression: NaN)
    std::size_t count = 0;    // counted targets (regression: forecast values, B·horizon per batch)
    // Regression tasks: the model's MAE, and the seasonal-naive baseline's MSE and MAE on the same
    // batches (Batch::baseline), so a reader sees whether the model beats it. NaN for other tasks.
    float mae = kNoMetric;
    float baseline_mse = kNoMetric;
    float baseline_mae = kNoMetric;
};

// Loss and accuracy (regression: MSE, MAE and the baseline's) of `model` over `batches` batches of `batch_size` examples drawn from `task`
// with Rng(seed), straight through Model::evaluate (no training, no check that the task's length
// is the trained one: a model's own ValueError, e.g. positions beyond a learned table, comes
// through). Trainer::evaluate and the experiments both use it.
EvalResult evaluate_model(Model& model, const Task& task, std::size_t batches, std::size_t batch_size,
                          std::uint64_t seed);

// The loss of a training step was not finite: training stops there. Beside its message it
// carries the facts the message states, so a caller can say them in its own words (the
// experiments' notes render them by template, and the page in Chinese).
class NonFiniteLoss : public ValueError {
public:
    NonFiniteLoss(const std::string& message, std::string loss_text, std::size_t at_step, std::string attention_precision,
                  std::string softmax, bool naive)
        : ValueError(message), loss(std::move(loss_text)), step(at_step), precision(std::move(attention_precision)),
          softmax_precision(std::move(softmax)), naive_softmax(naive) {}
    std::string loss;               // as the message prints it: "nan", "-nan", "inf"
    std::size_t step = 0;           // the step whose loss it was
    std::string precision;          // the emulated attention precision ("fp16"); empty: plain fp32
    std::string softmax_precision;  // the softmax's precision when `precision` is set
    bool naive_softmax = false;     // the softmax skipped its max subtraction (when `precision` is set)
};

class Trainer {
public:
    // Checks that the model fits the task (kind, vocabulary, classes, length for learned
    // positions) and throws ConfigError naming the mismatch. model and task must outlive it.
    Trainer(Model& model, const Task& task, const TrainerOptions& options);

    // One optimisation step. Throws ValueError "... at step N ..." on a non-finite loss or
    // gradient (with dynamic loss scaling a non-finite gradient skips the step instead); the
    // parameters are then left as they were before the step.
    StepMetrics step();
    // The same step, its metrics written into `metrics` (head_entropy reuses its capacity): after
    // the first steps, sampling, forward, backward, clipping and the update allocate nothing.
    void step(StepMetrics& metrics);
    // Loss and accuracy over `batches` batches from a fixed evaluation seed (independent of the
    // training stream, so two evaluations are comparable).
    EvalResult evaluate(std::size_t batches, std::uint64_t seed = 0xE7A1);

    std::size_t steps_done() const { return step_; }
    // The batch of the last step, kept when that step threw: with the parameters left as they
    // were, model().trace_layer(batch().tokens, layer) replays the forward that failed.
    const Batch& batch() const { return batch_; }
    float loss_scale() const { return scale_; }  // the scale the next step uses
    float lr_at(std::size_t step) const { return schedule_->lr_at(step); }
    const TrainerOptions& options() const { return options_; }
    Model& model() { return model_; }
    const Task& task() const { return task_; }

private:
    // m.max_score and m.head_entropy from the step's attention statistics (track_attention).
    void record_attention(StepMetrics& m) const;
    // The optimiser, schedule and parameter views, once the model fits the task.
    void finish_setup();
    // A step's loss and its metrics, for either kind of loss (cross-entropy, MSE).
    struct LossOfStep {
        float loss = 0.0f, accuracy = kNoMetric, mae = kNoMetric, baseline_mse = kNoMetric, baseline_mae = kNoMetric;
        void write(StepMetrics& m) const;  // loss, accuracy, mae, baseline_*
    };
    // Forward, loss and backward of batch_: cross-entropy, or for a regression task the MSE with
    // the seasonal-naive baseline of the same batch.
    LossOfStep loss_and_backward_of_step();

    Model& model_;
    const Task& task_;
    TrainerOptions options_;
    std::unique_ptr<Optimizer> optimizer_;
    std::unique_ptr<Schedule> schedule_;
    Rng data_rng_;
    std::size_t step_ = 0;
    float scale_ = 1.0f;          // the current loss scale (LossScaling)
    std::size_t clean_steps_ = 0; // dynamic loss scaling: finite-gradient steps since the last change
    Batch batch_;  // the step's batch, sampled into the same buffers every step
    // Views of the model's parameters and gradients, built once: the model's tensors keep their
    // storage for its lifetime (load_parameters and setParameter copy into them).
    std::vector<ParameterView> params_, grads_;
};

}  // namespace attnlab
