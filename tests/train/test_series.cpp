#include "attnlab/train/series.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/nn/loss.hpp"

namespace attnlab {
namespace {

SeriesOptions clean(std::vector<std::size_t> periods, std::size_t context = 48, std::size_t horizon = 12) {
    SeriesOptions o;
    o.periods = std::move(periods);
    o.context = context;
    o.horizon = horizon;
    o.trend = 0.0f;
    o.noise = 0.0f;
    return o;
}

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

TEST(Series, SameSeedGivesSameBatchAndAnotherSeedAnother) {
    SeriesOptions o;
    o.features = 2;
    o.drift = 0.2f;
    const SeriesTask task(o);
    Rng a(3), b(3), c(4);
    const SeriesBatch x = task.sample(5, a), y = task.sample(5, b), z = task.sample(5, c);
    EXPECT_EQ(x.values, y.values);
    EXPECT_EQ(x.time, y.time);
    EXPECT_EQ(x.forecast, y.forecast);
    EXPECT_NE(x.values, z.values);
    EXPECT_NE(x.time, z.time);
}

TEST(Series, BatchesHaveTheDocumentedShapesAndConsecutiveTimestamps) {
    SeriesOptions o;
    o.context = 20;
    o.horizon = 7;
    o.features = 3;
    const SeriesTask task(o);
    Rng rng(1);
    const SeriesBatch batch = task.sample(4, rng);
    EXPECT_EQ(batch.values.shape(), (std::array<std::size_t, 3>{4, 20, 3}));
    EXPECT_EQ(batch.time.shape(), (std::array<std::size_t, 2>{4, 27}));
    EXPECT_EQ(batch.forecast.shape(), (std::array<std::size_t, 2>{4, 7}));
    for (std::size_t b = 0; b < 4; ++b) {
        EXPECT_GE(batch.time(b, 0), 0.0f);
        EXPECT_LT(batch.time(b, 0), float(kSeriesMaxStart));
        for (std::size_t i = 1; i < 27; ++i) EXPECT_EQ(batch.time(b, i), batch.time(b, 0) + float(i));
    }
    for (float v : batch.values) ASSERT_TRUE(std::isfinite(v));
}

TEST(Series, SampleIntoAReusedBatchEqualsAFreshSample) {
    SeriesBatch reused;
    for (std::size_t context : {16, 9, 9}) {
        SeriesOptions o;
        o.context = context;
        o.horizon = 4;
        const SeriesTask task(o);
        Rng a(11), b(11);
        const SeriesBatch fresh = task.sample(3, a);
        task.sample_into(3, b, reused);
        EXPECT_EQ(reused.values, fresh.values);
        EXPECT_EQ(reused.time, fresh.time);
        EXPECT_EQ(reused.forecast, fresh.forecast);
        EXPECT_EQ(a.below(1000000), b.below(1000000)) << "both left the Rng in the same state";
    }
}

// One period, no trend, no noise: y(t) = level + a · sin(2π t / P). The phase is the timestamp's:
// at t ≡ 0 (mod P) y = level, at t ≡ P/4 level + a, at P/2 level again, at 3P/4 level - a.
TEST(Series, ThePhaseOfEachCycleIsTiedToTheTimestamp) {
    const SeriesTask task(clean({8}, 32, 8));
    Rng rng(5);
    const SeriesBatch batch = task.sample(6, rng);
    for (std::size_t b = 0; b < 6; ++b) {
        std::size_t i0 = 0;
        while (static_cast<std::size_t>(batch.time(b, i0)) % 8 != 0) ++i0;
        const float level = batch.values(b, i0, 0), a = batch.values(b, i0 + 2, 0) - level;
        EXPECT_GE(a, 0.5f - 1e-4f);
        EXPECT_LE(a, 1.5f + 1e-4f);
        EXPECT_NEAR(batch.values(b, i0 + 4, 0), level, 1e-4f);
        EXPECT_NEAR(batch.values(b, i0 + 6, 0), level - a, 1e-4f);
        EXPECT_NEAR(batch.values(b, i0 + 8, 0), level, 1e-4f);
    }
}

TEST(Series, WithoutNoiseTrendOrDriftTheSeasonalNaiveForecastIsExact) {
    const SeriesTask task(clean({6, 8}));
    EXPECT_EQ(task.season(), 24u);  // lcm(6, 8) fits in the context of 48
    Rng rng(2);
    const SeriesBatch batch = task.sample(8, rng);
    const RegressionResult r = mse_forward(seasonal_naive_forecast(batch.values, task.season(), task.horizon()), batch.forecast);
    EXPECT_LT(r.mse, 1e-8f);
    EXPECT_LT(r.mae, 1e-4f);
}

TEST(Series, ADriftingPeriodBreaksTheSeasonalNaiveForecast) {
    SeriesOptions steady = clean({12});
    SeriesOptions drifting = steady;
    drifting.drift = 0.3f;
    Rng a(9), b(9);
    const SeriesBatch x = SeriesTask(steady).sample(16, a), y = SeriesTask(drifting).sample(16, b);
    const float steady_mse = mse_forward(seasonal_naive_forecast(x.values, 12, 12), x.forecast).mse;
    const float drift_mse = mse_forward(seasonal_naive_forecast(y.values, 12, 12), y.forecast).mse;
    EXPECT_LT(steady_mse, 1e-8f);
    EXPECT_GT(drift_mse, 0.05f);
}

TEST(Series, NoiseAndTrendAreWhatTheBaselineCannotRepeat) {
    SeriesOptions o = clean({12});
    o.noise = 0.2f;
    Rng rng(4);
    const SeriesBatch batch = SeriesTask(o).sample(256, rng);
    // The forecast and the repeated value each carry independent noise: E (e1 - e2)² = 2σ² = 0.08.
    const float mse = mse_forward(seasonal_naive_forecast(batch.values, 12, 12), batch.forecast).mse;
    EXPECT_NEAR(mse, 0.08f, 0.01f);
}

TEST(Series, TheSeasonIsTheLcmOrTheLongestPeriodThatFits) {
    EXPECT_EQ(SeriesTask(clean({12, 24})).season(), 24u);
    EXPECT_EQ(SeriesTask(clean({12, 20})).season(), 20u);  // lcm 60 > 48
    EXPECT_EQ(SeriesTask(clean({64})).season(), 1u);       // nothing fits: the last value
}

TEST(Series, SeasonalNaiveRepeatsTheLastSeasonOfFeatureZero) {
    Tensor3 values = Tensor3::from_shape({1, 5, 2});
    for (std::size_t i = 0; i < 5; ++i) {
        values(0, i, 0) = float(i);
        values(0, i, 1) = 100.0f;
    }
    const Tensor2 expected = {{3.0f, 4.0f, 3.0f}};
    EXPECT_EQ(seasonal_naive_forecast(values, 2, 3), expected);
    const Tensor2 last = {{4.0f, 4.0f}};
    EXPECT_EQ(seasonal_naive_forecast(values, 1, 2), last);
    EXPECT_NE(error_of([&] { seasonal_naive_forecast(values, 6, 3); }).find("season must be in [1, T = 5]"), std::string::npos);
    EXPECT_NE(error_of([&] { seasonal_naive_forecast(values, 0, 3); }).find("got season 0"), std::string::npos);
}

TEST(Series, BadOptionsAreConfigErrorsNamingTheValue) {
    auto message = [](auto change) {
        SeriesOptions o;
        change(o);
        return error_of([&] { SeriesTask task(o); });
    };
    EXPECT_NE(message([](SeriesOptions& o) { o.context = 1; }).find("context must be in [2, 4096], got context 1"), std::string::npos);
    EXPECT_NE(message([](SeriesOptions& o) { o.horizon = 0; }).find("horizon must be in [1, 1024], got horizon 0"), std::string::npos);
    EXPECT_NE(message([](SeriesOptions& o) { o.periods = {}; }).find("periods must hold 1 to 8 periods, got 0"), std::string::npos);
    EXPECT_NE(message([](SeriesOptions& o) { o.periods = {12, 1}; }).find("each period must be in [2, 4096], got each period 1"),
              std::string::npos);
    EXPECT_NE(message([](SeriesOptions& o) { o.drift = 1.0f; }).find("drift must be in [0, 1), got drift 1"), std::string::npos);
    EXPECT_NE(message([](SeriesOptions& o) { o.noise = -1.0f; }).find("noise must be in [0, 10], got noise -1"), std::string::npos);
    EXPECT_NE(message([](SeriesOptions& o) { o.features = 0; }).find("features must be in [1, 64], got features 0"), std::string::npos);
    Rng rng(1);
    EXPECT_NE(error_of([&] { SeriesTask(SeriesOptions{}).sample(0, rng); }).find("batch_size must be positive, got 0"), std::string::npos);
}

}  // namespace
}  // namespace attnlab
