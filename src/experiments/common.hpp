// src/experiments/common.hpp: what every experiment shares — one seeded training run that
// records a loss curve and survives a divergence, a held-out evaluation that works at any
// length, and number formatting for the tables. Internal to src/experiments/.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "attnlab/experiments/experiments.hpp"
#include "attnlab/experiments/registry.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"

namespace attnlab::experiments::detail {

// The TrainerOptions of a run: AdamW, cosine decay to lr/10 over `steps`, warm-up, seed.
TrainerOptions trainer_options(const TrainingOptions& options);

// A decoder LM sized for `task` (vocabulary, max_len = its length), everything else default.
ModelConfig decoder_config(const Task& task, std::size_t d_model, std::size_t num_heads, std::size_t num_layers);

// Where a run is within its experiment, for the progress callback.
struct RunLabel {
    std::string name;
    std::size_t index = 0;
    std::size_t count = 1;
};

struct RunOutcome {
    std::vector<double> steps;         // x of the curve: log_every, 2·log_every, ..., steps
    std::vector<double> loss;          // mean training loss over each interval; NaN after a stop
    std::vector<double> accuracy;      // mean training accuracy over each interval; NaN after a stop
    std::vector<double> max_score;     // largest |scaled score| over each interval (TrainerOptions::track_attention; else 0);
                                       // at a stop, over the steps done since the last point; NaN after it
    std::size_t steps_done = 0;
    std::optional<std::size_t> failed_step;  // the step whose loss or gradient was not finite
    std::string error;                 // the trainer's message for that step
    std::optional<Message> stop;       // that message by template (common_messages), when it has one
    Index2 failed_tokens;              // (B, T) the tokens of that step's batch (token tasks; else empty): the
                                       // parameters are as they were before it, so its forward can be replayed
    float first_loss = 0.0f;           // loss of step 0
    float first_grad_norm = 0.0f;      // gradient norm of step 0 (before clipping)
    float max_grad_norm = 0.0f;        // largest gradient norm seen
    double seconds = 0.0;              // wall time of the training steps
    double steps_per_second() const { return seconds > 0 ? static_cast<double>(steps_done) / seconds : 0.0; }
};

// Trains `model` on `task` for train.steps steps. A ValueError from the trainer (non-finite
// loss or gradient) ends the run and is recorded, not rethrown.
RunOutcome train_run(Model& model, const Task& task, const TrainerOptions& trainer, const TrainingOptions& train,
                     const RunLabel& label, const ProgressFn& progress);

// evaluate_model (train/trainer.hpp) with the experiments' fixed evaluation seed.
EvalResult evaluate(Model& model, const Task& task, std::size_t batches, std::size_t batch_size,
                    std::uint64_t seed = 0xE7A1);

// The sequence task `name` at `length`; ConfigError from `where` if it is a classification task.
std::unique_ptr<Task> sequence_task(const char* where, const std::string& name, std::size_t length);

// Held-out loss of always predicting the uniform distribution over `classes`: ln(classes).
double uniform_loss(std::size_t classes);

// printf into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "0.4213", "nan" — 4 decimals; "n/a" when absent.
std::string number(double value, int decimals = 4);
std::string percent(double fraction);  // "97.1%"

// The rows of a Series from every run's curve (all runs share train.log_every and steps).
Series loss_series(const std::vector<std::string>& names, const std::vector<RunOutcome>& runs);

// Sets result.conclusion_message and result.conclusion (it rendered with `templates`).
void conclude(Result& result, Message message, const MessageTemplates& templates);
// Sets result.timing_message and result.timing the same way.
void set_timing(Result& result, Message message, const MessageTemplates& templates);

// The templates every experiment's notes share (experiments() lists them with each experiment's
// own): a run that stopped, a run's error. A value named `error` is an engine error message.
const MessageTemplates& common_messages();
// A text of a table, a chart or a note made from a template: `message` rendered with `templates`
// and the common ones, kept in result.phrases with its message.
std::string phrase(Result& result, Message message, const MessageTemplates& templates = {});
// A note made from a template: phrase() added to result.notes.
void note(Result& result, Message message, const MessageTemplates& templates = {});
// A stopped run's error as a message value: its template message when it has one (a phrase the
// page renders in its language), else the trainer's text.
MessageValue error_value(const RunOutcome& run);
// The note of a run that stopped on a non-finite loss or gradient: "{run} stopped: {error}".
void stopped_note(Result& result, const std::string& run, const RunOutcome& outcome);

// Key/value config entries shared by every experiment.
void add_training_config(Result& result, const TrainingOptions& train);

// The largest |f(P x)[b, t] − f(x)[b, perm_b[t]]| of the logits of Model(config, weight_seed)
// over `batches` sequences of `length` uniform tokens < config.vocab_size with random
// permutations perm_b (all from Rng(seed)), and the largest |f(x)|. config should have
// causal = false (a causal mask is itself an order).
struct PermutationGap {
    double gap = 0.0;
    double scale = 0.0;
};
PermutationGap permutation_gap(const ModelConfig& config, std::uint64_t weight_seed, std::size_t length,
                               std::size_t batches, std::uint64_t seed);

// ---- Registry parameters (registry.hpp), defaults taken from an options struct -------------

Parameter integer_parameter(const std::string& name, std::size_t value, double min, double max, const std::string& help);
Parameter number_parameter(const std::string& name, float value, double min, double max, const std::string& help);
Parameter text_parameter(const std::string& name, const std::string& value, std::vector<std::string> choices,
                         const std::string& help);
Parameter integers_parameter(const std::string& name, const std::vector<std::size_t>& value, double min, double max,
                             const std::string& help);
Parameter texts_parameter(const std::string& name, const std::vector<std::string>& value,
                          std::vector<std::string> choices, const std::string& help);
// The sequence tasks, for a task parameter's choices.
std::vector<std::string> sequence_task_names();
// The positional encodings of a token model: every PositionalKind but time (a forecaster's).
std::vector<std::string> token_positional_names();
// steps, batch, lr, warmup, log-every, eval-batches, seed, with the defaults of `train`.
void add_training_parameters(std::vector<Parameter>& parameters, const TrainingOptions& train);
TrainingOptions training_from(const Values& values);

// An experiment's parameters written once: each row names the member of its options struct it
// sets, so the list the CLI and JavaScript read (parameters(): defaults from Options{}) and the
// options a run gets back from the resolved values (read()) come from the same line.
//
//   static const auto table = ParameterTable<NormOptions>()
//       .text("task", &NormOptions::task, sequence_task_names(), "task")
//       .integer("layers", &NormOptions::num_layers, 1, 48, "Transformer blocks")
//       .training(&NormOptions::train);
//   run_norm(table.read(values), progress);
template <class Options>
class ParameterTable {
public:
    // A non-negative integer member (std::size_t, or a std::uint64_t seed).
    template <class Int>
    ParameterTable& integer(const std::string& name, Int Options::*member, double min, double max,
                            const std::string& help) {
        static_assert(std::is_integral_v<Int>, "integer parameters set integer members");
        parameters_.push_back(integer_parameter(name, static_cast<std::size_t>(Options{}.*member), min, max, help));
        readers_.push_back([=](const Values& v, Options& o) { o.*member = static_cast<Int>(v.size(name)); });
        return *this;
    }
    // A float or double member (the text form and the value read back are float's).
    template <class Real>
    ParameterTable& number(const std::string& name, Real Options::*member, double min, double max,
                           const std::string& help) {
        static_assert(std::is_floating_point_v<Real>, "number parameters set floating-point members");
        parameters_.push_back(number_parameter(name, static_cast<float>(Options{}.*member), min, max, help));
        readers_.push_back([=](const Values& v, Options& o) { o.*member = v.number(name); });
        return *this;
    }
    // One of `choices` (empty: any text).
    ParameterTable& text(const std::string& name, std::string Options::*member, std::vector<std::string> choices,
                         const std::string& help) {
        parameters_.push_back(text_parameter(name, Options{}.*member, std::move(choices), help));
        readers_.push_back([=](const Values& v, Options& o) { o.*member = v.text(name); });
        return *this;
    }
    // Values to offer for the text parameter added last; any other stays valid (Parameter::suggestions).
    ParameterTable& suggest(std::vector<std::string> values) {
        parameters_.back().suggestions = std::move(values);
        return *this;
    }
    // A bool member as one of two words: `off` (false) or `on` (true).
    ParameterTable& text(const std::string& name, bool Options::*member, const std::string& off, const std::string& on,
                         const std::string& help) {
        parameters_.push_back(text_parameter(name, Options{}.*member ? on : off, {off, on}, help));
        readers_.push_back([=](const Values& v, Options& o) { o.*member = v.text(name) == on; });
        return *this;
    }
    ParameterTable& integers(const std::string& name, std::vector<std::size_t> Options::*member, double min, double max,
                             const std::string& help) {
        parameters_.push_back(integers_parameter(name, Options{}.*member, min, max, help));
        readers_.push_back([=](const Values& v, Options& o) { o.*member = v.sizes(name); });
        return *this;
    }
    ParameterTable& texts(const std::string& name, std::vector<std::string> Options::*member,
                          std::vector<std::string> choices, const std::string& help) {
        parameters_.push_back(texts_parameter(name, Options{}.*member, std::move(choices), help));
        readers_.push_back([=](const Values& v, Options& o) { o.*member = v.texts(name); });
        return *this;
    }
    // The model's shape as most experiments offer it: d-model (2..1024), heads (1..64), layers
    // (1..24). An experiment with other ranges or words writes its own three rows.
    template <class Int>
    ParameterTable& model_shape(Int Options::*d_model, Int Options::*num_heads, Int Options::*num_layers) {
        return integer("d-model", d_model, 2, 1024, "model width C")
            .integer("heads", num_heads, 1, 64, "attention heads")
            .integer("layers", num_layers, 1, 24, "Transformer blocks");
    }
    // The training parameters (add_training_parameters) of the TrainingOptions member.
    ParameterTable& training(TrainingOptions Options::*member) {
        add_training_parameters(parameters_, Options{}.*member);
        readers_.push_back([=](const Values& v, Options& o) { o.*member = training_from(v); });
        return *this;
    }

    // The registry's parameter list, in the table's order.
    const std::vector<Parameter>& parameters() const { return parameters_; }
    // Options{} with every parameter's resolved value.
    Options read(const Values& values) const {
        Options o;
        for (const auto& reader : readers_) reader(values, o);
        return o;
    }

private:
    std::vector<Parameter> parameters_;
    std::vector<std::function<void(const Values&, Options&)>> readers_;
};

}  // namespace attnlab::experiments::detail
