// attnlab/attention/normalizer.hpp: what turns a row of masked, scaled scores into weights.
//
// What it is for: the article's §9.1 question, why softmax and not sigmoid or ReLU, as an option
// of every attention call (AttentionOptions::normalizer, ModelConfig::normalizer). With s_ij the
// scaled and masked score and n_i the number of keys query i may see (after the causal, padding,
// window/global and explicit masks):
//   softmax  w_ij = exp(s_ij) / Σ_j exp(s_ij)           (the rows sum to 1)
//   sigmoid  w_ij = σ(s_ij − ln n_i)                    (Ramapuram et al. 2024: the bias keeps a
//                                                        row's sum near 1 at initialisation)
//   relu     w_ij = max(s_ij, 0) / n_i
// Masked keys get weight exactly 0 under all three, and a row with no visible key (n_i = 0)
// gets zero weights, never NaN. sigmoid and relu normalise no row, so every weight depends on
// its own score alone: the tiled path needs no running max or sum, only n_i.
// Not for: the softmax kernel itself (kernels/softmax.hpp) or the masks (mask.hpp).
//
//   attnlab::Normalizer n = attnlab::normalizer_from_name("sigmoid");   // ConfigError if unknown
//   attnlab::AttentionOptions opt; opt.normalizer = n;
//   attnlab::Tensor2 counts = attnlab::visible_key_counts(opt.mask, B, T, S);   // (B, T): n_i
//   attnlab::normalize_rows(n, w, T, S, S, counts.data());                       // w: (T, S) in place
#pragma once

#include <cstddef>
#include <string_view>

#include "attnlab/core/choice.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

struct AttentionMask;  // attention/mask.hpp

// The normalisers, one line each (core/choice.hpp). This header depends only on core/, so the
// kernels that compute the pointwise weights (src/kernels/softmax_arch.hpp) switch on the same
// enum. A new normaliser is a line here, its weight in pointwise_weight (softmax_arch.hpp) and
// its derivative in normalize_rows_backward (normalizer.cpp).
#define ATTNLAB_NORMALIZER_VALUES(X)                                   \
    X(softmax, "exp(s_ij) / sum_j exp(s_ij), every row sums to 1")      \
    X(sigmoid, "sigma(s_ij - ln n_i), each weight from its own score")    \
    X(relu, "max(s_ij, 0) / n_i")
ATTNLAB_CHOICE(Normalizer, "normalizer", ATTNLAB_NORMALIZER_VALUES,
               "attention weights from the scaled, masked scores s (n_i = keys query i may see); masked keys weigh "
               "0 (article section 9.1)")

// "softmax", "sigmoid", "relu"; from_name throws ConfigError naming the value and the valid ones.
inline std::string_view normalizer_name(Normalizer normalizer) { return choice_name(normalizer); }
inline Normalizer normalizer_from_name(std::string_view name) { return choice_from_name<Normalizer>(name); }

// n_i of every (batch row, query): the keys of S that query i of batch row b may see under
// `mask` (AttentionMask::is_masked is false), as floats -> (B, T).
Tensor2 visible_key_counts(const AttentionMask& mask, std::size_t batch, std::size_t t, std::size_t s);

// x: (rows, cols) with rows ld floats apart, scaled and masked scores -> their weights, in
// place (sigmoid and relu: kernels::pointwise_weight_rows, σ(s − ln n) computed as
// 1 / (1 + n·e^(−s)), which needs no logarithm). visible: (rows) n_i of each row
// (visible_key_counts), unused by softmax (which takes the row's own max and sum:
// kernels::softmax_rows). The recorded and the tiled path both call these, so each weight is
// computed by the same operations on either.
void normalize_rows(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                    const float* visible);
// The same for sigmoid and relu on a tile stored keys by queries: x (cols, ld), x[c·ld + r] the
// score of query r (r < rows) and key c; visible: (rows). Softmax is refused (ConfigError): its
// tiles need the online softmax.
void normalize_columns(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                       const float* visible);
// Backward of normalize_rows: w: (rows, cols) with ld, the weights it wrote; dw: (rows, cols)
// with ld, dL/dw -> dL/ds, in place (masked keys have w = 0 and get 0). visible: as above.
// From the weights alone: sigmoid dw/ds = w·(1 − w); relu 1/n where w > 0 (s > 0), else 0.
void normalize_rows_backward(Normalizer normalizer, const float* w, float* dw, std::size_t rows, std::size_t cols,
                             std::size_t ld, const float* visible);

}  // namespace attnlab
