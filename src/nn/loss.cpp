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

RegressionResult mse_forward(const Tensor2& pred, const Tensor2& target, MseCache* cache) {
    constexpr const char* where = "mse_forward";
    if (pred.shape() != target.shape()) {
        fail<ShapeError>(where, ": pred and target must have one shape (N, H), got pred ", shape_string(pred.shape()),
                         " and target ", shape_string(target.shape()));
    }
    if (pred.size() == 0) fail<ShapeError>(where, ": pred and target are empty, got ", shape_string(pred.shape()));
    const std::size_t h = pred.shape(1);
    for (std::size_t i = 0; i < pred.size(); ++i) {
        if (!std::isfinite(pred.data()[i]) || !std::isfinite(target.data()[i])) {
            fail<ValueError>(where, ": entry (", i / h, ", ", i % h, ") is not finite: pred ", pred.data()[i],
                             ", target ", target.data()[i]);
        }
    }
    if (cache) cache->diff.resize({pred.shape(0), h});  // kept when the shape is unchanged
    double squares = 0.0, absolutes = 0.0;
    for (std::size_t i = 0; i < pred.size(); ++i) {
        const double d = double(pred.data()[i]) - double(target.data()[i]);
        squares += d * d;
        absolutes += std::abs(d);
        if (cache) cache->diff.data()[i] = static_cast<float>(d);
    }
    RegressionResult result;
    result.count = pred.size();
    result.mse = static_cast<float>(squares / double(result.count));
    result.mae = static_cast<float>(absolutes / double(result.count));
    return result;
}

void mse_backward(const MseCache& cache, float dloss, Tensor2& dpred) {
    dpred.resize({cache.diff.shape(0), cache.diff.shape(1)});
    // loss = (1/n) Σ_i d_i², d_i = pred_i - target_i  =>  dpred_i = dloss · 2 d_i / n
    const float factor = 2.0f * dloss / static_cast<float>(cache.diff.size());
    for (std::size_t i = 0; i < cache.diff.size(); ++i) dpred.data()[i] = factor * cache.diff.data()[i];
}

}  // namespace attnlab
