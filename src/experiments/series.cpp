// §7.2: on strongly periodic series a tuned LSTM is sometimes steadier than attention. Three
// forecasters of about equal size — a Transformer with sinusoidal positions, the same with the
// time-aware encoding (the timestamps' phase at the series' periods), and an LSTM — trained from
// several seeds on the series task, against the seasonal-naive forecast of the same batches.
// "Steadier" is read as the spread (standard deviation) of the held-out MSE across seeds.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kSeriesClaim =
    "§7.2: on strongly periodic series an LSTM can be steadier than attention (seed-to-seed spread of the error)";

// The English templates of the conclusion and the timing line (Result::conclusion_message).
const MessageTemplates& series_messages() {
    static const MessageTemplates m = {
        {"conclusion",
         "{verdict}: held-out MSE std over {seeds} seeds LSTM {lstm_std}, Transformer (sinusoidal) "
         "{sinusoidal_std}, Transformer (time-aware) {time_std}; mean MSE {lstm_mse}, {sinusoidal_mse}, "
         "{time_mse}; seasonal naive {naive_mse}. Lowest mean MSE: {best}; beating the baseline: {beaten}"},
        {"held", "the claim held"},
        {"not_held", "the claim did NOT hold here"},
        {"not_shown",
         "not shown by this run: the LSTM and a Transformer must both beat the seasonal-naive baseline for their "
         "spread over seeds to compare models that learned the series (more steps)"},
        {"model", "{model}"},
        {"none", "none"},
        {"timing", "steps/s: {sinusoidal} (Transformer sinusoidal), {time} (time-aware), {lstm} (LSTM)"},
        {"run", "{model} seed {seed}"},
    };
    return m;
}

constexpr std::size_t kModels = 3;
constexpr const char* kNames[kModels] = {"Transformer (sinusoidal)", "Transformer (time-aware)", "LSTM"};

ModelConfig forecaster_config(const Task& task, Architecture architecture, PositionalKind positional,
                              std::size_t width, std::size_t layers) {
    ModelConfig c;
    c.kind = ModelKind::forecaster;
    c.architecture = architecture;
    c.num_features = task.num_features();
    c.horizon = task.horizon();
    c.time_periods = task.time_periods();
    c.max_len = task.seq_len();
    c.d_model = width;
    c.num_heads = 4;
    c.ff_dim = 4 * width;
    c.num_layers = layers;
    c.positional = positional;
    return c;
}

struct Spread {
    double mean = 0.0, std = 0.0;
};
Spread spread_of(const std::vector<double>& x) {
    Spread s;
    for (double v : x) s.mean += v;
    s.mean /= static_cast<double>(x.size());
    for (double v : x) s.std += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(s.std / static_cast<double>(x.size()));
    return s;
}

}  // namespace

Result run_series(const SeriesExperimentOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_series";
    o.train.validate(where);
    if (o.seeds < 2) fail<ConfigError>(where, ": seeds must be at least 2 to measure a spread, got ", o.seeds);
    if (o.d_model % 4 != 0) fail<ConfigError>(where, ": d_model must be a multiple of 4 (4 heads), got ", o.d_model);
    TaskOptions options;
    options.context = o.context;
    options.horizon = o.horizon;
    options.periods = o.periods;
    options.noise = o.noise;
    options.drift = o.drift;
    const auto task = make_task("series", options);

    ModelConfig configs[kModels] = {
        forecaster_config(*task, Architecture::transformer, PositionalKind::sinusoidal, o.d_model, o.layers),
        forecaster_config(*task, Architecture::transformer, PositionalKind::time, o.d_model, o.layers),
        forecaster_config(*task, Architecture::lstm, PositionalKind::sinusoidal, o.d_model, 1),
    };
    std::size_t width = o.lstm_width;
    if (width == 0) {
        const std::uint64_t target = configs[0].parameter_count();
        std::uint64_t best_gap = std::numeric_limits<std::uint64_t>::max();
        for (std::size_t w = 2; w <= 1024; ++w) {
            const std::uint64_t n = forecaster_config(*task, Architecture::lstm, PositionalKind::sinusoidal, w, 1).parameter_count();
            const std::uint64_t gap = n > target ? n - target : target - n;
            if (gap < best_gap) {
                best_gap = gap;
                width = w;
            }
        }
    }
    configs[2] = forecaster_config(*task, Architecture::lstm, PositionalKind::sinusoidal, width, 1);

    Result r;
    r.name = "series";
    r.claim = kSeriesClaim;
    std::string periods;
    for (std::size_t p : o.periods) periods += (periods.empty() ? "" : ",") + std::to_string(p);
    r.config = {
        {"task", detail::format("series: context %zu, horizon %zu, periods %s, noise %s, drift %s, trend 0.01",
                                o.context, o.horizon, periods.c_str(), detail::number(o.noise, 3).c_str(),
                                detail::number(o.drift, 3).c_str())},
        {"transformers", detail::format("%zu blocks, d_model %zu, 4 heads, ff %zu, pre-LN, not causal, head on the last "
                                        "step: %llu (sinusoidal) and %llu (time-aware) parameters",
                                        o.layers, o.d_model, 4 * o.d_model,
                                        static_cast<unsigned long long>(configs[0].parameter_count()),
                                        static_cast<unsigned long long>(configs[1].parameter_count()))},
        {"lstm", detail::format("1 layer of width %zu, head on the last step: %llu parameters", width,
                                static_cast<unsigned long long>(configs[2].parameter_count()))},
        {"seeds", detail::format("%zu per model (weights and batches): %llu .. %llu", o.seeds,
                                 static_cast<unsigned long long>(o.train.seed),
                                 static_cast<unsigned long long>(o.train.seed + o.seeds - 1))},
    };
    detail::add_training_config(r, o.train);

    std::vector<double> mse[kModels], mae[kModels];
    double speed[kModels] = {0, 0, 0};
    std::vector<detail::RunOutcome> first_runs;
    EvalResult baseline;
    const std::size_t runs = kModels * o.seeds;
    for (std::size_t m = 0; m < kModels; ++m) {
        for (std::size_t s = 0; s < o.seeds; ++s) {
            TrainingOptions train = o.train;
            train.seed = o.train.seed + s;
            Model model(configs[m], train.seed);
            const std::string name =
                detail::phrase(r, {"run", {{"model", kNames[m]}, {"seed", std::to_string(train.seed)}}}, series_messages());
            const detail::RunOutcome run = detail::train_run(model, *task, detail::trainer_options(train), train,
                                                             {name, m * o.seeds + s, runs}, progress);
            if (run.failed_step) detail::stopped_note(r, name, run);
            const EvalResult e = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);
            mse[m].push_back(e.loss);
            mae[m].push_back(e.mae);
            speed[m] += run.steps_per_second() / static_cast<double>(o.seeds);
            baseline = e;  // the same held-out batches for every run
            if (s == 0) first_runs.push_back(run);
        }
    }

    Table table{"forecast",
                {"model", "parameters", "mean MSE", "MSE std over seeds", "mean MAE", "beats baseline", "steps/s"},
                {}};
    Table per_seed{"per_seed", {"model", "seed", "held-out MSE", "held-out MAE"}, {}};
    Spread spreads[kModels];
    for (std::size_t m = 0; m < kModels; ++m) {
        spreads[m] = spread_of(mse[m]);
        table.rows.push_back({kNames[m], std::to_string(configs[m].parameter_count()), detail::number(spreads[m].mean),
                              detail::number(spreads[m].std, 5), detail::number(spread_of(mae[m]).mean),
                              spreads[m].mean < baseline.baseline_mse ? "yes" : "no", detail::number(speed[m], 1)});
        for (std::size_t s = 0; s < o.seeds; ++s) {
            per_seed.rows.push_back({kNames[m], std::to_string(o.train.seed + s), detail::number(mse[m][s]),
                                     detail::number(mae[m][s])});
        }
    }
    table.rows.push_back({"seasonal naive", "0", detail::number(baseline.baseline_mse), "0",
                          detail::number(baseline.baseline_mae), "-", "-"});
    r.tables.push_back(table);
    r.tables.push_back(per_seed);
    Series curves = detail::loss_series({kNames[0], kNames[1], kNames[2]}, first_runs);
    curves.name = "training MSE (first seed)";
    r.series.push_back(curves);

    // Held: the LSTM's held-out MSE varies less across seeds than both Transformers'.
    const bool held = spreads[2].std < spreads[0].std && spreads[2].std < spreads[1].std;
    std::size_t best = 0;
    for (std::size_t m = 1; m < kModels; ++m) best = spreads[m].mean < spreads[best].mean ? m : best;
    std::vector<Message> beaten;
    for (std::size_t m = 0; m < kModels; ++m) {
        if (spreads[m].mean < baseline.baseline_mse) beaten.push_back({"model", {{"model", kNames[m]}}});
    }
    if (beaten.empty()) beaten.push_back({"none", {}});
    // Steadier only means something between models that learned the series: the LSTM and at
    // least one Transformer below the seasonal-naive error.
    const bool shown = spreads[2].mean < baseline.baseline_mse &&
                       (spreads[0].mean < baseline.baseline_mse || spreads[1].mean < baseline.baseline_mse);
    r.verdict = !shown ? Verdict::untested : held ? Verdict::held : Verdict::not_held;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", Message{!shown ? "not_shown" : held ? "held" : "not_held", {}}},
                       {"seeds", std::to_string(o.seeds)},
                       {"lstm_std", detail::number(spreads[2].std, 5)},
                       {"sinusoidal_std", detail::number(spreads[0].std, 5)},
                       {"time_std", detail::number(spreads[1].std, 5)},
                       {"lstm_mse", detail::number(spreads[2].mean)},
                       {"sinusoidal_mse", detail::number(spreads[0].mean)},
                       {"time_mse", detail::number(spreads[1].mean)},
                       {"naive_mse", detail::number(baseline.baseline_mse)},
                       {"best", kNames[best]},
                       {"beaten", {beaten, ", "}}}},
                     series_messages());
    detail::set_timing(r,
                       {"timing",
                        {{"sinusoidal", detail::format("%.1f", speed[0])},
                         {"time", detail::format("%.1f", speed[1])},
                         {"lstm", detail::format("%.1f", speed[2])}}},
                       series_messages());
    return r;
}

namespace {
const detail::ParameterTable<SeriesExperimentOptions>& series_parameters() {
    using O = SeriesExperimentOptions;
    static const auto table = detail::ParameterTable<O>()
        .integer("context", &O::context, 2, 4096, "steps the models read")
        .integer("horizon", &O::horizon, 1, 1024, "steps to forecast")
        .integers("periods", &O::periods, 2, 4096, "periods of the sines (and of the time-aware encoding), comma-separated")
        .number("noise", &O::noise, 0, 10, "noise standard deviation")
        .number("drift", &O::drift, 0, 0.99, "relative growth of the periods over an example")
        .integer("d-model", &O::d_model, 4, 1024, "Transformer width (4 heads)")
        .integer("layers", &O::layers, 1, 16, "Transformer blocks")
        .integer("lstm-width", &O::lstm_width, 0, 1024, "LSTM width (0 = about the Transformer's parameters)")
        .integer("seeds", &O::seeds, 2, 16, "runs per model (the spread is measured across them)")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::series_entry() {
    Experiment e;
    e.name = "series";
    e.section = "§7.2";
    e.claim = kSeriesClaim;
    e.summary = "forecasting a periodic series: Transformer (sinusoidal, time-aware) vs LSTM vs seasonal naive, over seeds";
    e.parameters = series_parameters().parameters();
    e.quick = {{"steps", "150"}, {"seeds", "2"}, {"log-every", "25"}, {"warmup", "10"}, {"eval-batches", "4"}};
    e.messages = series_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_series(series_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
