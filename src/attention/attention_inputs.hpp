// src/attention/attention_inputs.hpp (internal): the input check every attention mechanism
// (scaled_dot_product.cpp, linear_attention.cpp) makes at its boundary.
#pragma once

#include "attnlab/attention/mask.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab::detail {

// Throws ShapeError / ConfigError naming `where` and the shapes unless q: (B, H, T, D),
// k: (B, Hkv, S, D), v: (B, Hkv, S, Dv) fit together with H % Hkv == 0 and mask fits (B, T, S).
void require_attention_inputs(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                              const char* where);

}  // namespace attnlab::detail
