#include "attnlab/posenc/time_encoding.hpp"

#include <cmath>

#include "attnlab/core/error.hpp"

namespace attnlab {

Tensor3 time_encoding(const Tensor2& time, const std::vector<double>& periods) {
    constexpr const char* where = "time_encoding";
    if (periods.empty()) fail<ConfigError>(where, ": at least one period is needed, got none");
    for (std::size_t k = 0; k < periods.size(); ++k) {
        if (!(periods[k] > 0.0) || !std::isfinite(periods[k])) {
            fail<ConfigError>(where, ": period ", k, " must be positive and finite, got ", periods[k]);
        }
    }
    const std::size_t B = time.shape(0), T = time.shape(1), K = periods.size();
    for (std::size_t i = 0; i < time.size(); ++i) {
        if (!(time.data()[i] >= 0.0f) || !std::isfinite(time.data()[i])) {
            fail<ValueError>(where, ": timestamp (", i / T, ", ", i % T, ") must be finite and >= 0, got ", time.data()[i]);
        }
    }
    constexpr double two_pi = 6.283185307179586;
    Tensor3 out = Tensor3::from_shape({B, T, 2 * K});  // (B, T, 2K)
    for (std::size_t i = 0; i < B * T; ++i) {
        const double t = time.data()[i];
        float* row = out.data() + i * 2 * K;
        for (std::size_t k = 0; k < K; ++k) {
            const double theta = two_pi * std::fmod(t, periods[k]) / periods[k];
            row[2 * k] = static_cast<float>(std::sin(theta));
            row[2 * k + 1] = static_cast<float>(std::cos(theta));
        }
    }
    return out;
}

}  // namespace attnlab
