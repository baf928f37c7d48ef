#include "attnlab/train/series.hpp"

#include <array>
#include <cmath>
#include <numeric>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

constexpr double kTwoPi = 6.283185307179586;
constexpr std::size_t kMaxContext = 4096, kMaxHorizon = 1024, kMaxPeriods = 8, kMaxPeriod = 4096, kMaxFeatures = 64;

template <class T>
void require_in(const char* option, T value, T lo, T hi, bool hi_open = false) {
    if (!(value >= lo && (hi_open ? value < hi : value <= hi))) {
        fail<ConfigError>("SeriesOptions: ", option, " must be in [", lo, ", ", hi, hi_open ? ")" : "]", ", got ", option,
                          " ", value);
    }
}

std::size_t season_of(const SeriesOptions& o) {
    std::size_t lcm = 1;
    for (std::size_t p : o.periods) {
        lcm = std::lcm(lcm, p);
        if (lcm > o.context) break;
    }
    if (lcm <= o.context) return lcm;
    std::size_t longest = 1;
    for (std::size_t p : o.periods) {
        if (p <= o.context && p > longest) longest = p;
    }
    return longest;
}

}  // namespace

void SeriesOptions::validate() const {
    require_in<std::size_t>("context", context, 2, kMaxContext);
    require_in<std::size_t>("horizon", horizon, 1, kMaxHorizon);
    if (periods.empty() || periods.size() > kMaxPeriods) {
        fail<ConfigError>("SeriesOptions: periods must hold 1 to ", kMaxPeriods, " periods, got ", periods.size());
    }
    for (std::size_t p : periods) require_in<std::size_t>("each period", p, 2, kMaxPeriod);
    require_in<std::size_t>("features", features, 1, kMaxFeatures);
    require_in("trend", trend, 0.0f, 1.0f);
    require_in("noise", noise, 0.0f, 10.0f);
    require_in("drift", drift, 0.0f, 1.0f, /*hi_open=*/true);
}

SeriesTask::SeriesTask(SeriesOptions options) : options_(std::move(options)) {
    options_.validate();
    season_ = season_of(options_);
}

void SeriesTask::sample_into(std::size_t batch_size, Rng& rng, SeriesBatch& batch) const {
    const SeriesOptions& o = options_;
    if (batch_size == 0) fail<ConfigError>("SeriesTask::sample: batch_size must be positive, got 0");
    const std::size_t T = o.context, H = o.horizon, F = o.features, n = T + H, K = o.periods.size();
    require_allocatable({batch_size, n, F}, "SeriesTask::sample", "the batch");
    // resize keeps the buffers when the shapes are unchanged
    batch.values.resize({batch_size, T, F});
    batch.time.resize({batch_size, n});
    batch.forecast.resize({batch_size, H});
    std::array<double, kMaxPeriods> phase{};
    std::array<float, kMaxPeriods> amplitude{};
    for (std::size_t b = 0; b < batch_size; ++b) {
        const std::size_t t0 = rng.below(static_cast<std::uint32_t>(kSeriesMaxStart));
        for (std::size_t i = 0; i < n; ++i) batch.time(b, i) = static_cast<float>(t0 + i);
        // Draws in a fixed order per feature: level, slope, amplitudes, then one noise draw per step.
        for (std::size_t f = 0; f < F; ++f) {
            const float level = rng.uniform(-0.5f, 0.5f);
            const float slope = rng.uniform(-o.trend, o.trend);
            for (std::size_t k = 0; k < K; ++k) {
                amplitude[k] = rng.uniform(0.5f, 1.5f);
                phase[k] = kTwoPi * std::fmod(double(t0), double(o.periods[k])) / double(o.periods[k]);
            }
            for (std::size_t i = 0; i < n; ++i) {
                double y = double(level) + double(slope) * double(i);
                for (std::size_t k = 0; k < K; ++k) {
                    y += double(amplitude[k]) * std::sin(phase[k]);
                    // θ advances by 2π / P(i); with no drift P(i) = P and θ = 2π t / P exactly (mod 2π).
                    const double period = double(o.periods[k]) * (1.0 + double(o.drift) * double(i) / double(n));
                    phase[k] = std::fmod(phase[k] + kTwoPi / period, kTwoPi);
                }
                y += double(o.noise) * double(rng.normal());
                if (i < T) batch.values(b, i, f) = static_cast<float>(y);
                else if (f == 0) batch.forecast(b, i - T) = static_cast<float>(y);
            }
        }
    }
}

Tensor2 seasonal_naive_forecast(const Tensor3& values, std::size_t season, std::size_t horizon) {
    constexpr const char* where = "seasonal_naive_forecast";
    const std::size_t B = values.shape(0), T = values.shape(1), F = values.shape(2);
    if (season == 0 || season > T) {
        fail<ConfigError>(where, ": season must be in [1, T = ", T, "] (values ", shape_string(values.shape()),
                          "), got season ", season);
    }
    if (horizon == 0) fail<ConfigError>(where, ": horizon must be positive, got 0");
    if (F == 0) fail<ShapeError>(where, ": values must have at least one feature, got ", shape_string(values.shape()));
    Tensor2 out = Tensor2::from_shape({B, horizon});  // (B, horizon)
    for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t j = 0; j < horizon; ++j) out(b, j) = values(b, T - season + j % season, 0);
    }
    return out;
}

}  // namespace attnlab
