// §9.1: why the weights are a softmax. Sigmoid σ(s − ln n_i) and ReLU max(s, 0) / n_i
// (attention/normalizer.hpp) weigh each key on its own: the weights of a query need not sum to 1
// and the keys do not compete. The same decoder trained with each; the entropy of the trained
// weights (each row divided by its sum) shows how sharply each normaliser picks its keys.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kNormalizerClaim =
    "§9.1: softmax attention trains better than sigmoid or ReLU weights (keys compete for a budget that sums to 1)";

// The English templates of the conclusion (Result::conclusion_message).
const MessageTemplates& normalizer_messages() {
    static const MessageTemplates m = {
        {"conclusion", "{verdict} after {steps} steps; held-out loss (accuracy): {runs}"},
        {"not_run", "softmax was not run"},
        {"held", "the claim held: softmax ended with the lowest held-out loss"},
        {"not_held", "the claim did NOT hold here: {best} ended with a lower held-out loss than softmax"},
        {"run", "{normalizer} {loss} ({accuracy})"},
    };
    return m;
}

// Mean over the rows of every block and head of held-out sequences: the entropy (nats) of the
// row's weights divided by their sum, and the row sums themselves; rows with zero total skipped.
struct WeightStats {
    double entropy = 0.0;
    double uniform_entropy = 0.0;  // mean ln(keys seen) of the same rows
    double row_sum = 0.0;
    double zero_rows = 0.0;        // share of rows whose weights are all 0 (relu)
};

WeightStats weight_stats(const Model& model, const Task& task, std::size_t sequences) {
    Rng rng(0x9E71);
    const Batch batch = task.sample(sequences, rng);
    WeightStats s;
    std::size_t rows = 0, all = 0;
    for (std::size_t b = 0; b < sequences; ++b) {
        const Tensor4 maps = model.attention_maps(batch.tokens, {}, b);  // (L, H, T, T)
        for (std::size_t l = 0; l < maps.shape(0); ++l) {
            for (std::size_t h = 0; h < maps.shape(1); ++h) {
                for (std::size_t i = 0; i < maps.shape(2); ++i) {
                    double sum = 0.0;
                    for (std::size_t j = 0; j <= i; ++j) sum += maps(l, h, i, j);
                    ++all;
                    if (!(sum > 0.0)) {
                        s.zero_rows += 1.0;
                        continue;
                    }
                    double entropy = 0.0;
                    for (std::size_t j = 0; j <= i; ++j) {
                        const double p = maps(l, h, i, j) / sum;
                        if (p > 0.0) entropy -= p * std::log(p);
                    }
                    s.entropy += entropy;
                    s.uniform_entropy += std::log(static_cast<double>(i + 1));
                    s.row_sum += sum;
                    ++rows;
                }
            }
        }
    }
    const double n = rows > 0 ? static_cast<double>(rows) : std::numeric_limits<double>::quiet_NaN();
    s.entropy /= n;
    s.uniform_entropy /= n;
    s.row_sum /= n;
    s.zero_rows /= static_cast<double>(all);
    return s;
}

}  // namespace

Result run_normalizer(const NormalizerOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_normalizer";
    o.train.validate(where);
    if (o.normalizers.empty()) fail<ConfigError>(where, ": normalizers must not be empty");
    for (const auto& name : o.normalizers) normalizer_from_name(name);  // every name checked before any training
    const auto task = detail::sequence_task(where, o.task, o.length);

    Result r;
    r.name = "normalizer";
    r.claim = kNormalizerClaim;
    r.config = {{"task", detail::format("%s, length %zu (T = %zu)", o.task.c_str(), o.length, task->seq_len())},
                {"model", detail::format("decoder, %zu layers, d_model %zu, %zu heads, rope, pre-LN", o.num_layers,
                                         o.d_model, o.num_heads)},
                {"normalizers", "softmax; sigmoid(s - ln n_i); relu max(s, 0) / n_i (n_i = keys query i sees)"},
                {"entropy", detail::format("every block and head, %zu held-out sequences; each row divided by its sum; "
                                           "rows summing to 0 counted apart",
                                           o.sequences)}};
    detail::add_training_config(r, o.train);

    std::vector<std::string> names;
    std::vector<detail::RunOutcome> runs;
    std::vector<double> losses, accuracies;
    Table table{"final",
                {"normalizer", "held-out loss", "held-out accuracy", "weight entropy (nats)", "uniform entropy (nats)",
                 "mean row sum", "all-zero rows"},
                {}};
    for (std::size_t i = 0; i < o.normalizers.size(); ++i) {
        ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, o.num_layers);
        config.normalizer = normalizer_from_name(o.normalizers[i]);
        config.validate();
        Model model(config, o.train.seed);
        names.push_back(o.normalizers[i]);
        runs.push_back(detail::train_run(model, *task, detail::trainer_options(o.train), o.train,
                                         {names.back(), i, o.normalizers.size()}, progress));
        double loss = std::numeric_limits<double>::quiet_NaN(), acc = loss;
        WeightStats w;
        w.entropy = w.uniform_entropy = w.row_sum = w.zero_rows = loss;
        if (runs.back().failed_step) {
            detail::stopped_note(r, names.back(), runs.back());
        } else {
            const EvalResult e = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);
            loss = e.loss;
            acc = e.accuracy;
            w = weight_stats(model, *task, o.sequences);
        }
        losses.push_back(loss);
        accuracies.push_back(acc);
        table.rows.push_back({names.back(), detail::number(loss), detail::percent(acc), detail::number(w.entropy, 3),
                              detail::number(w.uniform_entropy, 3), detail::number(w.row_sum, 3),
                              detail::percent(w.zero_rows)});
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(names, runs));

    // The claim holds when softmax has the lowest held-out loss (a stopped run counts as worst).
    auto score = [&](std::size_t i) { return std::isnan(losses[i]) ? std::numeric_limits<double>::infinity() : losses[i]; };
    std::size_t best = 0;
    for (std::size_t i = 1; i < names.size(); ++i) {
        if (score(i) < score(best)) best = i;
    }
    std::vector<Message> summary;
    for (std::size_t i = 0; i < names.size(); ++i) {
        summary.push_back({"run",
                           {{"normalizer", names[i]},
                            {"loss", detail::number(losses[i], 3)},
                            {"accuracy", detail::percent(accuracies[i])}}});
    }
    const bool softmax_ran = std::find(names.begin(), names.end(), "softmax") != names.end();
    const Message verdict = !softmax_ran               ? Message{"not_run", {}}
                            : names[best] == "softmax" ? Message{"held", {}}
                                                       : Message{"not_held", {{"best", names[best]}}};
    r.verdict = !softmax_ran ? Verdict::untested : names[best] == "softmax" ? Verdict::held : Verdict::not_held;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", verdict}, {"steps", std::to_string(o.train.steps)}, {"runs", {summary, ", "}}}},
                     normalizer_messages());
    return r;
}

namespace {
const detail::ParameterTable<NormalizerOptions>& normalizer_parameters() {
    using O = NormalizerOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 1, 512, "task length")
        .model_shape(&O::d_model, &O::num_heads, &O::num_layers)
        .texts("normalizers", &O::normalizers, choice_name_list<Normalizer>(), "normalisers to compare")
        .integer("sequences", &O::sequences, 1, 256, "held-out sequences whose weights are measured")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::normalizer_entry() {
    Experiment e;
    e.name = "normalizer";
    e.section = "§9.1";
    e.claim = kNormalizerClaim;
    e.summary = "the same decoder with softmax, sigmoid and relu attention weights: loss curves, accuracy, entropy";
    e.parameters = normalizer_parameters().parameters();
    e.quick = {{"steps", "120"}, {"log-every", "20"}, {"warmup", "10"}, {"eval-batches", "2"}, {"sequences", "4"}};
    e.messages = normalizer_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_normalizer(normalizer_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
