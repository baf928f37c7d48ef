// The JavaScript `Trainer` class: attnlab::Trainer on a Model and a Task.
//
//   const trainer = new lab.Trainer(model, task, { optimizer: 'adamw', lr: 3e-3, batchSize: 32,
//                                                  warmupSteps: 100, totalSteps: 3000, clipNorm: 1, seed: 1 });
//   const m = trainer.step(10);   // runs 10 steps -> metrics of the last one (m.step === 10), m.losses: all 10
//   trainer.evaluate(4);          // { loss, accuracy, count } on 4 held-out batches
//   (a series task: loss is the MSE, accuracy NaN; mae, baselineMse, baselineMae beside them)
//
// Options (TrainerOptions, include/attnlab/train/trainer.hpp): optimizer 'adamw' | 'sgd', lr, minLr,
// weightDecay, beta1, beta2, momentum, batchSize, warmupSteps, totalSteps (0 = constant lr after
// warm-up), clipNorm (0 = off), seed (of the batches), trackAttention.
// Lifetimes: the trainer shares ownership of the model and the task, so either JavaScript object
// may be deleted first; the model keeps training (and model.attentionMaps sees the same weights).
#include <memory>
#include <string>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/train/trainer.hpp"
#include "convert.hpp"
#include "model.hpp"
#include "task.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

// One JavaScript call blocks its thread until it returns, so a call's work is bounded: a longer
// run is more calls (which also lets a page report progress between them).
constexpr std::size_t kMaxStepsPerCall = 1000000;
constexpr std::size_t kMaxEvalBatchesPerCall = 100000;

TrainerOptions trainer_options_from_js(const val& options) {
    const JsOptions opt(options, {"optimizer", "lr", "minLr", "weightDecay", "beta1", "beta2", "momentum", "batchSize",
                                  "warmupSteps", "totalSteps", "clipNorm", "seed", "trackAttention", "lossScale"},
                        "new Trainer");
    TrainerOptions o;
    o.optimizer = opt.string("optimizer", o.optimizer);
    if (o.optimizer != "adamw" && o.optimizer != "sgd") {
        fail<ConfigError>("new Trainer: option 'optimizer' must be 'adamw' or 'sgd', got '", o.optimizer, "'");
    }
    o.lr = opt.float32("lr", o.lr);
    o.min_lr = opt.float32("minLr", o.min_lr);
    o.weight_decay = opt.float32("weightDecay", o.weight_decay);
    o.beta1 = opt.float32("beta1", o.beta1);
    o.beta2 = opt.float32("beta2", o.beta2);
    o.momentum = opt.float32("momentum", o.momentum);
    o.batch_size = opt.size("batchSize", o.batch_size);
    o.warmup_steps = opt.size("warmupSteps", o.warmup_steps);
    o.total_steps = opt.size("totalSteps", o.total_steps);
    o.clip_norm = opt.float32("clipNorm", o.clip_norm);
    o.seed = opt.size("seed", o.seed);
    o.track_attention = opt.boolean("trackAttention", o.track_attention);
    if (!opt.is_null("lossScale")) {
        const val scale = opt.get("lossScale");
        if (scale.isNumber()) o.loss_scale = LossScaling::parse(format_field(static_cast<float>(scale.as<double>())));
        else if (scale.isString()) o.loss_scale = LossScaling::parse(scale.as<std::string>());
        else fail<ConfigError>("new Trainer: option 'lossScale' must be a positive number or 'dynamic'");
    }
    return o;
}

val options_to_js(const TrainerOptions& o) {
    val out = val::object();
    out.set("optimizer", o.optimizer);
    out.set("lr", o.lr);
    out.set("minLr", o.min_lr);
    out.set("weightDecay", o.weight_decay);
    out.set("beta1", o.beta1);
    out.set("beta2", o.beta2);
    out.set("momentum", o.momentum);
    out.set("batchSize", o.batch_size);
    out.set("warmupSteps", o.warmup_steps);
    out.set("totalSteps", o.total_steps);
    out.set("clipNorm", o.clip_norm);
    out.set("seed", static_cast<double>(o.seed));
    out.set("trackAttention", o.track_attention);
    if (o.loss_scale.dynamic) out.set("lossScale", val("dynamic"));
    else out.set("lossScale", o.loss_scale.scale);
    return out;
}

}  // namespace

class TrainerBinding {
public:
    static TrainerBinding* create(ModelBinding& model, TaskBinding& task) { return create(model, task, val::undefined()); }

    static TrainerBinding* create(ModelBinding& model, TaskBinding& task, val options) {
        return guarded("new Trainer", [&] {
            auto binding = std::make_unique<TrainerBinding>();
            binding->model_ = model.shared();
            binding->task_ = task.shared();
            const TrainerOptions o = trainer_options_from_js(options);
            // Every step holds (B, T, C) activations per block: refuse a batch that cannot fit
            // now rather than at the first step.
            require_allocatable({o.batch_size, binding->task_->seq_len(), binding->model_->config().d_model},
                                "new Trainer", "the (B, T, C) activations");
            binding->trainer_ = std::make_unique<Trainer>(*binding->model_, *binding->task_, o);
            return binding.release();
        }, options);
    }

    // Runs n >= 1 steps (default 1) and returns the metrics of the last: step is the number of
    // steps done so far (1 after the first), ms the time of that step, totalMs of all n, losses
    // the loss of each of the n steps.
    val step() { return guarded("Trainer.step", [&] { return run_steps(1); }); }
    val step(val n) {
        return guarded("Trainer.step", [&] { return run_steps(size_from_js(n, "Trainer.step", "the step count")); }, n);
    }

    val evaluate(val batches) {
        return guarded("Trainer.evaluate", [&] { return evaluate_of(batches, nullptr); }, batches);
    }
    val evaluate(val batches, val seed) {
        return guarded("Trainer.evaluate", [&] { return evaluate_of(batches, &seed); }, batches, seed);
    }

    val steps_done() const { return val(static_cast<double>(trainer_->steps_done())); }
    val lr_at(val step) const {
        return guarded("Trainer.lrAt", [&] { return val(trainer_->lr_at(size_from_js(step, "Trainer.lrAt", "step"))); },
                       step);
    }
    val options() const {
        return guarded("Trainer.options", [&] { return options_to_js(trainer_->options()); });
    }

private:
    val run_steps(std::size_t n) {
        if (n == 0) fail<ConfigError>("Trainer.step: the step count must be at least 1, got 0");
        if (n > kMaxStepsPerCall) {
            fail<ConfigError>("Trainer.step: the step count must be at most ", kMaxStepsPerCall,
                              " per call (call step again to continue), got ", n);
        }
        std::vector<float> losses;
        losses.reserve(n);
        StepMetrics m;
        double total_ms = 0;
        std::size_t skipped = 0;
        for (std::size_t i = 0; i < n; ++i) {
            trainer_->step(m);
            losses.push_back(m.loss);
            total_ms += m.ms;
            skipped += m.skipped;
        }
        val out = val::object();
        out.set("step", static_cast<double>(m.step + 1));
        out.set("loss", m.loss);
        out.set("accuracy", m.accuracy);
        out.set("mae", m.mae);                   // regression (series) only; NaN elsewhere
        out.set("baselineMse", m.baseline_mse);  // the seasonal-naive forecast of the same batch
        out.set("baselineMae", m.baseline_mae);
        out.set("gradNorm", m.grad_norm);
        out.set("maxScore", m.max_score);
        out.set("lr", m.lr);
        out.set("ms", m.ms);
        out.set("totalMs", total_ms);
        out.set("lossScale", m.loss_scale);                     // the last step's
        out.set("skipped", static_cast<double>(skipped));       // steps skipped on overflow (dynamic scaling)
        out.set("losses", tensor_to_js(losses.data(), {losses.size()})["data"]);
        out.set("headEntropy", tensor_to_js(m.head_entropy.data(), {m.head_entropy.size()})["data"]);
        return out;
    }

    val evaluate_of(const val& batches, const val* seed) {
        const std::size_t n = size_from_js(batches, "Trainer.evaluate", "batches");
        if (n > kMaxEvalBatchesPerCall) {
            fail<ConfigError>("Trainer.evaluate: batches must be at most ", kMaxEvalBatchesPerCall, ", got ", n);
        }
        const EvalResult r = seed ? trainer_->evaluate(n, size_from_js(*seed, "Trainer.evaluate", "seed"))
                                  : trainer_->evaluate(n);
        val out = val::object();
        out.set("loss", r.loss);
        out.set("accuracy", r.accuracy);
        out.set("count", static_cast<double>(r.count));
        out.set("mae", r.mae);                   // regression (series) only; NaN elsewhere
        out.set("baselineMse", r.baseline_mse);
        out.set("baselineMae", r.baseline_mae);
        return out;
    }

    // Declared before trainer_, which refers to them: destroyed after it.
    std::shared_ptr<Model> model_;
    std::shared_ptr<const Task> task_;
    std::unique_ptr<Trainer> trainer_;
};

EMSCRIPTEN_BINDINGS(attnlab_trainer) {
    using emscripten::allow_raw_pointers;
    using emscripten::select_overload;
    using T = TrainerBinding;
    emscripten::class_<T>("Trainer")
        .constructor(select_overload<T*(ModelBinding&, TaskBinding&)>(&T::create), allow_raw_pointers())
        .constructor(select_overload<T*(ModelBinding&, TaskBinding&, val)>(&T::create), allow_raw_pointers())
        .function("step", select_overload<val()>(&T::step))
        .function("step", select_overload<val(val)>(&T::step))
        .function("evaluate", select_overload<val(val)>(&T::evaluate))
        .function("evaluate", select_overload<val(val, val)>(&T::evaluate))
        .function("stepsDone", &T::steps_done)
        .function("lrAt", &T::lr_at)
        .function("options", &T::options);
}

}  // namespace attnlab::web
