// §6.3: half precision has a small range. fp16's largest finite value is 65504, so the naive
// softmax exp(s) / Σ exp(s) overflows to inf once a score passes ln 65504 = 11.09, and inf / inf is
// NaN; computed in float32 the same softmax lasts until s = 88.7. The runs below train the same
// model from the same bad initialisation (scores multiplied by a large factor instead of
// 1/sqrt(D)) at a high learning rate: attention in fp32, in fp16 with its softmax in fp16, and in
// fp16 with its softmax in float32 (core/numeric_format.hpp), recording the largest score of
// every step (the trainer's attention statistics).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "attnlab/core/error.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/numeric_format.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kFp16Claim =
    "§6.3: an fp16 softmax overflows once the scores grow (exp(s) > 65504 for s > 11.09); computing the softmax in "
    "fp32 fixes it; watch the largest score";

// The English templates of the conclusion (Result::conclusion_message).
const MessageTemplates& fp16_messages() {
    static const MessageTemplates m = {
        {"held",
         "the claim held: with its softmax in fp16 the run broke at step {step} ({overflow}); with the softmax in "
         "fp32 the same run survived all {steps} steps (largest score {fixed_peak})"},
        {"overflow_exp",
         "replaying that step, the first stage past fp16's range was {stage} of block {layer} ({what}), and its "
         "largest score was {score}, past ln 65504 = {limit}: exp overflowed to inf, and inf / inf is NaN"},
        {"overflow_stage",
         "replaying that step, the first stage past fp16's range was {stage} of block {layer} ({what}); the largest "
         "score was {score}, the largest finite value going into that stage {input}"},
        {"overflow_none",
         "replaying that step, every attention stage stayed finite (largest score {score}): what overflowed came "
         "after attention"},
        {"not_held_both",
         "the claim did NOT hold: both fp16 runs broke, the fp16 softmax at step {step} and the fp32 "
         "softmax at step {fixed_step} (largest score {fixed_peak}: past what float32's exp holds, or "
         "the fp16 activations themselves overflowed)"},
        {"not_shown",
         "the claim did NOT show: the fp16 softmax run survived all {steps} steps (largest |score| "
         "{peak}{why})"},
        {"never_past", ", never past 11.09"},
        {"stable", ": the stable softmax subtracts the row max before exp"},
        {"negative",
         ", past 11.09 in absolute value only: a large negative score underflows exp to 0, only a "
         "positive one overflows"},
    };
    return m;
}

constexpr double kFp16ExpLimit = 11.09;  // ln 65504: exp(s) beyond fp16's largest finite value
constexpr double kFp32ExpLimit = 88.72;  // ln 3.4e38: the same for float32

struct Arm {
    const char* name;
    Precision precision;
    SoftmaxPrecision softmax;
};

// The first curve point whose interval's largest score passed `limit`, as its step (the score
// passed it at or before that step; a stopped run's last interval ends where it stopped);
// nullopt if none.
std::optional<double> first_step_above(const detail::RunOutcome& run, double limit) {
    for (std::size_t i = 0; i < run.max_score.size(); ++i) {
        if (std::isfinite(run.max_score[i]) && run.max_score[i] > limit) {
            return run.failed_step ? std::min(run.steps[i], static_cast<double>(*run.failed_step)) : run.steps[i];
        }
    }
    return std::nullopt;
}

double largest_finite(const std::vector<double>& y) {
    double m = 0.0;
    for (double v : y) {
        if (std::isfinite(v)) m = std::max(m, v);
    }
    return m;
}

// What the forward of a failed step shows, stage by stage (the trace's numerics): the first
// stage holding inf or NaN (the masked stage's -inf is the mask, not an overflow), and the
// largest score going into the softmax.
struct Overflow {
    std::optional<Stage> stage;  // none: every attention stage stayed finite
    std::size_t layer = 0;       // 0-based block of that stage
    bool nan = false;            // NaN (else inf)
    double input_max = 0.0;      // the largest finite |value| of the stage recorded before it
    double score = 0.0;          // the largest masked score of any block up to it (what exp reads)
    double score_abs = 0.0;      // the largest |scaled score| (the curve's measure)
};

// Largest value of a stage over every (batch, head) entry: (T, S) each.
double largest_value(const TraceRecorder& trace, Stage stage) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t b = 0; b < trace.num_batches(stage); ++b) {
        for (std::size_t h = 0; h < trace.num_heads(stage); ++h) {
            for (const float v : trace.get(stage, b, static_cast<std::ptrdiff_t>(h))) {
                if (std::isfinite(v)) m = std::max(m, static_cast<double>(v));
            }
        }
    }
    return m;
}

// tokens: (B, T), the failed step's batch; model: its parameters before that step.
Overflow first_overflow(const Model& model, const Index2& tokens) {
    Overflow o;
    for (std::size_t layer = 0; layer < model.config().num_layers; ++layer) {
        const auto trace = model.trace_layer(tokens, layer);
        o.score = std::max(layer == 0 ? -std::numeric_limits<double>::infinity() : o.score,
                           largest_value(*trace, Stage::masked));
        double before = 0.0;
        for (const StageNumerics& n : trace->numerics()) {
            if (n.stage == Stage::scaled) o.score_abs = std::max(o.score_abs, static_cast<double>(n.max_abs));
            const bool past = n.nan > 0 || n.pos_inf > 0 || (n.neg_inf > 0 && n.stage != Stage::masked);
            if (past) {
                o.stage = n.stage;
                o.layer = layer;
                o.nan = n.nan > 0;
                o.input_max = before;
                return o;
            }
            before = n.max_abs;
        }
    }
    return o;
}

// The phrase of a failed fp16-softmax run: which stage overflowed, and on what score.
Message overflow_message(const Overflow& o) {
    const std::string score = detail::format("%.2f", o.score);
    if (!o.stage) return {"overflow_none", {{"score", score}}};
    const std::vector<std::pair<std::string, MessageValue>> where{
        {"stage", std::string(stage_name(*o.stage))},
        {"layer", std::to_string(o.layer + 1)},
        {"what", o.nan ? "NaN" : "inf"},
        {"score", score}};
    Message m{o.score > kFp16ExpLimit && *o.stage == Stage::weights ? "overflow_exp" : "overflow_stage", where};
    if (m.id == "overflow_exp") m.values.emplace_back("limit", detail::format("%.2f", kFp16ExpLimit));
    else m.values.emplace_back("input", detail::format("%.2f", o.input_max));
    return m;
}

// The failed step's largest |score| joins the curve point of its interval: the curve then ends
// on the score that broke the run, not on the steps before it.
void add_failed_score(detail::RunOutcome& run, double score_abs) {
    for (std::size_t i = 0; i < run.steps.size(); ++i) {
        if (run.steps[i] > static_cast<double>(*run.failed_step)) {
            const double before = std::isfinite(run.max_score[i]) ? run.max_score[i] : 0.0;
            run.max_score[i] = std::max(before, score_abs);
            return;
        }
    }
}

}  // namespace

Result run_fp16(const Fp16Options& o, const ProgressFn& progress) {
    constexpr const char* where = "run_fp16";
    o.train.validate(where);
    if (!(o.score_scale > 0.0f) || !std::isfinite(o.score_scale)) {
        fail<ConfigError>(where, ": score_scale must be positive and finite, got ", o.score_scale);
    }
    const auto task = detail::sequence_task(where, o.task, o.length);

    Result r;
    r.name = "fp16";
    r.claim = kFp16Claim;
    r.config = {
        {"task", detail::format("%s, length %zu (T = %zu)", o.task.c_str(), o.length, task->seq_len())},
        {"model", detail::format("decoder, %zu layers, d_model %zu, %zu heads, rope, pre-LN", o.num_layers, o.d_model,
                                 o.num_heads)},
        {"bad init", detail::format("scores multiplied by %g instead of 1/sqrt(D) = %.3f", static_cast<double>(o.score_scale),
                                    1.0 / std::sqrt(static_cast<double>(o.d_model / o.num_heads)))},
        {"softmax", o.stable_softmax ? "stable (each row's max subtracted before exp)"
                                     : "naive exp(s) / sum exp(s), as written in the article"},
        {"overflow", detail::format("naive exp overflows fp16 at s > %.2f, float32 at s > %.2f", kFp16ExpLimit, kFp32ExpLimit)}};
    detail::add_training_config(r, o.train);

    const std::vector<Arm> arms{{"fp32", Precision::fp32, SoftmaxPrecision::fp32},
                                {"fp16, fp16 softmax", Precision::fp16, SoftmaxPrecision::same},
                                {"fp16, fp32 softmax", Precision::fp16, SoftmaxPrecision::fp32}};
    std::vector<std::string> names;
    std::vector<detail::RunOutcome> runs;
    std::vector<std::optional<Overflow>> overflows(arms.size());  // of each run that broke
    Table table{"final",
                {"run", "broke at step", "largest max score", "max > 11.09 by step", "held-out loss",
                 "held-out accuracy"},
                {}};
    for (std::size_t i = 0; i < arms.size(); ++i) {
        ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, o.num_layers);
        config.attention_scale = o.score_scale;
        config.precision = arms[i].precision;
        config.softmax_precision = arms[i].softmax;
        config.stable_softmax = o.stable_softmax;
        config.validate();
        Model model(config, o.train.seed);
        TrainerOptions trainer = detail::trainer_options(o.train);
        trainer.track_attention = true;  // the largest score of each step
        names.push_back(arms[i].name);
        runs.push_back(detail::train_run(model, *task, trainer, o.train, {names.back(), i, arms.size()}, progress));
        detail::RunOutcome& run = runs.back();
        if (run.failed_step && run.failed_tokens.size() > 0) {
            overflows[i] = first_overflow(model, run.failed_tokens);
            add_failed_score(run, overflows[i]->score_abs);
        }
        double loss = std::numeric_limits<double>::quiet_NaN(), acc = loss;
        if (run.failed_step) {
            detail::note(r, {"run_error", {{"run", names.back()}, {"error", detail::error_value(run)}}});
        } else {
            const EvalResult e = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);
            loss = e.loss;
            acc = e.accuracy;
        }
        const auto above = first_step_above(run, kFp16ExpLimit);
        table.rows.push_back({names.back(), run.failed_step ? std::to_string(*run.failed_step) : "survived",
                              detail::number(largest_finite(run.max_score), 2),
                              above ? detail::number(*above, 0) : "never", detail::number(loss), detail::percent(acc)});
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(names, runs));
    Series scores{"max_score", "step", "largest |scaled score| over the steps since the previous point", runs[0].steps, {}};
    for (std::size_t i = 0; i < runs.size(); ++i) scores.lines.push_back({names[i], runs[i].max_score});
    r.series.push_back(scores);

    const detail::RunOutcome &half = runs[1], &fixed = runs[2];
    const double peak = largest_finite(half.max_score);
    r.verdict = half.failed_step && !fixed.failed_step ? Verdict::held : Verdict::not_held;
    if (half.failed_step && !fixed.failed_step) {
        detail::conclude(r,
                         {"held",
                          {{"step", std::to_string(*half.failed_step)},
                           {"overflow", overflow_message(overflows[1].value_or(Overflow{}))},
                           {"steps", std::to_string(o.train.steps)},
                           {"fixed_peak", detail::format("%.2f", largest_finite(fixed.max_score))}}},
                         fp16_messages());
    } else if (half.failed_step && fixed.failed_step) {
        detail::conclude(r,
                         {"not_held_both",
                          {{"step", std::to_string(*half.failed_step)},
                           {"fixed_step", std::to_string(*fixed.failed_step)},
                           {"fixed_peak", detail::format("%.2f", largest_finite(fixed.max_score))}}},
                         fp16_messages());
    } else {
        const char* why = peak <= kFp16ExpLimit ? "never_past" : o.stable_softmax ? "stable" : "negative";
        detail::conclude(r,
                         {"not_shown",
                          {{"steps", std::to_string(o.train.steps)},
                           {"peak", detail::format("%.2f", peak)},
                           {"why", Message{why, {}}}}},
                         fp16_messages());
    }
    return r;
}

namespace {
const detail::ParameterTable<Fp16Options>& fp16_parameters() {
    using O = Fp16Options;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 1, 512, "task length")
        .model_shape(&O::d_model, &O::num_heads, &O::num_layers)
        .number("score-scale", &O::score_scale, 1e-3, 1e3, "the bad init: scores multiplied by this instead of 1/sqrt(D)")
        .text("softmax", &O::stable_softmax, "naive", "stable",
              "naive exp(s)/sum exp(s) (overflows) or stable (row max subtracted)")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::fp16_entry() {
    Experiment e;
    e.name = "fp16";
    e.section = "§6.3";
    e.claim = kFp16Claim;
    e.summary = "fp32 / fp16 with an fp16 softmax / fp16 with an fp32 softmax from a bad init at a high learning rate: "
                "the step it broke, the max-score curve";
    e.parameters = fp16_parameters().parameters();
    e.quick = {{"steps", "80"}, {"lr", "0.004"}, {"log-every", "5"}, {"warmup", "0"}, {"eval-batches", "2"}};
    e.messages = fp16_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_fp16(fp16_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
