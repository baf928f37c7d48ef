// §4.1 / §4.3: attention alone is permutation-equivariant, so an order-dependent task needs a
// positional encoding; a learned table has no row for a position it never saw, while sinusoidal
// and rotary encodings are functions of the position and can at least be evaluated beyond it
// (RoPE depends only on the offset between query and key).
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"
#include "common.hpp"

namespace attnlab::experiments {

Result run_positional(const PositionalOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_positional";
    o.train.validate(where);
    if (o.encodings.empty()) fail<ConfigError>(where, ": encodings must not be empty");
    const std::size_t test_length = o.test_length == 0 ? 2 * o.length : o.test_length;
    TaskOptions train_options, test_options;
    train_options.length = o.length;
    test_options.length = test_length;
    if (o.task == "k_back") train_options.k = test_options.k = o.k;
    const auto task = make_task(o.task, train_options);
    const auto long_task = make_task(o.task, test_options);
    if (task->kind() != TaskKind::sequence) fail<ConfigError>(where, ": task '", o.task, "' is not a sequence task");

    Result r;
    r.name = "positional";
    r.claim = "§4.1/§4.3: without positions attention cannot tell order; a learned table cannot extrapolate past "
              "its length, RoPE (relative) extrapolates better than absolute encodings";
    r.config = {{"task", detail::format("%s, length %zu%s (T = %zu); extrapolation at length %zu (T = %zu)",
                                        o.task.c_str(), o.length,
                                        o.task == "k_back" ? detail::format(", k %zu", o.k).c_str() : "",
                                        task->seq_len(), test_length, long_task->seq_len())},
                {"model", detail::format("decoder, %zu layers, d_model %zu, %zu heads, pre-LN; learned max_len = %zu",
                                         o.num_layers, o.d_model, o.num_heads, task->seq_len())}};
    detail::add_training_config(r, o.train);

    std::vector<detail::RunOutcome> runs;
    Table table{"final",
                {"pe", "parameters", "loss @train length", "accuracy @train length",
                 detail::format("loss @%zu", test_length), detail::format("accuracy @%zu", test_length)},
                {}};
    struct Scores {
        std::string pe;
        double at_train, at_test;  // NaN at_test: could not be evaluated
    };
    std::vector<Scores> scores;
    for (std::size_t i = 0; i < o.encodings.size(); ++i) {
        ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, o.num_layers);
        config.positional = positional_from_name(o.encodings[i]);
        Model model(config, o.train.seed);
        runs.push_back(detail::train_run(model, *task, detail::trainer_options(o.train), o.train,
                                         {o.encodings[i], i, o.encodings.size()}, progress));
        if (runs.back().failed_step) r.notes.push_back(o.encodings[i] + " stopped: " + runs.back().error);
        const EvalResult at_train = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);
        std::vector<std::string> row{o.encodings[i], std::to_string(model.num_parameters()),
                                     detail::number(at_train.loss), detail::percent(at_train.accuracy)};
        double at_test = std::numeric_limits<double>::quiet_NaN();
        try {
            const EvalResult e = detail::evaluate(model, *long_task, o.train.eval_batches, o.train.batch_size);
            at_test = e.accuracy;
            row.push_back(detail::number(e.loss));
            row.push_back(detail::percent(e.accuracy));
        } catch (const ValueError& e) {
            row.push_back("n/a");
            row.push_back("n/a");
            r.notes.push_back(detail::format("%s cannot run at length %zu: ", o.encodings[i].c_str(), test_length) +
                              e.what());
        }
        table.rows.push_back(row);
        scores.push_back({o.encodings[i], at_train.accuracy, at_test});
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(o.encodings, runs));

    // Conclusion: the best at the training length, every encoding's accuracy at the test length.
    double best_accuracy = 0.0;
    for (const Scores& s : scores) best_accuracy = std::max(best_accuracy, s.at_train);
    std::string at_train, at_test, best;
    for (const Scores& s : scores) {
        if (s.at_train == best_accuracy) best += (best.empty() ? "" : ", ") + s.pe;
        at_train += (at_train.empty() ? "" : ", ") + s.pe + " " + detail::percent(s.at_train);
        at_test += (at_test.empty() ? "" : ", ") + s.pe + " " +
                   (std::isnan(s.at_test) ? std::string("cannot (no table rows)") : detail::percent(s.at_test));
    }
    r.conclusion = detail::format("accuracy at the training length %zu: %s (best: %s); at length %zu: %s",
                                  o.length, at_train.c_str(), best.c_str(), test_length, at_test.c_str());
    return r;
}

}  // namespace attnlab::experiments
