#include "attnlab/posenc/sinusoidal.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace attnlab {
namespace {

TEST(Sinusoidal, MatchesTheOriginalFormula) {
    const Tensor2 pe = sinusoidal_table(10, 6);
    for (std::size_t pos = 0; pos < 10; ++pos)
        for (std::size_t i = 0; i < 3; ++i) {
            const double angle = pos / std::pow(10000.0, 2.0 * i / 6.0);
            EXPECT_FLOAT_EQ(pe(pos, 2 * i), float(std::sin(angle)));
            EXPECT_FLOAT_EQ(pe(pos, 2 * i + 1), float(std::cos(angle)));
        }
}

TEST(Sinusoidal, OffsetShiftsRowsAndOddWidthKeepsOnlySin) {
    const Tensor2 full = sinusoidal_table(8, 7);
    const Tensor2 tail = sinusoidal_table(3, 7, 5);
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t c = 0; c < 7; ++c) EXPECT_EQ(tail(i, c), full(i + 5, c));
    EXPECT_FLOAT_EQ(full(3, 6), float(std::sin(3.0 / std::pow(10000.0, 6.0 / 7.0))));
}

TEST(Sinusoidal, ShiftByKIsALinearMapOfThePosition) {
    // For each frequency pair, PE[pos + k] = R(k) · PE[pos] with R a rotation independent of pos.
    const Tensor2 pe = sinusoidal_table(40, 8);
    const std::size_t k = 3;
    for (std::size_t i = 0; i < 4; ++i) {
        const double w = 1.0 / std::pow(10000.0, 2.0 * i / 8.0);
        for (std::size_t pos = 0; pos + k < 40; ++pos) {
            const double s = pe(pos, 2 * i), c = pe(pos, 2 * i + 1);
            EXPECT_NEAR(pe(pos + k, 2 * i), s * std::cos(w * k) + c * std::sin(w * k), 1e-5);
            EXPECT_NEAR(pe(pos + k, 2 * i + 1), c * std::cos(w * k) - s * std::sin(w * k), 1e-5);
        }
    }
}

}  // namespace
}  // namespace attnlab
