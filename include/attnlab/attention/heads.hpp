// attnlab/attention/heads.hpp: the only two permutes of multi-head attention, and the view
// that makes them unnecessary where attention can read heads in place.
//
// What it is for: splitting the model width C = H·D into H heads and joining them back
// (article §3.1-3.2). The split must reshape (B, T, C) -> (B, T, H, D) FIRST and then transpose
// to (B, H, T, D); reshaping straight to (B, H, T, D) runs without error but mixes positions and
// heads (the "reshape trap", shown in tests/attention/test_heads.cpp). HeadsView addresses head
// (b, h) of either layout by strides, so the flash path reads a projection's rows as heads and
// writes its context straight into the concatenated rows (no copies).
//
//   attnlab::Tensor4 qh = attnlab::split_heads(q, 4);   // (B, T, C) -> (B, 4, T, C/4)
//   attnlab::Tensor3 q2 = attnlab::merge_heads(qh);     // back to (B, T, C)
//   attnlab::ConstHeadsView v = attnlab::heads_in_rows(q, 4);  // the same heads, in place
//   const float* row = v.row(b, h, i);                  // == &qh(b, h, i, 0), D floats
#pragma once

#include <cstddef>
#include <type_traits>

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

// Per-head matrices (B, H, N, D) wherever they lie: row i of head (b, h), D contiguous floats,
// starts at data + b·batch_stride + h·head_stride + i·row_stride. Does not own the memory.
template <class T>
struct HeadsViewOf {
    T* data = nullptr;
    std::size_t batch = 0, heads = 0, n = 0, d = 0;
    std::size_t batch_stride = 0, head_stride = 0, row_stride = 0;

    T* head(std::size_t b, std::size_t h) const { return data + b * batch_stride + h * head_stride; }
    T* row(std::size_t b, std::size_t h, std::size_t i) const { return head(b, h) + i * row_stride; }
    // A writable view reads as a read-only one.
    template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
    operator HeadsViewOf<const U>() const {
        return {data, batch, heads, n, d, batch_stride, head_stride, row_stride};
    }
};
using HeadsView = HeadsViewOf<float>;
using ConstHeadsView = HeadsViewOf<const float>;

// x: (B, H, N, D) as heads (row_stride D, head_stride N·D).
HeadsView heads_of(Tensor4& x);
ConstHeadsView heads_of(const Tensor4& x);
// x: (B, N, H·D), heads side by side in each row (row_stride H·D, head_stride D): what
// split_heads(x, H) would copy out. Throws ConfigError if the width is not divisible by H.
HeadsView heads_in_rows(Tensor3& x, std::size_t num_heads);
ConstHeadsView heads_in_rows(const Tensor3& x, std::size_t num_heads);

}  // namespace attnlab
