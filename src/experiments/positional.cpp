// §4.1 / §4.3: attention alone is permutation-equivariant, so an order-dependent task needs a
// positional encoding; a learned table has no row for a position it never saw, while sinusoidal
// and rotary encodings are functions of the position and can at least be evaluated beyond it
// (RoPE depends only on the offset between query and key).
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kPositionalClaim =
    "§4.1/§4.3: without positions attention cannot tell order (it is permutation-equivariant); a learned table cannot "
    "extrapolate past its length, RoPE (relative) extrapolates better than absolute encodings";

// The English templates of the conclusion (Result::conclusion_message).
const MessageTemplates& positional_messages() {
    static const MessageTemplates m = {
        {"conclusion",
         "{verdicts}. accuracy at the training length {length}: {at_train} (best: {best}); at length "
         "{test_length}: {at_test}; permutation gap without the mask: {gaps}"},
        {"none_held", "without positions: permutation-equivariant and far behind (held)"},
        {"none_not_behind",
         "without positions: permutation-equivariant, but not far behind on this task (did NOT hold)"},
        {"none_not_equivariant", "without positions the outputs were NOT permutation-equivariant (did NOT hold)"},
        {"pe_not_ahead",
         "{pe} was NOT ahead of no positions at the training length ({accuracy} vs {none}): it did not learn the "
         "order here (did NOT hold)"},
        {"rope_held", "at 2L rope beats {pe} (held)"},
        {"rope_not_held", "at 2L rope did NOT beat {pe} by 10 points (did NOT hold)"},
        {"pe", "{pe}"},
        {"pe_accuracy", "{pe} {accuracy}"},
        {"pe_cannot_run", "{pe} cannot run"},
        {"pe_gap", "{pe} {gap}"},
        {"loss_at", "loss @{length}"},
        {"accuracy_at", "accuracy @{length}"},
        {"cannot_run", "{pe} cannot run at length {length}: {error}"},
    };
    return m;
}

}  // namespace

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
    r.claim = kPositionalClaim;
    r.config = {{"task", detail::format("%s, length %zu%s (T = %zu); extrapolation at length %zu (T = %zu)",
                                        o.task.c_str(), o.length,
                                        o.task == "k_back" ? detail::format(", k %zu", o.k).c_str() : "",
                                        task->seq_len(), test_length, long_task->seq_len())},
                {"model", detail::format("decoder, %zu layers, d_model %zu, %zu heads, pre-LN; learned max_len = %zu (rows "
                                         "past %zu never trained)", o.num_layers, o.d_model, o.num_heads,
                                         long_task->seq_len(), task->seq_len())},
                {"permutation gap", "max |f(Px) - P f(x)| / max |f(x)| of the same model without its causal mask, at "
                                    "initialisation, 8 sequences (0 up to rounding = permutation-equivariant)"}};
    detail::add_training_config(r, o.train);

    std::vector<detail::RunOutcome> runs;
    Table table{"final",
                {"pe", "parameters", "loss @train length", "accuracy @train length",
                 detail::phrase(r, {"loss_at", {{"length", std::to_string(test_length)}}}, positional_messages()),
                 detail::phrase(r, {"accuracy_at", {{"length", std::to_string(test_length)}}}, positional_messages()),
                 "permutation gap"},
                {}};
    struct Scores {
        std::string pe;
        double at_train, at_test;  // NaN at_test: could not be evaluated
        double gap;                // relative permutation gap without the mask
    };
    std::vector<Scores> scores;
    for (std::size_t i = 0; i < o.encodings.size(); ++i) {
        ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, o.num_layers);
        config.positional = positional_from_name(o.encodings[i]);
        // A learned table with rows for the test length: the rows past the training length stay
        // at their initial values, which is what "cannot extrapolate" means for it.
        config.max_len = long_task->seq_len();
        Model model(config, o.train.seed);
        runs.push_back(detail::train_run(model, *task, detail::trainer_options(o.train), o.train,
                                         {o.encodings[i], i, o.encodings.size()}, progress));
        if (runs.back().failed_step) detail::stopped_note(r, o.encodings[i], runs.back());
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
            detail::note(r,
                         {"cannot_run",
                          {{"pe", o.encodings[i]}, {"length", std::to_string(test_length)}, {"error", e.what()}}},
                         positional_messages());
        }
        ModelConfig unmasked = config;
        unmasked.causal = false;
        const detail::PermutationGap gap = detail::permutation_gap(unmasked, o.train.seed, task->seq_len(), 8, o.train.seed);
        const double relative = gap.scale > 0 ? gap.gap / gap.scale : 0.0;
        row.push_back(detail::format("%.2e", relative));
        table.rows.push_back(row);
        scores.push_back({o.encodings[i], at_train.accuracy, at_test, relative});
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(o.encodings, runs));

    // Conclusion: the best at the training length, every encoding's accuracy at the test length,
    // the permutation gaps, and each part of the claim checked where its encodings ran.
    double best_accuracy = 0.0;
    const Scores* none = nullptr;
    const Scores* rope = nullptr;
    for (const Scores& s : scores) {
        best_accuracy = std::max(best_accuracy, s.at_train);
        if (s.pe == "none") none = &s;
        if (s.pe == "rope") rope = &s;
    }
    std::vector<Message> at_train, at_test, best, gaps;
    for (const Scores& s : scores) {
        if (s.at_train == best_accuracy) best.push_back({"pe", {{"pe", s.pe}}});
        at_train.push_back({"pe_accuracy", {{"pe", s.pe}, {"accuracy", detail::percent(s.at_train)}}});
        at_test.push_back(std::isnan(s.at_test) ? Message{"pe_cannot_run", {{"pe", s.pe}}}
                                                : Message{"pe_accuracy", {{"pe", s.pe}, {"accuracy", detail::percent(s.at_test)}}});
        gaps.push_back({"pe_gap", {{"pe", s.pe}, {"gap", detail::format("%.1e", s.gap)}}});
    }
    // Every arm the claim covers is weighed: no positions is equivariant and far behind; each
    // encoding that has positions is ahead of it at the training length (one that is not did
    // not learn the order, and shows nothing); rope beats each absolute encoding at 2L.
    std::vector<Message> verdicts;
    std::size_t parts_held = 0;  // of verdicts.size() sub-claims tested
    if (none) {
        const bool equivariant = none->gap < 1e-4;
        const bool worse = none->at_train + 0.2 < best_accuracy;
        parts_held += equivariant && worse ? 1 : 0;
        verdicts.push_back({equivariant && worse ? "none_held" : equivariant ? "none_not_behind" : "none_not_equivariant", {}});
        for (const Scores& s : scores) {
            if (&s == none || s.at_train > none->at_train + 0.2) continue;
            verdicts.push_back({"pe_not_ahead",
                                {{"pe", s.pe}, {"accuracy", detail::percent(s.at_train)}, {"none", detail::percent(none->at_train)}}});
        }
    }
    if (rope) {
        for (const Scores& s : scores) {
            if (s.pe != "learned" && s.pe != "sinusoidal") continue;
            const double absolute_test = std::isnan(s.at_test) ? 0.0 : s.at_test;
            const bool rope_ahead = rope->at_test > absolute_test + 0.1;
            parts_held += rope_ahead ? 1 : 0;
            verdicts.push_back({rope_ahead ? "rope_held" : "rope_not_held", {{"pe", s.pe}}});
        }
    }
    r.verdict = verdicts.empty()                  ? Verdict::untested
                : parts_held == verdicts.size() ? Verdict::held
                : parts_held == 0               ? Verdict::not_held
                                                : Verdict::partly;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdicts", {verdicts, "; "}},
                       {"length", std::to_string(o.length)},
                       {"at_train", {at_train, ", "}},
                       {"best", {best, ", "}},
                       {"test_length", std::to_string(test_length)},
                       {"at_test", {at_test, ", "}},
                       {"gaps", {gaps, ", "}}}},
                     positional_messages());
    return r;
}

namespace {
const detail::ParameterTable<PositionalOptions>& positional_parameters() {
    using O = PositionalOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 1, 512, "training length L")
        .integer("test-length", &O::test_length, 0, 2048, "extrapolation length (0 = 2 x length)")
        .integer("k", &O::k, 1, 512, "k_back: distance to recall")
        .model_shape(&O::d_model, &O::num_heads, &O::num_layers)
        .texts("pe", &O::encodings, detail::token_positional_names(), "encodings to compare")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::positional_entry() {
    Experiment e;
    e.name = "positional";
    e.section = "§4.1 §4.3";
    e.claim = kPositionalClaim;
    e.summary = "none / sinusoidal / learned / rope: accuracy at length L and 2L, permutation gap without positions";
    e.parameters = positional_parameters().parameters();
    e.quick = {{"length", "16"}, {"steps", "200"}, {"lr", "0.006"}, {"log-every", "20"}, {"warmup", "10"},
               {"eval-batches", "2"}};
    e.messages = positional_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_positional(positional_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
