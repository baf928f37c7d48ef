#include "attnlab/train/metrics.hpp"

#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"

namespace attnlab {

float attention_entropy(const float* weights, std::size_t t, std::size_t s) {
    if (t == 0 || s == 0) fail<ShapeError>("attention_entropy: weights must be (T, S) with T, S > 0, got (", t, ", ", s, ")");
    double total = 0.0;
    for (std::size_t i = 0; i < t; ++i) {
        const float* row = weights + i * s;
        double h = 0.0;
        for (std::size_t j = 0; j < s; ++j) {
            const double w = row[j];
            if (w > 0.0) h -= w * std::log(w);
        }
        total += h;
    }
    return static_cast<float>(total / static_cast<double>(t));
}

std::vector<float> head_entropies(const float* weights, std::size_t b, std::size_t h, std::size_t t,
                                  std::size_t s) {
    if (b == 0 || h == 0 || t == 0 || s == 0) {
        fail<ShapeError>("head_entropies: weights must be (B, H, T, S) with every extent > 0, got (", b, ", ", h, ", ",
                         t, ", ", s, ")");
    }
    std::vector<float> out(h);
    for (std::size_t head = 0; head < h; ++head) {
        double sum = 0.0;
        for (std::size_t batch = 0; batch < b; ++batch) sum += attention_entropy(weights + (batch * h + head) * t * s, t, s);
        out[head] = static_cast<float>(sum / static_cast<double>(b));
    }
    return out;
}

float largest_score(const float* scores, std::size_t n) {
    float best = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < n; ++i)
        if (std::isfinite(scores[i]) && scores[i] > best) best = scores[i];
    return best;
}

TokenCounts count_correct_tokens(const float* logits, const std::int32_t* targets, std::size_t n, std::size_t v) {
    if (v == 0) fail<ShapeError>("count_correct_tokens: logits must be (N, V) with V > 0, got (", n, ", 0)");
    TokenCounts counts;
    for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t target = targets[i];
        if (target == -1) continue;
        if (target < -1 || target >= static_cast<std::int32_t>(v)) {
            fail<ValueError>("count_correct_tokens: target ", target, " at index ", i, " is outside [0, ", v,
                             ") and is not -1 (ignored)");
        }
        const float* row = logits + i * v;
        std::size_t best = 0;
        for (std::size_t j = 0; j < v; ++j) {
            if (std::isnan(row[j])) {  // torch.argmax: NaN is the maximum
                best = j;
                break;
            }
            if (row[j] > row[best]) best = j;  // strict: the first maximum wins ties
        }
        ++counts.counted;
        if (best == static_cast<std::size_t>(target)) ++counts.correct;
    }
    return counts;
}

float token_accuracy(const float* logits, const std::int32_t* targets, std::size_t n, std::size_t v) {
    const TokenCounts c = count_correct_tokens(logits, targets, n, v);
    if (c.counted == 0) return std::numeric_limits<float>::quiet_NaN();
    return static_cast<float>(static_cast<double>(c.correct) / static_cast<double>(c.counted));
}

}  // namespace attnlab
