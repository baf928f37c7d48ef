#include "attnlab/train/schedule.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

template <class F>
std::string config_error_of(F&& f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no ConfigError";
    return "";
}

TEST(Schedule, WarmupRisesLinearlyFromLrOverWarmupToLr) {
    WarmupCosineSchedule s(1.0f, 0.1f, 4, 12);
    EXPECT_FLOAT_EQ(s.lr_at(0), 0.25f);  // (0 + 1) / 4: the first step is not wasted
    EXPECT_FLOAT_EQ(s.lr_at(1), 0.5f);
    EXPECT_FLOAT_EQ(s.lr_at(2), 0.75f);
    EXPECT_FLOAT_EQ(s.lr_at(3), 1.0f);  // warmup - 1 reaches the peak
}

TEST(Schedule, CosineStartsAtPeakHitsMidpointAndEndsAtMinLr) {
    WarmupCosineSchedule s(1.0f, 0.1f, 4, 12);
    EXPECT_FLOAT_EQ(s.lr_at(4), 1.0f);            // progress 0
    EXPECT_FLOAT_EQ(s.lr_at(8), 0.55f);           // progress 1/2: halfway between max and min
    const double p = 7.0 / 8.0;                   // step 11, the last of the decay
    EXPECT_FLOAT_EQ(s.lr_at(11), static_cast<float>(0.1 + 0.9 * 0.5 * (1 + std::cos(3.141592653589793 * p))));
    EXPECT_FLOAT_EQ(s.lr_at(12), 0.1f);           // total_steps and beyond: min_lr
    EXPECT_FLOAT_EQ(s.lr_at(1000000), 0.1f);
}

TEST(Schedule, CosineIsNonIncreasingAfterWarmup) {
    WarmupCosineSchedule s(3e-3f, 3e-4f, 10, 200);
    for (std::size_t step = 10; step < 210; ++step) EXPECT_LE(s.lr_at(step + 1), s.lr_at(step)) << step;
}

TEST(Schedule, WithoutWarmupTheFirstStepUsesThePeak) {
    WarmupCosineSchedule s(2.0f, 0.0f, 0, 10);
    EXPECT_FLOAT_EQ(s.lr_at(0), 2.0f);
    EXPECT_FLOAT_EQ(s.lr_at(5), 1.0f);
    EXPECT_FLOAT_EQ(s.lr_at(10), 0.0f);
}

TEST(Schedule, WarmupOverAllStepsNeverDecays) {
    WarmupCosineSchedule s(1.0f, 0.5f, 4, 4);
    EXPECT_FLOAT_EQ(s.lr_at(3), 1.0f);
    EXPECT_FLOAT_EQ(s.lr_at(4), 0.5f);  // past total_steps
}

TEST(Schedule, ConstantHoldsAfterOptionalWarmup) {
    ConstantSchedule plain(0.01f);
    EXPECT_FLOAT_EQ(plain.lr_at(0), 0.01f);
    EXPECT_FLOAT_EQ(plain.lr_at(12345), 0.01f);
    ConstantSchedule warm(0.01f, 2);
    EXPECT_FLOAT_EQ(warm.lr_at(0), 0.005f);
    EXPECT_FLOAT_EQ(warm.lr_at(1), 0.01f);
    EXPECT_FLOAT_EQ(warm.lr_at(2), 0.01f);
}

TEST(Schedule, BadValuesThrowNamingThem) {
    EXPECT_NE(config_error_of([] { WarmupCosineSchedule(1.0f, 2.0f, 0, 10); }).find("min_lr=2"), std::string::npos);
    EXPECT_NE(config_error_of([] { WarmupCosineSchedule(1.0f, 0.0f, 11, 10); }).find("warmup_steps=11"),
              std::string::npos);
    EXPECT_NE(config_error_of([] { WarmupCosineSchedule(1.0f, 0.0f, 0, 0); }).find("total_steps=0"),
              std::string::npos);
    EXPECT_NE(config_error_of([] { ConstantSchedule(-1.0f); }).find("lr=-1"), std::string::npos);
    EXPECT_NE(config_error_of([] { ConstantSchedule(NAN); }).find("lr=nan"), std::string::npos);
}

TEST(Schedule, FactoryBuildsByNameAndListsValidNames) {
    ScheduleOptions o;
    o.lr = 1.0f;
    o.min_lr = 0.0f;
    o.warmup_steps = 0;
    o.total_steps = 10;
    EXPECT_EQ(make_schedule("cosine", o)->name(), "cosine");
    EXPECT_FLOAT_EQ(make_schedule("cosine", o)->lr_at(5), 0.5f);
    EXPECT_FLOAT_EQ(make_schedule("constant", o)->lr_at(5), 1.0f);
    const std::string message = config_error_of([&] { make_schedule("linear", o); });
    EXPECT_NE(message.find("'linear'"), std::string::npos) << message;
    EXPECT_NE(message.find("constant, cosine"), std::string::npos) << message;
}

}  // namespace
}  // namespace attnlab
