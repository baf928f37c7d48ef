// attnlab/kernels/softmax.hpp: numerically stable row softmax, in place, SIMD.
//
// What it is for: turning masked attention scores into weights. Each row subtracts its maximum
// before exp (so no overflow for finite input), sums in float32, and divides. Masked entries are
// -infinity (see attention/mask.hpp for why -inf and not a large negative number) and get
// exactly 0 weight. A row whose entries are all -inf (every key masked) becomes all zeros,
// never NaN. Not for: log-softmax of logits in the loss (see nn/loss.hpp).
//
//   float row[4] = {1, 2, -INFINITY, 3};
//   attnlab::kernels::softmax_rows(row, 1, 4, 4);   // {0.090, 0.245, 0, 0.665}
#pragma once

#include <cstddef>

#include "attnlab/attention/normalizer.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {
namespace kernels {
// x: (rows, cols) with leading dimension ld, overwritten by softmax over each row.
void softmax_rows(float* x, std::size_t rows, std::size_t cols, std::size_t ld);
// Plain scalar reference (double accumulation).
void softmax_rows_reference(float* x, std::size_t rows, std::size_t cols, std::size_t ld);

// Backward of y = softmax(x) per row: dx = y ⊙ (dy - Σ_j dy_j y_j).
// y, dy, dx: (rows, cols), leading dimension ld; dx is overwritten (may alias dy).
void softmax_rows_backward(const float* y, const float* dy, float* dx, std::size_t rows, std::size_t cols,
                           std::size_t ld);

// The two per-tile steps of FlashAttention (attention/flash_attention.hpp), SIMD:
// Forward when all keys fit one tile: s (rows, cols) with ld holds raw scores q·kᵀ, masked
// entries -inf. Per row r: p = softmax(scale·s) written over s (bit-identical to softmax_rows
// of the scaled, masked scores: the recorded path), row_max[r] = max scale·s and
// row_sum[r] = Σ exp(scale·s - row_max[r]), so logsumexp = row_max + log(row_sum). A row with
// every key masked gets p = 0, row_max = -inf and row_sum = 0. (Several key tiles: the online
// softmax runs down the columns of the forward's tiles, kernels/flash_tiles.hpp.)
void softmax_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float scale, float* row_max,
                  float* row_sum);
// Backward, one tile: s = raw scores (masked -inf), dp = dO·vᵀ, both (rows, cols) with ld;
// lse, delta: (rows). Writes p = exp(scale·s - lse) over s and ds = scale·p ⊙ (dp - delta) over
// dp; rows with lse = -inf (no visible key) get p = ds = 0.
void flash_backward_tile(float* s, float* dp, std::size_t rows, std::size_t cols, std::size_t ld, float scale,
                         const float* lse, const float* delta);

// The pointwise normalisers of attention (attention/normalizer.hpp: every one but softmax, for
// which these do nothing), SIMD, serial: scaled scores s (-inf where masked) become sigmoid
// weights σ(s − ln n) = 1 / (1 + n·e^(−s)) or relu weights max(s, 0) / n, in place, n the
// row's visible keys; rows with n = 0 get zeros.
// x: (rows, cols) with ld; visible: (rows).
void pointwise_weight_rows(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                           const float* visible);
// The same on a tile stored keys by queries: x (cols, ld), x[c·ld + r] query r's score of key c.
void pointwise_weight_columns(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                              const float* visible);
}  // namespace kernels

// x: (R, N) -> (R, N)
Tensor2 softmax_rows(const Tensor2& x);

}  // namespace attnlab
