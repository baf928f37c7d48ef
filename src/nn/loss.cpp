#include "attnlab/nn/loss.hpp"

#include <cmath>

namespace attnlab {

CrossEntropyResult cross_entropy_forward(const Tensor2& logits, const Index1& targets, CrossEntropyCache* cache) {
    constexpr const char* where = "cross_entropy_forward";
    const std::size_t n = logits.shape(0), v = logits.shape(1);
    require_shape(targets, {static_cast<std::ptrdiff_t>(n)}, where, "targets (N) matching logits (N, V)");
    if (v == 0) fail<ShapeError>(where, ": logits must have at least one class, got ", shape_string(logits.shape()));
    for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t y = targets(i);
        if (y != kIgnoreTarget && (y < 0 || static_cast<std::size_t>(y) >= v)) {
            fail<ValueError>(where, ": target ", y, " of row ", i, " is outside [0, ", v, ") and is not ",
                             kIgnoreTarget, " (ignored)");
        }
    }

    CrossEntropyResult result;
    double total = 0.0;
    if (cache) cache->probs.resize({n, v});  // the buffer is kept when the shape is unchanged
    for (std::size_t i = 0; i < n; ++i) {
        const float* row = logits.data() + i * v;
        std::size_t argmax = 0;
        for (std::size_t j = 1; j < v; ++j) {
            if (row[j] > row[argmax]) argmax = j;
        }
        const double m = row[argmax];
        // logsumexp = m + log Σ exp(l - m): every exponent <= 0, the largest term is exactly 1.
        double sum = 0.0;
        for (std::size_t j = 0; j < v; ++j) sum += std::exp(double(row[j]) - m);
        const double lse = m + std::log(sum);
        if (cache) {
            float* p = cache->probs.data() + i * v;
            for (std::size_t j = 0; j < v; ++j) p[j] = static_cast<float>(std::exp(double(row[j]) - lse));
        }
        const std::int32_t y = targets(i);
        if (y == kIgnoreTarget) continue;
        total += lse - double(row[y]);
        ++result.count;
        if (argmax == static_cast<std::size_t>(y)) ++result.correct;
    }
    result.loss = result.count == 0 ? 0.0f : static_cast<float>(total / double(result.count));
    if (cache) {
        cache->targets = targets;
        cache->count = result.count;
    }
    return result;
}

void cross_entropy_backward(const CrossEntropyCache& cache, float dloss, Tensor2& dlogits) {
    const std::size_t n = cache.probs.shape(0), v = cache.probs.shape(1);
    dlogits.resize({n, v});
    dlogits.fill(0.0f);
    if (cache.count == 0) return;
    // loss = (1/count) Σ_i (lse_i - l_i[y_i])  =>  dl_i = (softmax(l_i) - onehot(y_i)) · dloss / count
    const float factor = dloss / static_cast<float>(cache.count);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t y = cache.targets(i);
        if (y == kIgnoreTarget) continue;
        const float* p = cache.probs.data() + i * v;
        float* d = dlogits.data() + i * v;
        for (std::size_t j = 0; j < v; ++j) d[j] = p[j] * factor;
        d[y] -= factor;
    }
}

}  // namespace attnlab
