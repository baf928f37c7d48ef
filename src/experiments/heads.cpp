// §3.3: the number of heads at a fixed width is a trade-off. More heads look at more things at
// once, but each gets a head dimension of d_model / h: too many and every head is too narrow to
// carry a useful query/key match. The cost in multiply-adds stays the same; the wall time does
// not (more, smaller matrices).
#include <algorithm>

#include "attnlab/core/error.hpp"
#include "common.hpp"

namespace attnlab::experiments {

Result run_heads(const HeadsOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_heads";
    o.train.validate(where);
    if (o.heads.empty()) fail<ConfigError>(where, ": heads must not be empty");
    const auto task = detail::sequence_task(where, o.task, o.length);

    Result r;
    r.name = "heads";
    r.claim = "§3.3: the head count is a trade-off at a fixed d_model (the article: h = 8 best at 512, h = 16 "
              "under-fits: each head too narrow)";
    r.config = {{"task", detail::format("%s, length %zu (T = %zu)", o.task.c_str(), o.length, task->seq_len())},
                {"model", detail::format("decoder, %zu layers, d_model %zu, rope, pre-LN", o.num_layers, o.d_model)}};
    detail::add_training_config(r, o.train);

    std::vector<std::string> names;
    std::vector<detail::RunOutcome> runs;
    std::vector<EvalResult> finals;
    Table table{"final", {"heads", "head dim", "parameters", "held-out loss", "held-out accuracy", "steps/s"}, {}};
    for (std::size_t i = 0; i < o.heads.size(); ++i) {
        const ModelConfig config = detail::decoder_config(*task, o.d_model, o.heads[i], o.num_layers);
        config.validate();
        Model model(config, o.train.seed);
        names.push_back(detail::format("h=%zu", o.heads[i]));
        runs.push_back(detail::train_run(model, *task, detail::trainer_options(o.train), o.train,
                                         {names.back(), i, o.heads.size()}, progress));
        if (runs.back().failed_step) r.notes.push_back(names.back() + " stopped: " + runs.back().error);
        finals.push_back(detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size));
        table.rows.push_back({std::to_string(o.heads[i]), std::to_string(config.head_dim()),
                              std::to_string(model.num_parameters()), detail::number(finals.back().loss),
                              detail::percent(finals.back().accuracy),
                              detail::number(runs.back().steps_per_second(), 1)});
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(names, runs));

    auto by_loss = [&](std::size_t a, std::size_t b) { return finals[a].loss < finals[b].loss; };
    std::vector<std::size_t> order(finals.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const std::size_t best = *std::min_element(order.begin(), order.end(), by_loss);
    const std::size_t worst = *std::max_element(order.begin(), order.end(), by_loss);
    auto speed = [&](std::size_t i) { return runs[i].steps_per_second(); };
    const std::size_t fastest = *std::max_element(order.begin(), order.end(),
                                                  [&](std::size_t a, std::size_t b) { return speed(a) < speed(b); });
    const std::size_t slowest = *std::min_element(order.begin(), order.end(),
                                                  [&](std::size_t a, std::size_t b) { return speed(a) < speed(b); });
    r.conclusion = detail::format(
        "best held-out loss at h=%zu (head dim %zu): %.3f, accuracy %s; worst at h=%zu (head dim %zu): %.3f, accuracy %s; "
        "speed from %.1f steps/s (h=%zu) down to %.1f (h=%zu)",
        o.heads[best], o.d_model / o.heads[best], finals[best].loss, detail::percent(finals[best].accuracy).c_str(),
        o.heads[worst], o.d_model / o.heads[worst], finals[worst].loss, detail::percent(finals[worst].accuracy).c_str(),
        speed(fastest), o.heads[fastest], speed(slowest), o.heads[slowest]);
    return r;
}

}  // namespace attnlab::experiments
