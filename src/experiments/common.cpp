#include "common.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <utility>

#include "attnlab/core/error.hpp"

namespace attnlab::experiments {

void TrainingOptions::validate(const char* where) const {
    if (steps == 0) fail<ConfigError>(where, ": steps must be positive, got 0");
    if (batch_size == 0) fail<ConfigError>(where, ": batch_size must be positive, got 0");
    if (log_every == 0) fail<ConfigError>(where, ": log_every must be positive, got 0");
    if (eval_batches == 0) fail<ConfigError>(where, ": eval_batches must be positive, got 0");
    if (!(lr > 0.0f) || !std::isfinite(lr)) fail<ConfigError>(where, ": lr must be positive and finite, got ", lr);
    if (warmup_steps > steps) {
        fail<ConfigError>(where, ": warmup_steps (", warmup_steps, ") exceeds steps (", steps, ")");
    }
}

namespace detail {

TrainerOptions trainer_options(const TrainingOptions& options) {
    TrainerOptions t;
    t.lr = options.lr;
    t.min_lr = options.lr / 10.0f;
    t.batch_size = options.batch_size;
    t.warmup_steps = options.warmup_steps;
    t.total_steps = options.steps;
    t.seed = options.seed;
    t.track_attention = false;  // the experiments measure attention themselves where they need it
    return t;
}

ModelConfig decoder_config(const Task& task, std::size_t d_model, std::size_t num_heads, std::size_t num_layers) {
    ModelConfig c;
    c.kind = ModelKind::decoder;
    c.vocab_size = task.vocab_size();
    c.max_len = task.seq_len();
    c.d_model = d_model;
    c.num_heads = num_heads;
    c.num_layers = num_layers;
    c.ff_dim = 4 * d_model;
    c.positional = PositionalKind::rope;
    return c;
}

namespace {
// A NonFiniteLoss as the common template that renders to its message word for word.
Message nonfinite_message(const NonFiniteLoss& e) {
    Message m{e.precision.empty() ? "loss_not_finite" : e.naive_softmax ? "loss_not_finite_naive" : "loss_not_finite_precision",
              {{"loss", e.loss}, {"step", std::to_string(e.step)}}};
    if (!e.precision.empty()) {
        m.values.emplace_back("precision", e.precision);
        m.values.emplace_back("softmax", e.softmax_precision);
    }
    return m;
}
}  // namespace

RunOutcome train_run(Model& model, const Task& task, const TrainerOptions& trainer_opts, const TrainingOptions& train,
                     const RunLabel& label, const ProgressFn& progress) {
    RunOutcome out;
    for (std::size_t s = train.log_every; s < train.steps + train.log_every; s += train.log_every) {
        out.steps.push_back(static_cast<double>(std::min(s, train.steps)));
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out.loss.assign(out.steps.size(), nan);
    out.accuracy.assign(out.steps.size(), nan);
    out.max_score.assign(out.steps.size(), nan);

    Trainer trainer(model, task, trainer_opts);
    double loss_sum = 0.0, acc_sum = 0.0, score_max = 0.0;
    std::size_t in_interval = 0, point = 0;
    const auto start = std::chrono::steady_clock::now();
    StepMetrics m;  // reused: the step writes into it without allocating
    for (std::size_t step = 0; step < train.steps; ++step) {
        try {
            trainer.step(m);
        } catch (const ValueError& e) {
            out.failed_step = step;
            out.error = e.what();
            if (const auto* loss = dynamic_cast<const NonFiniteLoss*>(&e)) out.stop = nonfinite_message(*loss);
            out.failed_tokens = trainer.batch().tokens;
            // The largest score of the steps since the last point: what led up to the failure.
            if (in_interval > 0) out.max_score[point] = score_max;
            break;
        }
        if (step == 0) {
            out.first_loss = m.loss;
            out.first_grad_norm = m.grad_norm;
        }
        out.max_grad_norm = std::max(out.max_grad_norm, m.grad_norm);
        out.steps_done = step + 1;
        loss_sum += m.loss;
        acc_sum += m.accuracy;
        score_max = std::max(score_max, static_cast<double>(m.max_score));
        ++in_interval;
        if (static_cast<double>(out.steps_done) == out.steps[point]) {
            out.loss[point] = loss_sum / static_cast<double>(in_interval);
            out.accuracy[point] = acc_sum / static_cast<double>(in_interval);
            out.max_score[point] = score_max;
            loss_sum = acc_sum = score_max = 0.0;
            in_interval = 0;
            ++point;
        }
        if (progress) progress({label.name, label.index, label.count, out.steps_done, train.steps, m.loss});
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

EvalResult evaluate(Model& model, const Task& task, std::size_t batches, std::size_t batch_size, std::uint64_t seed) {
    return evaluate_model(model, task, batches, batch_size, seed);
}

std::unique_ptr<Task> sequence_task(const char* where, const std::string& name, std::size_t length) {
    TaskOptions options;
    options.length = length;
    auto task = make_task(name, options);
    if (task->kind() != TaskKind::sequence) fail<ConfigError>(where, ": task '", name, "' is not a sequence task");
    return task;
}

double uniform_loss(std::size_t classes) { return std::log(static_cast<double>(classes)); }

std::string format(const char* fmt, ...) {
    char buf[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    return buf;
}

std::string number(double value, int decimals) {
    if (std::isnan(value)) return "nan";
    return format("%.*f", decimals, value);
}

std::string percent(double fraction) { return std::isnan(fraction) ? "nan" : format("%.1f%%", 100.0 * fraction); }

void conclude(Result& result, Message message, const MessageTemplates& templates) {
    result.conclusion = render_message(message, templates);
    result.conclusion_message = std::move(message);
}

void set_timing(Result& result, Message message, const MessageTemplates& templates) {
    result.timing = render_message(message, templates);
    result.timing_message = std::move(message);
}

const MessageTemplates& common_messages() {
    static const MessageTemplates m = {
        {"stopped", "{run} stopped: {error}"},
        // The trainer's NonFiniteLoss, word for word as its message (train/trainer.cpp).
        {"loss_not_finite", "Trainer: the loss is {loss} at step {step}; training stopped (try a lower learning rate, "
                            "clipping, or scaling on)"},
        {"loss_not_finite_precision", "Trainer: the loss is {loss} at step {step}; training stopped (try a lower "
                                      "learning rate, clipping, or scaling on; attention runs in {precision} with "
                                      "softmax {softmax}: a softmax in fp32 (stable) keeps large scores finite)"},
        {"loss_not_finite_naive", "Trainer: the loss is {loss} at step {step}; training stopped (try a lower learning "
                                  "rate, clipping, or scaling on; attention runs in {precision} with softmax {softmax}, "
                                  "naive: a softmax in fp32 (stable) keeps large scores finite)"},
        {"run_error", "{run}: {error}"},
        {"training_stopped", "training stopped: {error}"},
    };
    return m;
}

std::string phrase(Result& result, Message message, const MessageTemplates& templates) {
    MessageTemplates all = templates;
    all.insert(all.end(), common_messages().begin(), common_messages().end());
    std::string text = render_message(message, all);
    result.phrases.emplace_back(text, std::move(message));
    return text;
}

void note(Result& result, Message message, const MessageTemplates& templates) {
    result.notes.push_back(phrase(result, std::move(message), templates));
}

MessageValue error_value(const RunOutcome& run) {
    if (run.stop) return MessageValue(*run.stop);
    return MessageValue(run.error);
}

void stopped_note(Result& result, const std::string& run, const RunOutcome& outcome) {
    note(result, {"stopped", {{"run", run}, {"error", error_value(outcome)}}});
}

Series loss_series(const std::vector<std::string>& names, const std::vector<RunOutcome>& runs) {
    Series s;
    s.name = "train_loss";
    s.x_label = "step";
    s.y_label = "mean training loss over the steps since the previous point";
    if (!runs.empty()) s.x = runs.front().steps;
    for (std::size_t i = 0; i < runs.size(); ++i) s.lines.push_back({names[i], runs[i].loss});
    return s;
}

void add_training_config(Result& result, const TrainingOptions& train) {
    result.config.emplace_back("steps", std::to_string(train.steps));
    result.config.emplace_back("batch", std::to_string(train.batch_size));
    result.config.emplace_back("lr", format("%g (AdamW, cosine to lr/10)", static_cast<double>(train.lr)));
    result.config.emplace_back("warmup", std::to_string(train.warmup_steps));
    result.config.emplace_back("seed", std::to_string(train.seed));
}

namespace {
std::string sizes_text(const std::vector<std::size_t>& values) {
    std::string s;
    for (std::size_t v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
    return s;
}
}  // namespace

Parameter integer_parameter(const std::string& name, std::size_t value, double min, double max, const std::string& help) {
    return {name, ParameterKind::integer, std::to_string(value), min, max, {}, help};
}
Parameter number_parameter(const std::string& name, float value, double min, double max, const std::string& help) {
    return {name, ParameterKind::number, format("%g", static_cast<double>(value)), min, max, {}, help};
}
Parameter text_parameter(const std::string& name, const std::string& value, std::vector<std::string> choices,
                         const std::string& help) {
    return {name, ParameterKind::text, value, 0, 0, std::move(choices), help};
}
Parameter integers_parameter(const std::string& name, const std::vector<std::size_t>& value, double min, double max,
                             const std::string& help) {
    return {name, ParameterKind::integers, sizes_text(value), min, max, {}, help};
}
Parameter texts_parameter(const std::string& name, const std::vector<std::string>& value,
                          std::vector<std::string> choices, const std::string& help) {
    std::string s;
    for (const auto& v : value) s += (s.empty() ? "" : ",") + v;
    return {name, ParameterKind::texts, s, 0, 0, std::move(choices), help};
}

std::vector<std::string> sequence_task_names() {
    std::vector<std::string> names;
    for (const auto& name : task_names()) {
        if (make_task(name)->kind() == TaskKind::sequence) names.push_back(name);
    }
    return names;
}

std::vector<std::string> token_positional_names() {
    std::vector<std::string> out;
    for (const auto& v : choice_values<PositionalKind>()) {
        if (v.value != PositionalKind::time) out.emplace_back(v.name);
    }
    return out;
}

void add_training_parameters(std::vector<Parameter>& p, const TrainingOptions& t) {
    p.push_back(integer_parameter("steps", t.steps, 1, 100000, "optimisation steps per run"));
    p.push_back(integer_parameter("batch", t.batch_size, 1, 1024, "sequences per step"));
    p.push_back(number_parameter("lr", t.lr, 1e-7, 10, "peak learning rate (AdamW, cosine decay to lr/10)"));
    p.push_back(integer_parameter("warmup", t.warmup_steps, 0, 100000, "linear warm-up steps (at most steps)"));
    p.push_back(integer_parameter("log-every", t.log_every, 1, 100000, "one curve point every N steps"));
    p.push_back(integer_parameter("eval-batches", t.eval_batches, 1, 1000, "held-out batches of the final evaluation"));
    p.push_back(integer_parameter("seed", static_cast<std::size_t>(t.seed), 0, 4294967295.0,
                                  "seed of the weights and the batches (the same for every run)"));
}

TrainingOptions training_from(const Values& v) {
    TrainingOptions t;
    t.steps = v.size("steps");
    t.batch_size = v.size("batch");
    t.lr = v.number("lr");
    t.warmup_steps = v.size("warmup");
    t.log_every = v.size("log-every");
    t.eval_batches = v.size("eval-batches");
    t.seed = v.size("seed");
    return t;
}

}  // namespace detail
}  // namespace attnlab::experiments
