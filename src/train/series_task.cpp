// The `series` task of make_task: SeriesTask (series.cpp) behind the Task interface.
#include <string>

#include "attnlab/core/error.hpp"
#include "attnlab/train/series.hpp"

namespace attnlab {
namespace {

class SeriesForecastTask final : public Task {
public:
    explicit SeriesForecastTask(SeriesOptions options) : series_(std::move(options)) {}

    std::string name() const override { return "series"; }
    TaskKind kind() const override { return TaskKind::regression; }
    TaskInput input() const override { return TaskInput::values; }
    std::size_t vocab_size() const override { return 0; }
    std::size_t seq_len() const override { return series_.context(); }
    std::size_t num_classes() const override { return series_.horizon(); }
    std::size_t num_features() const override { return series_.features(); }
    std::size_t horizon() const override { return series_.horizon(); }
    std::vector<std::size_t> time_periods() const override { return series_.options().periods; }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        SeriesBatch& sb = scratch();
        series_.sample_into(batch_size, rng, sb);
        batch.values = sb.values;
        batch.time = sb.time;
        batch.forecast = sb.forecast;
        batch.baseline = seasonal_naive_forecast(sb.values, series_.season(), series_.horizon());  // (B, horizon)
        for (Index2* t : {&batch.tokens, &batch.targets}) {
            if (t->size() != 0) *t = Index2();
        }
        if (batch.labels.size() != 0) batch.labels = Index1();
        if (batch.padding.size() != 0) batch.padding = Mask2();
        if (batch.pixels.size() != 0) batch.pixels = Tensor3();
    }

    std::string decode(const std::int32_t*, std::size_t) const override {
        fail<ConfigError>("series::decode: the series task has no tokens; its batches hold values (B, T, F)");
    }

private:
    // One SeriesBatch per thread (a Task is shared and const): its buffers are reused.
    static SeriesBatch& scratch() {
        thread_local SeriesBatch batch;
        return batch;
    }
    SeriesTask series_;
};

}  // namespace

const char* first_series_option(const TaskOptions& o) {
    if (o.context) return "context";
    if (o.horizon) return "horizon";
    if (o.periods) return "periods";
    if (o.features) return "features";
    if (o.trend) return "trend";
    if (o.noise) return "noise";
    if (o.drift) return "drift";
    return nullptr;
}

std::unique_ptr<Task> make_series_task(const TaskOptions& options) {
    const std::pair<const char*, const std::optional<std::size_t>*> token_options[] = {
        {"length", &options.length}, {"vocab", &options.vocab}, {"k", &options.k}};
    for (const auto& [option, value] : token_options) {
        if (*value) {
            fail<ConfigError>("make_task(\"series\"): option ", option, " does not apply to this task (series takes "
                              "context, horizon, periods, features, trend, noise, drift), got ", option, "=", **value);
        }
    }
    SeriesOptions s;
    s.context = options.context.value_or(s.context);
    s.horizon = options.horizon.value_or(s.horizon);
    if (options.periods) s.periods = *options.periods;
    s.features = options.features.value_or(s.features);
    s.trend = options.trend.value_or(s.trend);
    s.noise = options.noise.value_or(s.noise);
    s.drift = options.drift.value_or(s.drift);
    return std::make_unique<SeriesForecastTask>(std::move(s));  // SeriesOptions::validate names a bad value
}

}  // namespace attnlab
