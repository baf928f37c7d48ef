// §9.3: LayerNorm placement (Xiong et al. 2020). Post-LN, LN(x + f(x)), puts every residual
// branch behind a normalisation, so the gradient at the output layers is large at initialisation
// and a deep stack needs warm-up; Pre-LN, x + f(LN(x)), keeps an identity path from the loss to
// every block and trains at the same learning rate without it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"
#include "common.hpp"

namespace attnlab::experiments {

Result run_norm(const NormOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_norm";
    o.train.validate(where);
    if (o.train.warmup_steps == 0) fail<ConfigError>(where, ": warmup_steps (of the warm-up runs) must be positive");
    const auto task = detail::sequence_task(where, o.task, o.length);

    Result r;
    r.name = "norm";
    r.claim = "§9.3: a deep Post-LN Transformer is unstable without learning-rate warm-up; Pre-LN trains without it";
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
    std::vector<std::string> names, status;
    std::vector<detail::RunOutcome> runs;
    std::vector<double> final_loss;
    Table table{"final", {"run", "held-out loss", "held-out accuracy", "max grad norm", "status"}, {}};
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
            status.push_back(detail::format("diverged at step %zu", *run.failed_step));
            r.notes.push_back(names.back() + ": " + run.error);
        } else {
            const EvalResult e = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);
            loss = e.loss;
            acc = e.accuracy;
            status.push_back(std::isfinite(loss) && loss < stuck_loss ? "learned" : "not learning");
        }
        final_loss.push_back(loss);
        table.rows.push_back({names.back(), detail::number(loss), detail::percent(acc),
                              detail::format("%.3g", static_cast<double>(run.max_grad_norm)), status.back()});
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(names, runs));

    std::string summary;
    for (std::size_t i = 0; i < names.size(); ++i) {
        summary += (summary.empty() ? "" : "; ") + names[i] + ": " +
                   (std::isnan(final_loss[i]) ? status[i] : detail::format("%.3f (%s)", final_loss[i], status[i].c_str()));
    }
    r.conclusion = detail::format("held-out loss after %zu steps at lr %g with %zu layers: %s", o.train.steps,
                                  static_cast<double>(o.train.lr), o.num_layers, summary.c_str());
    return r;
}

}  // namespace attnlab::experiments
