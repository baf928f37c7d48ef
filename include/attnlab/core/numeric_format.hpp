// attnlab/core/numeric_format.hpp: the number formats attention can be emulated in (fp32, fp16,
// bf16) and rounding a float32 to them.
//
// What it is for: the article's §6.3 (fp16 overflow, softmax kept in fp32). A value "stored in
// fp16" is a float32 holding exactly an fp16 value: round_to rounds with IEEE 754
// round-to-nearest-even, overflows to ±Infinity (fp16: |x| >= 65520, the halfway point above the
// largest finite 65504), keeps subnormals (fp16's smallest is 2^-24), flushes to ±0 below half of
// the smallest subnormal (half of it exactly is a tie and goes to the even 0), and propagates
// NaN. Products accumulate in float32 and are rounded when stored, as GPU tensor cores do.
// bf16 keeps float32's exponent range (overflow only past float32's own) with 8 significant bits.
// Not for: storage (tensors stay float32) or hardware half arithmetic.
//
//   float a = attnlab::round_to(attnlab::Precision::fp16, 65519.99f);   // 65504
//   float b = attnlab::round_to(attnlab::Precision::fp16, 65520.0f);    // +inf
//   float c = attnlab::round_to(attnlab::Precision::bf16, 1.00390625f); // 1 (a tie, to even)
//   std::size_t flushed = attnlab::round_span(attnlab::Precision::fp16, data, n);
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "attnlab/core/choice.hpp"

namespace attnlab {

// The formats, one line each (core/choice.hpp).
#define ATTNLAB_PRECISION_VALUES(X)                                                               \
    X(fp32, "float32, no rounding")                                                              \
    X(fp16, "IEEE binary16 (5 exponent, 10 fraction bits), largest finite 65504")                  \
    X(bf16, "bfloat16 (8 exponent, 7 fraction bits), float32's range with 8 significant bits")
ATTNLAB_CHOICE(Precision, "precision", ATTNLAB_PRECISION_VALUES,
               "number format the attention layers emulate, forward and backward (round-to-nearest-even, overflow "
               "to inf; article section 6.3)")

// Where the softmax of a low-precision attention computes.
#define ATTNLAB_SOFTMAX_PRECISION_VALUES(X)                                                           \
    X(fp32, "max, exp, sum and division of the rounded scores in float32, then the weights rounded")  \
    X(same, "every step of the softmax (difference, exp, each partial sum, division) rounded")
ATTNLAB_CHOICE(SoftmaxPrecision, "softmax precision", ATTNLAB_SOFTMAX_PRECISION_VALUES,
               "with fp16/bf16: where the softmax computes")

// How an attention call emulates a number format (attention/multi_head_attention.hpp
// AttentionOptions::precision; model/config.hpp's precision, softmax_precision, stable_softmax).
struct PrecisionOptions {
    Precision format = Precision::fp32;
    SoftmaxPrecision softmax = SoftmaxPrecision::fp32;
    // true: subtract the row max before exp. false: the naive exp(s) / Σ exp(s), which
    // overflows float32 at s > 88.7 and fp16 (softmax 'same') at s > 11.09 = ln 65520.
    bool stable_softmax = true;

    // Whether the call is plain float32 attention with the stable softmax: every fast path
    // serves it, and the output is the unemulated one bit for bit.
    bool is_plain() const { return format == Precision::fp32 && stable_softmax; }
    bool rounds() const { return format != Precision::fp32; }
};

// "fp32", "fp16", "bf16" and back: ConfigError "unknown precision 'x'; valid: fp32, fp16, bf16".
inline std::string_view precision_name(Precision precision) { return choice_name(precision); }
inline Precision precision_from_name(std::string_view name) { return choice_from_name<Precision>(name); }
// "fp32", "same" and back (ConfigError listing the valid names).
inline std::string_view softmax_precision_name(SoftmaxPrecision softmax) { return choice_name(softmax); }
inline SoftmaxPrecision softmax_precision_from_name(std::string_view name) {
    return choice_from_name<SoftmaxPrecision>(name);
}

namespace detail {
inline std::uint32_t float_bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
inline float bits_float(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}
// fp16: the magnitude's bits rounded to 10 fraction bits (normal range), or to a multiple of
// 2^-24 (subnormal range: adding 0.5, whose float32 ulp is 2^-24, rounds to nearest even there
// and subtracting it back is exact).
inline float round_fp16(float x) {
    const std::uint32_t u = float_bits(x);
    const std::uint32_t sign = u & 0x80000000u, a = u ^ sign;
    if (a > 0x7F800000u) return x;                             // NaN stays NaN
    if (a >= 0x477FF000u) return bits_float(sign | 0x7F800000u);  // >= 65520: ±inf
    if (a < 0x38800000u) {                                     // < 2^-14: fp16 subnormals
        const float r = (bits_float(a) + 0.5f) - 0.5f;
        return bits_float(float_bits(r) | sign);
    }
    const std::uint32_t r = (a + 0x0FFFu + ((a >> 13) & 1u)) & ~0x1FFFu;
    return bits_float(r | sign);
}
// bf16: the bits rounded to 7 fraction bits; a carry into the exponent is the right answer
// (past float32's largest bf16, 0x7F7F0000, it makes +inf).
inline float round_bf16(float x) {
    const std::uint32_t u = float_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return x;  // NaN stays NaN
    return bits_float((u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u);
}
}  // namespace detail

// x rounded to the nearest value of `precision` (ties to even); fp32 returns x.
inline float round_to(Precision precision, float x) {
    switch (precision) {
        case Precision::fp16: return detail::round_fp16(x);
        case Precision::bf16: return detail::round_bf16(x);
        case Precision::fp32: break;
    }
    return x;
}

// data: (n) rounded in place; returns how many non-zero values became ±0 (flushed below the
// smallest subnormal). The loop has no branches on the data, so the compiler vectorises it.
std::size_t round_span(Precision precision, float* data, std::size_t n);
// The same over `rows` rows of `cols` values, `ld` apart: (rows, cols) with leading dimension ld.
std::size_t round_rows(Precision precision, float* data, std::size_t rows, std::size_t cols, std::size_t ld);

// Flat indices (row · cols + col) of the values of a (rows, cols) matrix that rounding turned from
// non-zero into ±0, ascending: which cells a trace marks as flushed (attention/stage.hpp).
using FlushedCells = std::vector<std::uint32_t>;
// round_rows that also appends to `at` the flat index of every value it flushes. A scalar loop
// with the same rounding as round_span's, for a traced call (untraced calls take round_span).
void round_rows_marking(Precision precision, float* data, std::size_t rows, std::size_t cols, std::size_t ld,
                        FlushedCells& at);

}  // namespace attnlab
