#include "attnlab/core/numeric_format.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Bit-exact equality, so -0 differs from +0 and NaN can be asked for by name.
::testing::AssertionResult same_bits(float expected, float actual) {
    if (detail::float_bits(expected) == detail::float_bits(actual)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected " << expected << " (0x" << std::hex
                                         << detail::float_bits(expected) << "), got " << actual << " (0x"
                                         << detail::float_bits(actual) << ")";
}

struct Case {
    float in, fp16, bf16;
};

// Exact values of IEEE binary16 and bfloat16 (ties to even).
TEST(NumericFormat, RoundsToTheExactFp16AndBf16Values) {
    const float sub = std::ldexp(1.0f, -24);  // the smallest fp16 subnormal
    const Case cases[] = {
        {1.0f, 1.0f, 1.0f},
        {65504.0f, 65504.0f, 65536.0f},           // fp16's largest finite; bf16 keeps 8 bits
        {65519.99f, 65504.0f, 65536.0f},          // just below the fp16 overflow tie
        {65520.0f, kInf, 65536.0f},               // the tie 65504 | 65536 goes to even: inf
        {-65520.0f, -kInf, -65536.0f},
        {1e6f, kInf, 999424.0f},
        {sub, sub, sub},                          // 2^-24 is exact in both
        {sub * 0.5f, 0.0f, sub * 0.5f},           // half the smallest subnormal: a tie, to even 0
        {sub * 0.75f, sub, sub * 0.75f},          // above the tie: up to 2^-24
        {sub * 1.5f, sub * 2.0f, sub * 1.5f},     // 1.5 ulp: a tie, to even 2 ulp
        {sub * 2.5f, sub * 2.0f, sub * 2.5f},     // 2.5 ulp: a tie, to even 2 ulp
        {std::ldexp(1.0f, -14), std::ldexp(1.0f, -14), std::ldexp(1.0f, -14)},  // fp16's smallest normal
        {1.0f + std::ldexp(1.0f, -11), 1.0f, 1.0f},  // fp16 tie (1 + half ulp) -> even 1
        {1.0f + 3.0f * std::ldexp(1.0f, -11), 1.0f + std::ldexp(1.0f, -9), 1.0f},  // tie -> even 1 + 2 ulp
        {1.00390625f, 1.00390625f, 1.0f},           // 1 + 2^-8: bf16 tie -> even 1
        {1.01171875f, 1.01171875f, 1.015625f},      // 1 + 3·2^-8: bf16 tie -> even 1 + 2^-6
        {3.14159265f, 3.140625f, 3.140625f},
        {-0.0f, -0.0f, -0.0f},
        {-sub * 0.25f, -0.0f, -sub * 0.25f},      // flushed keeps its sign
        {kInf, kInf, kInf},
        {-kInf, -kInf, -kInf},
        {std::numeric_limits<float>::max(), kInf, kInf},  // bf16 overflows only past float32's range
        {std::numeric_limits<float>::denorm_min(), 0.0f, 0.0f},  // below bf16's smallest subnormal 2^-133
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(testing::Message() << "input " << c.in);
        EXPECT_TRUE(same_bits(c.fp16, round_to(Precision::fp16, c.in)));
        EXPECT_TRUE(same_bits(c.bf16, round_to(Precision::bf16, c.in)));
        EXPECT_TRUE(same_bits(c.in, round_to(Precision::fp32, c.in)));
    }
}

TEST(NumericFormat, NanStaysNan) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(round_to(Precision::fp16, nan)));
    EXPECT_TRUE(std::isnan(round_to(Precision::bf16, nan)));
    EXPECT_TRUE(std::isnan(round_to(Precision::bf16, -nan)));
    // a NaN whose low bits alone carry the payload must not round into infinity
    EXPECT_TRUE(std::isnan(round_to(Precision::bf16, detail::bits_float(0x7F800001u))));
    EXPECT_TRUE(std::isnan(round_to(Precision::fp16, detail::bits_float(0x7F800001u))));
}

// Every fp16 value is a fixed point of the rounding, and the values between two neighbours go
// to the nearer one (ties to the even mantissa): a sweep over all 63488 finite fp16 values.
TEST(NumericFormat, EveryFp16ValueIsAFixedPointAndMidpointsGoToEven) {
    const auto fp16_value = [](unsigned h) {  // decode binary16 bits h (finite, positive)
        const unsigned e = (h >> 10) & 0x1F, m = h & 0x3FF;
        return e == 0 ? std::ldexp(static_cast<float>(m), -24) : std::ldexp(static_cast<float>(m | 0x400), int(e) - 25);
    };
    for (unsigned h = 0; h < 0x7BFF; ++h) {  // up to the one below 65504
        const float a = fp16_value(h), b = fp16_value(h + 1);
        ASSERT_EQ(round_to(Precision::fp16, a), a) << "fp16 bits " << h;
        const float mid = a + (b - a) * 0.5f;  // exact in float32
        ASSERT_EQ(round_to(Precision::fp16, mid), (h % 2 == 0) ? a : b) << "midpoint above fp16 bits " << h;
        ASSERT_EQ(round_to(Precision::fp16, std::nextafter(mid, 0.0f)), a) << "below the midpoint above " << h;
        ASSERT_EQ(round_to(Precision::fp16, std::nextafter(mid, kInf)), b) << "above the midpoint above " << h;
    }
}

TEST(NumericFormat, SpanRoundingEqualsElementRoundingAndCountsFlushes) {
    const float sub = std::ldexp(1.0f, -24);
    std::vector<float> x = {1.0f, sub * 0.5f, -sub * 0.3f, 0.0f, 70000.0f, 1e-3f, -2.5f, sub * 0.4f, 12.345f};
    for (Precision p : {Precision::fp16, Precision::bf16}) {
        std::vector<float> y = x;
        const std::size_t flushed = round_span(p, y.data(), y.size());
        std::size_t expected_flushed = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            EXPECT_TRUE(same_bits(round_to(p, x[i]), y[i])) << precision_name(p) << " index " << i;
            expected_flushed += x[i] != 0.0f && y[i] == 0.0f;
        }
        EXPECT_EQ(flushed, expected_flushed);
    }
    std::vector<float> y = x;
    EXPECT_EQ(round_span(Precision::fp16, y.data(), y.size()), 3u);  // 2^-25, -0.3·2^-24, 0.4·2^-24
}

// round_span's vector loop and round_to's scalar reference agree bit for bit: on a sweep of
// float32 bit patterns (every sign, exponent, NaN and infinity, with varied fractions) and on
// every fp16 value with its neighbours in float32.
TEST(NumericFormat, SpanRoundingEqualsScalarRoundingOnASweepOfBitPatterns) {
    std::vector<float> x;
    for (std::uint64_t u = 0; u <= 0xFFFFFFFFull; u += 0x10001ull * 37) x.push_back(detail::bits_float(std::uint32_t(u)));
    for (std::uint32_t h = 0; h < 0x10000u; ++h) {  // fp16 bits -> the float32 bits around that value
        const std::uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
        const float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m | 0x400), int(e) - 25);
        const std::uint32_t b = detail::float_bits(v) | sign;
        for (std::uint32_t d : {0u, 1u, 0xFFFu, 0x1000u, 0x1001u}) {
            x.push_back(detail::bits_float(b + d));
            x.push_back(detail::bits_float(b - d));
        }
    }
    for (Precision p : {Precision::fp16, Precision::bf16}) {
        std::vector<float> y = x;
        round_span(p, y.data(), y.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            const float expected = round_to(p, x[i]);
            if (std::isnan(expected)) {
                ASSERT_TRUE(std::isnan(y[i])) << precision_name(p) << " bits " << std::hex << detail::float_bits(x[i]);
            } else {
                ASSERT_TRUE(same_bits(expected, y[i])) << precision_name(p) << " bits " << std::hex << detail::float_bits(x[i]);
            }
        }
    }
}

TEST(NumericFormat, NamesRoundTripAndUnknownNamesListTheValidOnes) {
    for (Precision p : {Precision::fp32, Precision::fp16, Precision::bf16}) {
        EXPECT_EQ(precision_from_name(precision_name(p)), p);
    }
    for (SoftmaxPrecision p : {SoftmaxPrecision::fp32, SoftmaxPrecision::same}) {
        EXPECT_EQ(softmax_precision_from_name(softmax_precision_name(p)), p);
    }
    try {
        precision_from_name("fp8");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("'fp8'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("fp32, fp16, bf16"), std::string::npos) << e.what();
    }
    EXPECT_THROW(softmax_precision_from_name("fp16"), ConfigError);
}

}  // namespace
}  // namespace attnlab
