// attnlab/train/metrics.hpp: what a training step reports, and the helpers that measure it.
//
// What it is for: one StepMetrics record per logged step (loss, accuracy, gradient norm,
// learning rate, time, and two attention diagnostics), filled by the trainer and shown by the
// CLI and the browser. The helpers work on raw row-major buffers so a trainer can call them on
// any tensor it already has. Not for: computing the loss (the model's cross-entropy does) or
// writing logs (the caller formats the record).
//
//   attnlab::StepMetrics m;
//   m.accuracy = attnlab::token_accuracy(logits.data(), targets.data(), B * T, V);  // -1 ignored
//   m.head_entropy = attnlab::head_entropies(weights.data(), B, H, T, S);          // (H) per layer
//   m.max_score = std::max(m.max_score, attnlab::largest_score(scores.data(), scores.size()));
//
// Attention entropy (nats) of a row of weights w is -sum_j w_j ln w_j: 0 when a query attends to
// one key, ln S when it spreads evenly over S keys. A falling entropy shows heads specialising.
// The largest pre-softmax score is the article's §6.3 fp16 warning: a score above 65504 (the
// largest half-precision value) overflows to inf, which is why scores are scaled by 1/sqrt(D).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace attnlab {

// A metric the task has none of (accuracy of a regression, MAE of a classification): NaN, like
// the mean of an empty selection, so it cannot read as a measured 0.
inline constexpr float kNoMetric = std::numeric_limits<float>::quiet_NaN();

struct StepMetrics {
    std::size_t step = 0;             // 0-based optimisation step
    float loss = 0.0f;                // mean cross-entropy over the counted targets (nats)
    float accuracy = 0.0f;            // fraction of counted targets predicted (see token_accuracy)
    float grad_norm = 0.0f;           // global L2 norm before clipping (clip_grad_norm's result)
    float max_score = 0.0f;           // largest |scaled| attention score of the step (AttentionStats::max_abs)
    float lr = 0.0f;                  // learning rate used by the step
    double ms = 0.0;                  // wall time of the step in milliseconds
    float loss_scale = 1.0f;          // the loss scale the step's backward used (TrainerOptions::loss_scale)
    bool skipped = false;             // dynamic loss scaling: the gradients overflowed, no update was made
    std::vector<float> head_entropy;  // (L * H) mean attention entropy per head, layer-major
    // Regression tasks (series): loss is the MSE and accuracy NaN; these are the step's MAE and
    // the seasonal-naive baseline's MSE and MAE on the same batch. NaN for other tasks.
    float mae = kNoMetric;
    float baseline_mse = kNoMetric;
    float baseline_mae = kNoMetric;
};

// weights: (T, S) row-major attention weights, rows summing to 1 (or all zero for a fully
// masked row) -> mean over the T rows of each row's entropy in nats, accumulated in double.
// Zero weights contribute 0 (the limit of w ln w); an all-zero row has entropy 0.
// Throws ShapeError if T or S is 0.
float attention_entropy(const float* weights, std::size_t t, std::size_t s);

// weights: (B, H, T, S) -> (H) attention_entropy of each head averaged over the batch.
// Throws ShapeError if any extent is 0.
std::vector<float> head_entropies(const float* weights, std::size_t b, std::size_t h, std::size_t t,
                                  std::size_t s);

// Largest finite value of scores (n), -inf if there is none (all masked, or n = 0).
float largest_score(const float* scores, std::size_t n);

struct TokenCounts {
    std::size_t correct = 0;  // counted targets whose argmax matches
    std::size_t counted = 0;  // targets that are not -1
};

// logits: (N, V), targets: (N) in [0, V) or -1 = ignored. The prediction is the argmax of the
// row, the first one on ties and a NaN if there is one (torch.argmax's rules). Classification
// uses the same call with N = B, V = num_classes and the labels as targets.
// Throws ShapeError if V is 0, ValueError naming the index of a target outside [-1, V).
TokenCounts count_correct_tokens(const float* logits, const std::int32_t* targets, std::size_t n, std::size_t v);

// correct / counted of count_correct_tokens. With no counted target (0 / 0) the result is NaN,
// like the mean of an empty selection in PyTorch: there is nothing to be right about, and a 0
// would read as "always wrong". To average over several batches, add their TokenCounts instead.
float token_accuracy(const float* logits, const std::int32_t* targets, std::size_t n, std::size_t v);

}  // namespace attnlab
