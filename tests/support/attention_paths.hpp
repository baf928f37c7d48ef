// tests/support/attention_paths.hpp: one attention call through the recorded (math) path and
// through the flash path, forward and backward, for tests that compare the two.
//
// What it is for: the flash tests (flash, window, every kernel table), which all check that the
// tiled path gives the recorded path's context and gradients. Not for: timing.
//
//   const test::AttentionResults ref = test::math_path(q, k, v, mask, dctx);
//   const test::AttentionResults got = test::flash_path(q, k, v, mask, dctx);
//   EXPECT_TRUE(test::all_close(got.dq, ref.dq, 1e-4, 1e-4));
#pragma once

#include "attnlab/attention/flash_attention.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab::test {

// The context and the gradients of Σ dctx ⊙ context with respect to q, k and v.
struct AttentionResults {
    Tensor4 context, dq, dk, dv;
};

// q: (B, H, T, D), k: (B, Hkv, S, D), v: (B, Hkv, S, Dv), dctx: (B, H, T, Dv), default scale.
inline AttentionResults math_path(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                  const AttentionMask& mask, const Tensor4& dctx) {
    AttentionResults r;
    AttentionCache cache;
    r.context = scaled_dot_product_attention(q, k, v, mask, {}, nullptr, &cache, SdpBackend::math);
    scaled_dot_product_attention_backward(dctx, q, k, v, cache, {}, r.dq, r.dk, r.dv);
    return r;
}

// The same shapes as math_path.
inline AttentionResults flash_path(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                   const AttentionMask& mask, const Tensor4& dctx) {
    AttentionResults r;
    Tensor3 lse;
    r.context = flash_attention_forward(q, k, v, mask, {}, &lse);
    flash_attention_backward(dctx, q, k, v, r.context, lse, mask, {}, r.dq, r.dk, r.dv);
    return r;
}

}  // namespace attnlab::test
