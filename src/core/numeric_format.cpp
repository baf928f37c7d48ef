#include "attnlab/core/numeric_format.hpp"

#include <string>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {
constexpr Precision kPrecisions[] = {Precision::fp32, Precision::fp16, Precision::bf16};
constexpr SoftmaxPrecision kSoftmaxPrecisions[] = {SoftmaxPrecision::fp32, SoftmaxPrecision::same};

// Branch-free rounding of a span with a flush count: every element takes the same arithmetic.
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
}  // namespace

std::string_view precision_name(Precision precision) {
    switch (precision) {
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::fp32: break;
    }
    return "fp32";
}

Precision precision_from_name(std::string_view name) {
    for (Precision p : kPrecisions) {
        if (precision_name(p) == name) return p;
    }
    fail<ConfigError>("unknown precision '", name, "'; valid: fp32, fp16, bf16");
}

std::string_view softmax_precision_name(SoftmaxPrecision softmax) {
    return softmax == SoftmaxPrecision::same ? "same" : "fp32";
}

SoftmaxPrecision softmax_precision_from_name(std::string_view name) {
    for (SoftmaxPrecision p : kSoftmaxPrecisions) {
        if (softmax_precision_name(p) == name) return p;
    }
    fail<ConfigError>("unknown softmax precision '", name, "'; valid: fp32, same");
}

std::size_t round_span(Precision precision, float* data, std::size_t n) {
    switch (precision) {
        case Precision::fp16: return round_span_with<detail::round_fp16>(data, n);
        case Precision::bf16: return round_span_with<detail::round_bf16>(data, n);
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

}  // namespace attnlab
