// attnlab/attention/heads.hpp: the only two permutes of multi-head attention.
//
// What it is for: splitting the model width C = H·D into H heads and joining them back
// (article §3.1-3.2). The split must reshape (B, T, C) -> (B, T, H, D) FIRST and then transpose
// to (B, H, T, D); reshaping straight to (B, H, T, D) runs without error but mixes positions and
// heads (the "reshape trap", shown in tests/attention/test_heads.cpp).
//
//   attnlab::Tensor4 qh = attnlab::split_heads(q, 4);   // (B, T, C) -> (B, 4, T, C/4)
//   attnlab::Tensor3 q2 = attnlab::merge_heads(qh);     // back to (B, T, C)
#pragma once

#include <cstddef>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

// x: (B, T, H·D) -> (B, H, T, D). Throws ConfigError if the width is not divisible by H.
Tensor4 split_heads(const Tensor3& x, std::size_t num_heads);
// x: (B, H, T, D) -> (B, T, H·D)
Tensor3 merge_heads(const Tensor4& x);
// The same into `out` (resized; the buffer is kept when the shape is unchanged). out must not
// be x.
void split_heads(const Tensor3& x, std::size_t num_heads, Tensor4& out);
void merge_heads(const Tensor4& x, Tensor3& out);

}  // namespace attnlab
