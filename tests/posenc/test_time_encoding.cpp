#include "attnlab/posenc/time_encoding.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

TEST(TimeEncoding, HandValuesAtQuarterPeriods) {
    const Tensor2 time = {{0.0f, 1.0f, 2.0f, 3.0f}};
    const Tensor3 te = time_encoding(time, {4.0});  // θ = 0, π/2, π, 3π/2
    ASSERT_EQ(te.shape(), (std::array<std::size_t, 3>{1, 4, 2}));
    const float sin_expected[] = {0.0f, 1.0f, 0.0f, -1.0f}, cos_expected[] = {1.0f, 0.0f, -1.0f, 0.0f};
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_NEAR(te(0, i, 0), sin_expected[i], 1e-6f) << i;
        EXPECT_NEAR(te(0, i, 1), cos_expected[i], 1e-6f) << i;
    }
}

TEST(TimeEncoding, StepsAWholeNumberOfPeriodsApartShareTheirFeatures) {
    // Large timestamps keep their phase: t and t + 24 at periods 12 and 24, around 10^5.
    const Tensor2 time = {{99991.0f, 100003.0f, 100015.0f}, {7.0f, 19.0f, 31.0f}};
    const Tensor3 te = time_encoding(time, {12.0, 24.0});
    for (std::size_t b = 0; b < 2; ++b) {
        for (std::size_t c = 0; c < 2; ++c) EXPECT_NEAR(te(b, 0, c), te(b, 1, c), 1e-5f) << "period 12";
        for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(te(b, 0, c), te(b, 2, c), 1e-5f) << "both periods";
        EXPECT_NEAR(te(b, 0, 2), -te(b, 1, 2), 1e-5f) << "half a period 24 apart: the sine flips";
    }
    for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(te(0, 0, c), te(1, 0, c), 1e-5f) << "99991 = 7 (mod 24)";
    for (float v : te) {
        ASSERT_LE(std::abs(v), 1.0f);
    }
}

TEST(TimeEncoding, BadPeriodsAndTimestampsAreErrorsNamingThem) {
    const Tensor2 ok = {{1.0f, 2.0f}};
    try {
        time_encoding(ok, {12.0, 0.0});
        FAIL() << "no throw";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("period 1 must be positive and finite, got 0"), std::string::npos) << e.what();
    }
    EXPECT_THROW(time_encoding(ok, {}), ConfigError);
    const Tensor2 bad = {{1.0f, -2.0f}};
    try {
        time_encoding(bad, {12.0});
        FAIL() << "no throw";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("timestamp (0, 1) must be finite and >= 0, got -2"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace attnlab
