// attnlab/nn/loss.hpp: cross-entropy over logits, with ignored targets; mean squared error.
//
// What it is for: the training loss of both models: classification (N = B rows, V = classes)
// and language modelling (N = B·T rows, V = vocabulary), as torch.nn.functional.cross_entropy
// with ignore_index = -1 and reduction = "mean":
//   loss = (1 / n) Σ_{i: target_i ≠ -1} (logsumexp(logits_i) - logits_i[target_i])
// where n counts the non-ignored targets. logsumexp subtracts the row maximum first and sums
// in double, so large logits neither overflow nor lose the small terms.
// The gradient is dlogits_i = (softmax(logits_i) - onehot(target_i)) / n, and 0 for ignored rows.
// When every target is ignored the loss is 0 with count 0 (not NaN as in PyTorch): a batch of
// pure padding carries no signal, and a NaN would trip the trainer's non-finite check.
// Not for: label smoothing or class weights.
//
//   attnlab::CrossEntropyCache cache;
//   attnlab::CrossEntropyResult r = attnlab::cross_entropy_forward(logits, targets, &cache);  // (N, V), (N)
//   attnlab::Tensor2 dlogits;
//   attnlab::cross_entropy_backward(cache, /*dloss=*/1.0f, dlogits);       // (N, V)
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

inline constexpr std::int32_t kIgnoreTarget = -1;

// What backward needs from the forward pass.
struct CrossEntropyCache {
    Tensor2 probs;          // (N, V) softmax of the logits: dlogits = (probs - onehot) / count
    Index1 targets;         // (N) class ids, -1 = ignored (its row gets zero gradient)
    std::size_t count = 0;  // number of non-ignored targets: the mean's divisor
};

// The loss with its bookkeeping, for the trainer's metrics.
struct CrossEntropyResult {
    float loss = 0.0f;        // mean over counted targets (0 if none)
    std::size_t count = 0;    // non-ignored targets
    std::size_t correct = 0;  // counted rows whose argmax (first maximum) equals the target
};

// logits: (N, V), targets: (N) -> the mean loss; fills cache when non-null.
// Throws ShapeError if the row counts differ, ValueError naming the row, the target and V for a
// target outside [0, V) other than -1.
CrossEntropyResult cross_entropy_forward(const Tensor2& logits, const Index1& targets,
                                         CrossEntropyCache* cache = nullptr);
// dlogits: (N, V) (resized and overwritten) = dloss · (probs - onehot) / count on counted rows.
void cross_entropy_backward(const CrossEntropyCache& cache, float dloss, Tensor2& dlogits);

// ---- Mean squared error, the regression loss (time-series forecasting) ----
// loss = (1 / n) Σ_i (pred_i - target_i)² over all n = N·H entries, as
// torch.nn.functional.mse_loss(reduction = "mean"); MAE = (1 / n) Σ_i |pred_i - target_i| is
// reported beside it as a metric (it has no backward: the model trains on the MSE). Both sums run
// in double. The gradient is dpred_i = 2 (pred_i - target_i) / n.
//
//   attnlab::MseCache cache;
//   attnlab::RegressionResult r = attnlab::mse_forward(pred, target, &cache);   // (N, H), (N, H)
//   attnlab::Tensor2 dpred;
//   attnlab::mse_backward(cache, /*dloss=*/1.0f, dpred);                          // (N, H)

struct MseCache {
    Tensor2 diff;  // (N, H) pred - target: dpred = 2 · diff / count
};

struct RegressionResult {
    float mse = 0.0f;        // mean of the squared errors (the loss)
    float mae = 0.0f;        // mean of the absolute errors (a metric)
    std::size_t count = 0;   // entries compared, N·H
};

// pred, target: (N, H) -> MSE and MAE; fills cache when non-null. ShapeError naming both shapes if
// they differ or are empty, ValueError naming the first non-finite entry of either.
RegressionResult mse_forward(const Tensor2& pred, const Tensor2& target, MseCache* cache = nullptr);
// dpred: (N, H) (resized and overwritten) = dloss · 2 (pred - target) / count.
void mse_backward(const MseCache& cache, float dloss, Tensor2& dpred);

}  // namespace attnlab
