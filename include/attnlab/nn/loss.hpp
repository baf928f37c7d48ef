// attnlab/nn/loss.hpp: cross-entropy over logits, with ignored targets.
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

}  // namespace attnlab
