#include "attnlab/core/numeric_format.hpp"

#include <string>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {
// The vector forms of detail::round_fp16 and round_bf16 (the scalar references in the header,
// tested equal on every fp16 boundary and a sweep of float32 bit patterns): every case is
// computed and one selected with all-ones masks instead of branches, so the loop below
// vectorises.
float round_fp16_lanes(float x) {
    const std::uint32_t u = detail::float_bits(x);
    const std::uint32_t a = u & 0x7FFFFFFFu, sign = u ^ a;
    const std::uint32_t normal = (a + 0x0FFFu + ((a >> 13) & 1u)) & ~0x1FFFu;
    const std::uint32_t subnormal = detail::float_bits((detail::bits_float(a) + 0.5f) - 0.5f);
    // below 2^-14 the subnormal, from 65520 (and inf) inf, a NaN itself
    const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(a < 0x38800000u);
    const std::uint32_t is_inf = 0u - static_cast<std::uint32_t>(a >= 0x477FF000u);
    const std::uint32_t is_nan = 0u - static_cast<std::uint32_t>(a > 0x7F800000u);
    std::uint32_t r = (subnormal & is_sub) | (normal & ~is_sub);
    r = (0x7F800000u & is_inf) | (r & ~is_inf);
    r = (a & is_nan) | (r & ~is_nan);
    return detail::bits_float(r | sign);
}
float round_bf16_lanes(float x) {
    const std::uint32_t u = detail::float_bits(x);
    const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    const std::uint32_t is_nan = 0u - static_cast<std::uint32_t>((u & 0x7FFFFFFFu) > 0x7F800000u);
    return detail::bits_float((u & is_nan) | (rounded & ~is_nan));
}

// Rounding of a span with a flush count: every element takes the same arithmetic.
template <float (*Round)(float)>
std::size_t round_span_with(float* data, std::size_t n) {
    std::size_t flushed = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const float x = data[i];
        const float r = Round(x);
        flushed += static_cast<std::size_t>((r == 0.0f) & (x != 0.0f));
        data[i] = r;
    }
    return flushed;
}

// round_span_with's rounding, noting the flat index (row · cols + col) of each value flushed.
template <float (*Round)(float)>
void round_rows_marking_with(float* data, std::size_t rows, std::size_t cols, std::size_t ld, FlushedCells& at) {
    for (std::size_t r = 0; r < rows; ++r) {
        float* row = data + r * ld;  // (cols)
        for (std::size_t c = 0; c < cols; ++c) {
            const float x = row[c];
            row[c] = Round(x);
            if (row[c] == 0.0f && x != 0.0f) at.push_back(static_cast<std::uint32_t>(r * cols + c));
        }
    }
}
}  // namespace

std::size_t round_span(Precision precision, float* data, std::size_t n) {
    switch (precision) {
        case Precision::fp16: return round_span_with<round_fp16_lanes>(data, n);
        case Precision::bf16: return round_span_with<round_bf16_lanes>(data, n);
        case Precision::fp32: break;
    }
    return 0;
}

std::size_t round_rows(Precision precision, float* data, std::size_t rows, std::size_t cols, std::size_t ld) {
    if (precision == Precision::fp32) return 0;
    if (ld == cols) return round_span(precision, data, rows * cols);
    std::size_t flushed = 0;
    for (std::size_t r = 0; r < rows; ++r) flushed += round_span(precision, data + r * ld, cols);
    return flushed;
}

void round_rows_marking(Precision precision, float* data, std::size_t rows, std::size_t cols, std::size_t ld,
                        FlushedCells& at) {
    switch (precision) {
        case Precision::fp16: return round_rows_marking_with<round_fp16_lanes>(data, rows, cols, ld, at);
        case Precision::bf16: return round_rows_marking_with<round_bf16_lanes>(data, rows, cols, ld, at);
        case Precision::fp32: break;
    }
}

}  // namespace attnlab
