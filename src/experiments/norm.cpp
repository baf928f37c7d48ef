// §9.3: LayerNorm placement (Xiong et al. 2020). Post-LN, LN(x + f(x)), puts every residual
// branch behind a normalisation, so the gradient at the output layers is large at initialisation
// and a deep stack needs warm-up; Pre-LN, x + f(LN(x)), keeps an identity path from the loss to
// every block and trains at the same learning rate without it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kNormClaim =
    "§9.3: a deep Post-LN Transformer is unstable without learning-rate warm-up; Pre-LN trains stably without it";

// The English templates of the conclusion (Result::conclusion_message).
const MessageTemplates& norm_messages() {
    static const MessageTemplates m = {
        {"conclusion",
         "{verdict}; {pre_vs_post}. held-out loss after {steps} steps at lr {lr} with {layers} layers: "
         "{runs}"},
        {"held", "the claim held"},
        {"partly_post",
         "the claim held in part: Post-LN needed warm-up, but Pre-LN without it did not train as well as "
         "with it"},
        {"partly_pre", "the claim held in part: Pre-LN trained without warm-up, but Post-LN did not need warm-up here"},
        {"not_held", "the claim did NOT hold here"},
        {"pre_ahead", "Pre-LN without warm-up ended ahead of Post-LN with warm-up"},
        {"pre_behind", "Pre-LN without warm-up ended BEHIND Post-LN with warm-up"},
        {"pre_level", "Pre-LN without warm-up ended level with Post-LN with warm-up"},
        {"run_stopped", "{run}: {status}"},
        {"run_loss", "{run}: {loss} ({status})"},
        {"diverged", "diverged at step {step}"},
        {"learned", "learned"},
        {"not_learning", "not learning"},
    };
    return m;
}

// The last finite point of a curve (NaN if none).
double last_finite(const std::vector<double>& y) {
    for (std::size_t i = y.size(); i-- > 0;) {
        if (std::isfinite(y[i])) return y[i];
    }
    return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

Result run_norm(const NormOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_norm";
    o.train.validate(where);
    if (o.train.warmup_steps == 0) fail<ConfigError>(where, ": warmup_steps (of the warm-up runs) must be positive");
    const auto task = detail::sequence_task(where, o.task, o.length);

    Result r;
    r.name = "norm";
    r.claim = kNormClaim;
    r.config = {{"task", detail::format("%s, length %zu (T = %zu)", o.task.c_str(), o.length, task->seq_len())},
                {"model", detail::format("decoder, %zu layers, d_model %zu, %zu heads, rope", o.num_layers, o.d_model,
                                         o.num_heads)},
                {"warm-up runs", detail::format("%zu linear warm-up steps; the others start at the peak lr", o.train.warmup_steps)},
                {"learned means", detail::format("held-out loss below %.2f x ln V = %.3f", static_cast<double>(o.stuck_fraction),
                                                 o.stuck_fraction * detail::uniform_loss(task->vocab_size()))},
                {"gradient clipping", o.clip_norm > 0 ? detail::format("%g", static_cast<double>(o.clip_norm)) : "off"}};
    detail::add_training_config(r, o.train);

    struct Variant {
        NormPlacement norm;
        bool warmup;
    };
    const std::vector<Variant> variants{
        {NormPlacement::pre, false}, {NormPlacement::pre, true}, {NormPlacement::post, false}, {NormPlacement::post, true}};
    const double stuck_loss = o.stuck_fraction * detail::uniform_loss(task->vocab_size());
    std::vector<std::string> names;
    std::vector<Message> status;  // "diverged at step 12", "learned", "not learning": the table renders them
    std::vector<detail::RunOutcome> runs;
    std::vector<double> final_loss;
    Table table{"final",
                {"run", "final train loss", "held-out loss", "held-out accuracy", "divergence step", "max grad norm",
                 "status"},
                {}};
    for (std::size_t i = 0; i < variants.size(); ++i) {
        ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, o.num_layers);
        config.norm = variants[i].norm;
        Model model(config, o.train.seed);
        TrainingOptions train = o.train;
        train.warmup_steps = variants[i].warmup ? o.train.warmup_steps : 0;
        TrainerOptions trainer = detail::trainer_options(train);
        trainer.clip_norm = o.clip_norm;
        names.push_back(detail::format("%s-LN, %s", std::string(norm_placement_name(variants[i].norm)).c_str(),
                                       variants[i].warmup ? "warm-up" : "no warm-up"));
        runs.push_back(detail::train_run(model, *task, trainer, train, {names.back(), i, variants.size()}, progress));
        const detail::RunOutcome& run = runs.back();
        double loss = std::numeric_limits<double>::quiet_NaN(), acc = loss;
        if (run.failed_step) {
            status.push_back({"diverged", {{"step", std::to_string(*run.failed_step)}}});
            detail::note(r, {"run_error", {{"run", names.back()}, {"error", detail::error_value(run)}}});
        } else {
            const EvalResult e = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);
            loss = e.loss;
            acc = e.accuracy;
            status.push_back({std::isfinite(loss) && loss < stuck_loss ? "learned" : "not_learning", {}});
        }
        final_loss.push_back(loss);
        table.rows.push_back({names.back(), detail::number(last_finite(run.loss)), detail::number(loss),
                              detail::percent(acc), run.failed_step ? std::to_string(*run.failed_step) : "none",
                              detail::format("%.3g", static_cast<double>(run.max_grad_norm)),
                              detail::phrase(r, status.back(), norm_messages())});
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(names, runs));

    std::vector<Message> summary;
    for (std::size_t i = 0; i < names.size(); ++i) {
        summary.push_back(std::isnan(final_loss[i])
                              ? Message{"run_stopped", {{"run", names[i]}, {"status", status[i]}}}
                              : Message{"run_loss",
                                        {{"run", names[i]}, {"loss", detail::format("%.3f", final_loss[i])}, {"status", status[i]}}});
    }
    // variants: 0 pre cold, 1 pre warm, 2 post cold, 3 post warm. A diverged run counts as
    // infinitely bad; "behind" means 0.05 nats or more.
    auto score = [&](std::size_t i) { return std::isnan(final_loss[i]) ? std::numeric_limits<double>::infinity() : final_loss[i]; };
    const bool post_needs_warmup = score(2) > score(3) + 0.05;
    const bool pre_without_ok = score(0) <= score(1) + 0.05 && status[0].id == "learned";
    const char* pre_vs_post = score(0) + 0.05 < score(3)   ? "pre_ahead"
                              : score(0) > score(3) + 0.05 ? "pre_behind"
                                                           : "pre_level";
    const char* verdict = post_needs_warmup && pre_without_ok ? "held"
                          : post_needs_warmup                 ? "partly_post"
                          : pre_without_ok                    ? "partly_pre"
                                                              : "not_held";
    r.verdict = post_needs_warmup && pre_without_ok   ? Verdict::held
                : post_needs_warmup || pre_without_ok ? Verdict::partly
                                                      : Verdict::not_held;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", Message{verdict, {}}},
                       {"pre_vs_post", Message{pre_vs_post, {}}},
                       {"steps", std::to_string(o.train.steps)},
                       {"lr", detail::format("%g", static_cast<double>(o.train.lr))},
                       {"layers", std::to_string(o.num_layers)},
                       {"runs", {summary, "; "}}}},
                     norm_messages());
    return r;
}

namespace {
const detail::ParameterTable<NormOptions>& norm_parameters() {
    using O = NormOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 1, 512, "task length")
        .integer("d-model", &O::d_model, 2, 1024, "model width C")
        .integer("heads", &O::num_heads, 1, 64, "attention heads")
        .integer("layers", &O::num_layers, 1, 48, "Transformer blocks")
        .number("clip", &O::clip_norm, 0, 1e6, "clip the gradient norm (0 = off: clipping hides the instability)")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::norm_entry() {
    Experiment e;
    e.name = "norm";
    e.section = "§9.3";
    e.claim = kNormClaim;
    e.summary = "deep Pre-LN vs Post-LN, with and without warm-up, at a high learning rate: every arm's loss and divergence";
    e.parameters = norm_parameters().parameters();
    e.quick = {{"steps", "100"}, {"log-every", "20"}, {"warmup", "25"}, {"eval-batches", "2"}};
    e.messages = norm_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_norm(norm_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
