// §3.2/§3.3: the number of heads at a fixed width is a trade-off. More heads look at more things
// at once, but each gets a head dimension of d_model / h: too many and every head is too narrow
// to carry a useful query/key match. The multiply-adds stay the same (the cost experiment); the
// wall time does not (more, smaller matrices).
#include <algorithm>
#include <chrono>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kHeadsClaim =
    "§3.2/§3.3: the head count is a trade-off at a fixed d_model; the article: h = 8 is best at d_model 512, "
    "h = 16 under-fits (each head too narrow)";

// The conclusion's and the timing line's English templates (Result::conclusion_message).
const MessageTemplates& heads_messages() {
    static const MessageTemplates m = {
        {"untested", "d_model 512 with h = 8 was not run, so the article's h = 8 claim was not tested; {widths}"},
        {"held", "the article's claim held: h = 8 won at d_model 512; {widths}"},
        {"not_held", "the article's claim did NOT hold here: h = 8 did not win at d_model 512 in this short run; {widths}"},
        {"width", "at d_model {width} best h={best} (loss {best_loss}, accuracy {best_accuracy}), worst h={worst} "
                  "(loss {worst_loss}, accuracy {worst_accuracy})"},
        {"timing", "training speed {widths}"},
        {"timing_full",
         "training speed {widths}; the full run (d_model {full_widths}, {full_steps} steps per head count) takes "
         "about {seconds} s here, timed from the first step of each of its runs: the page's full-run button "
         "runs it, as does the same command without --quick"},
        {"value", "{value}"},
        {"width_speed", "d_model {width}: {fastest} steps/s (h={fastest_h}) to {slowest} (h={slowest_h})"},
        {"run", "C={width} h={h}"},
        {"skipped", "h={h} skipped at d_model {width}: the head dim must be a whole even number (RoPE rotates pairs)"},
    };
    return m;
}

// The head counts of `widths` that split each into an even head dim, as (width, heads) pairs.
std::vector<std::pair<std::size_t, std::size_t>> runnable(const std::vector<std::size_t>& widths,
                                                          const std::vector<std::size_t>& heads) {
    std::vector<std::pair<std::size_t, std::size_t>> plan;
    for (std::size_t width : widths) {
        for (std::size_t h : heads) {
            if (h != 0 && width % h == 0 && (width / h) % 2 == 0) plan.emplace_back(width, h);
        }
    }
    return plan;
}

// Seconds the default (full) run takes on this machine: the first training step of each of its
// runs, timed, times its steps (a first step also allocates: the estimate errs long).
double full_run_seconds(const HeadsOptions& full) {
    const auto task = detail::sequence_task("run_heads", full.task, full.length);
    double seconds = 0.0;
    for (const auto& [width, h] : runnable(full.d_models, full.heads)) {
        Model model(detail::decoder_config(*task, width, h, full.num_layers), full.train.seed);
        Trainer trainer(model, *task, detail::trainer_options(full.train));
        StepMetrics m;
        const auto start = std::chrono::steady_clock::now();
        trainer.step(m);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() *
                   static_cast<double>(full.train.steps);
    }
    return seconds;
}

// "512, 64" as a list of numbers (each a value the page shows as it is).
MessageValue sizes(const std::vector<std::size_t>& values) {
    std::vector<Message> parts;
    for (std::size_t v : values) parts.push_back({"value", {{"value", std::to_string(v)}}});
    return {parts, ", "};
}

}  // namespace

Result run_heads(const HeadsOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_heads";
    o.train.validate(where);
    if (o.heads.empty()) fail<ConfigError>(where, ": heads must not be empty");
    if (o.d_models.empty()) fail<ConfigError>(where, ": d_models must not be empty");
    const auto task = detail::sequence_task(where, o.task, o.length);

    Result r;
    r.name = "heads";
    r.claim = kHeadsClaim;
    r.config = {{"task", detail::format("%s, length %zu (T = %zu)", o.task.c_str(), o.length, task->seq_len())},
                {"model", detail::format("decoder, %zu layer(s), rope, pre-LN, ff 4 x d_model", o.num_layers)}};
    detail::add_training_config(r, o.train);

    struct Run {
        std::size_t width, heads;
        EvalResult eval;
        double speed;
    };
    std::vector<Run> done;
    std::vector<std::string> names;
    std::vector<detail::RunOutcome> runs;
    std::vector<std::pair<std::size_t, std::size_t>> plan;  // (width, heads)
    for (std::size_t width : o.d_models) {
        for (std::size_t h : o.heads) {
            if (h == 0 || width % h != 0 || (width / h) % 2 != 0) {
                detail::note(r, {"skipped", {{"h", std::to_string(h)}, {"width", std::to_string(width)}}},
                             heads_messages());
                continue;
            }
            plan.emplace_back(width, h);
        }
    }
    if (plan.empty()) fail<ConfigError>(where, ": no head count divides any width into an even head dim");
    Table table{"final", {"d_model", "heads", "head dim", "parameters", "held-out loss", "held-out accuracy", "steps/s"}, {}};
    for (std::size_t i = 0; i < plan.size(); ++i) {
        const auto [width, h] = plan[i];
        const ModelConfig config = detail::decoder_config(*task, width, h, o.num_layers);
        config.validate();
        Model model(config, o.train.seed);
        names.push_back(
            detail::phrase(r, {"run", {{"width", std::to_string(width)}, {"h", std::to_string(h)}}}, heads_messages()));
        runs.push_back(detail::train_run(model, *task, detail::trainer_options(o.train), o.train,
                                         {names.back(), i, plan.size()}, progress));
        if (runs.back().failed_step) detail::stopped_note(r, names.back(), runs.back());
        const EvalResult e = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);
        done.push_back({width, h, e, runs.back().steps_per_second()});
        table.rows.push_back({std::to_string(width), std::to_string(h), std::to_string(config.head_dim()),
                              std::to_string(model.num_parameters()), detail::number(e.loss), detail::percent(e.accuracy),
                              detail::number(done.back().speed, 1)});
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(names, runs));

    // Per width: the head count with the lowest held-out loss, and whether h = 8 won at 512 and
    // h = 16 did worse than h = 8 there.
    std::vector<Message> per_width, timing;
    bool eight_best_at_512 = false, tested_512 = false;
    for (std::size_t width : o.d_models) {
        const Run* best = nullptr;
        const Run* worst = nullptr;
        const Run* fastest = nullptr;
        const Run* slowest = nullptr;
        for (const Run& run : done) {
            if (run.width != width) continue;
            if (!best || run.eval.loss < best->eval.loss) best = &run;
            if (!worst || run.eval.loss > worst->eval.loss) worst = &run;
            if (!fastest || run.speed > fastest->speed) fastest = &run;
            if (!slowest || run.speed < slowest->speed) slowest = &run;
        }
        if (!best) continue;
        per_width.push_back({"width",
                             {{"width", std::to_string(width)},
                              {"best", std::to_string(best->heads)},
                              {"best_loss", detail::format("%.3f", static_cast<double>(best->eval.loss))},
                              {"best_accuracy", detail::percent(best->eval.accuracy)},
                              {"worst", std::to_string(worst->heads)},
                              {"worst_loss", detail::format("%.3f", static_cast<double>(worst->eval.loss))},
                              {"worst_accuracy", detail::percent(worst->eval.accuracy)}}});
        timing.push_back({"width_speed",
                          {{"width", std::to_string(width)},
                           {"fastest", detail::format("%.1f", fastest->speed)},
                           {"fastest_h", std::to_string(fastest->heads)},
                           {"slowest", detail::format("%.1f", slowest->speed)},
                           {"slowest_h", std::to_string(slowest->heads)}}});
        // The claim compares h = 8 with its neighbours at 512: a sweep without h = 8 there does not test it.
        if (width == 512 && std::any_of(done.begin(), done.end(), [](const Run& run) { return run.width == 512 && run.heads == 8; })) {
            tested_512 = true;
            eight_best_at_512 = best->heads == 8;
        }
    }
    r.verdict = !tested_512 ? Verdict::untested : eight_best_at_512 ? Verdict::held : Verdict::not_held;
    detail::conclude(r, {!tested_512 ? "untested" : eight_best_at_512 ? "held" : "not_held", {{"widths", {per_width, "; "}}}},
                     heads_messages());
    if (tested_512) {
        detail::set_timing(r, {"timing", {{"widths", {timing, "; "}}}}, heads_messages());
    } else {
        // A run that did not test the claim says what the one that does costs, measured here.
        const HeadsOptions full;
        detail::set_timing(r,
                           {"timing_full",
                            {{"widths", {timing, "; "}},
                             {"full_widths", sizes(full.d_models)},
                             {"full_steps", std::to_string(full.train.steps)},
                             {"seconds", detail::format("%.0f", full_run_seconds(full))}}},
                           heads_messages());
    }
    return r;
}

namespace {
const detail::ParameterTable<HeadsOptions>& heads_parameters() {
    using O = HeadsOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 1, 512, "task length")
        .integers("d-models", &O::d_models, 2, 2048, "model widths to sweep, comma-separated")
        .integer("layers", &O::num_layers, 1, 24, "Transformer blocks")
        .integers("heads", &O::heads, 1, 256, "head counts to compare, comma-separated")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::heads_entry() {
    Experiment e;
    e.name = "heads";
    e.section = "§3.2 §3.3";
    e.claim = kHeadsClaim;
    e.summary = "head-count sweep 1..16 at d_model 512 and 64: loss, accuracy, steps/s";
    e.parameters = heads_parameters().parameters();
    e.quick = {{"d-models", "128,64"}, {"length", "6"}, {"steps", "60"}, {"log-every", "10"}, {"warmup", "6"},
               {"batch", "8"}, {"eval-batches", "2"}};
    e.messages = heads_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_heads(heads_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
