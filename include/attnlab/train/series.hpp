// attnlab/train/series.hpp: a seeded time-series forecasting task and its seasonal-naive baseline.
//
// What it is for: the data side of the article's §7.2 comparison (attention against an LSTM on
// strongly periodic series): windows of a synthetic series — a sum of sines with chosen periods, a
// linear trend, Gaussian noise and optionally a period that drifts — with the timestamps of every
// step, and the next `horizon` values to forecast. All randomness comes from attnlab::Rng, so a seed
// gives the same batch natively and in WebAssembly. The seasonal-naive forecast (repeat the last
// season of the context) is the baseline a model must beat. Not for: token tasks (tasks.hpp), real
// data, or computing the model's loss (nn/loss.hpp: mse_forward).
//
//   attnlab::SeriesOptions options;                    // context 48, horizon 12, periods {12, 24}
//   attnlab::SeriesTask task(options);
//   attnlab::Rng rng(7);
//   attnlab::SeriesBatch batch = task.sample(32, rng);  // values (32, 48, 1), time (32, 60), forecast (32, 12)
//   attnlab::Tensor2 naive = seasonal_naive_forecast(batch.values, task.season(), task.horizon());
//   attnlab::RegressionResult base = attnlab::mse_forward(naive, batch.forecast);
//
// One example, with t0 drawn uniformly in [0, kSeriesMaxStart) and i = 0 .. T + horizon - 1 its
// steps at timestamps t = t0 + i:
//   y(t) = level + slope · i + Σ_k a_k · sin(θ_k(i)) + noise · ε_i,   ε_i ~ N(0, 1)
// level ~ U(-0.5, 0.5), slope ~ U(-trend, trend), a_k ~ U(0.5, 1.5). The phase θ_k is tied to the
// timestamp, as a daily or weekly cycle is tied to the clock: without drift θ_k(i) = 2π t / P_k, so
// a model that knows t (a time-aware encoding) knows where in each cycle a step is; with drift the
// period grows linearly over the example, P_k(i) = P_k · (1 + drift · i / (T + horizon)), and θ_k
// advances by 2π / P_k(i) per step from θ_k(0) = 2π t0 / P_k (a cycle that slowly loses its beat).
// Feature 0 is the series to forecast; features 1 .. F-1 are further series of the same form (own
// amplitudes, level, slope and noise, same periods and timestamps) that the model may read.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/train/tasks.hpp"

namespace attnlab {

// Largest start timestamp t0 (exclusive): windows start anywhere in a long record.
inline constexpr std::size_t kSeriesMaxStart = 100000;

// Seed-independent configuration; validate() throws ConfigError naming the option and its value.
struct SeriesOptions {
    std::size_t context = 48;                  // T: steps the model reads, in [2, 4096]
    std::size_t horizon = 12;                  // steps to forecast, in [1, 1024]
    std::vector<std::size_t> periods{12, 24};  // P_k: 1 to 8 periods, each in [2, 4096]
    std::size_t features = 1;                  // F: series per example, in [1, 64]; feature 0 is forecast
    float trend = 0.01f;                       // largest |slope| per step, in [0, 1]
    float noise = 0.1f;                        // standard deviation of the noise, in [0, 10]
    float drift = 0.0f;                        // relative growth of every period over an example, in [0, 1)
    void validate() const;
};

// One batch: what the model reads, when, and what it must forecast.
struct SeriesBatch {
    Tensor3 values;    // (B, T, F) the context window
    Tensor2 time;      // (B, T + horizon) timestamps t0 + i of the context steps, then of the forecast steps
    Tensor2 forecast;  // (B, horizon) feature 0 at the steps after the context
};

class SeriesTask {
public:
    explicit SeriesTask(SeriesOptions options);  // ConfigError for bad options (SeriesOptions::validate)
    const SeriesOptions& options() const { return options_; }
    std::size_t context() const { return options_.context; }
    std::size_t horizon() const { return options_.horizon; }
    std::size_t features() const { return options_.features; }
    // The season the naive baseline repeats: the least common multiple of the periods when it fits
    // in the context (one season then repeats every period exactly), otherwise the longest period
    // that fits, otherwise 1 (repeat the last value).
    std::size_t season() const { return season_; }

    // batch_size > 0 examples drawn from rng; the same rng state gives the same batch.
    SeriesBatch sample(std::size_t batch_size, Rng& rng) const {
        SeriesBatch batch;
        sample_into(batch_size, rng, batch);
        return batch;
    }
    // The same batch as sample(), written into `batch`; tensors that already have the shapes are
    // reused, so a training loop allocates nothing after the first step.
    void sample_into(std::size_t batch_size, Rng& rng, SeriesBatch& batch) const;

private:
    SeriesOptions options_;
    std::size_t season_;
};

// The seasonal-naive forecast of feature 0: values (B, T, F) -> (B, horizon) with
// forecast[b][j] = values[b][T - season + (j mod season)][0], the last season repeated.
// ConfigError if season is 0 or longer than T, or horizon is 0.
Tensor2 seasonal_naive_forecast(const Tensor3& values, std::size_t season, std::size_t horizon);

// The `series` Task of make_task (TaskKind::regression, TaskInput::values): a SeriesTask whose
// Batch carries values, time, forecast and the seasonal-naive baseline of the same batch. Unset
// options take SeriesOptions' defaults; length, vocab and k do not apply (ConfigError naming
// them), bad values are refused by SeriesOptions::validate. seq_len() is the context, vocab_size()
// 0, num_classes() the horizon; decode() refuses (there are no tokens).
std::unique_ptr<Task> make_series_task(const TaskOptions& options);
// The series option set in options, first in TaskOptions' order ("context", "horizon", ...), or
// nullptr: make_task refuses them for every other task.
const char* first_series_option(const TaskOptions& options);

}  // namespace attnlab
