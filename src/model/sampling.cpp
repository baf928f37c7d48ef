#include "sampling.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::detail {

std::int32_t choose_token(const float* logits, std::size_t v, float temperature, Rng& rng) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < v; ++j) {
        if (logits[j] > logits[best]) best = j;
    }
    if (temperature == 0.0f) return static_cast<std::int32_t>(best);
    std::vector<double> p(v);
    double total = 0.0;
    for (std::size_t j = 0; j < v; ++j) {
        p[j] = std::exp((double(logits[j]) - double(logits[best])) / double(temperature));
        total += p[j];
    }
    const double u = double(rng.uniform()) * total;
    double cumulative = 0.0;
    for (std::size_t j = 0; j < v; ++j) {
        cumulative += p[j];
        if (u < cumulative) return static_cast<std::int32_t>(j);
    }
    return static_cast<std::int32_t>(best);  // u rounded up to total: fall back to the mode
}

Index2 as_row(const std::vector<std::int32_t>& tokens) {
    Index2 out = Index2::from_shape({1, tokens.size()});
    std::copy(tokens.begin(), tokens.end(), out.begin());
    return out;
}

}  // namespace attnlab::detail
