// attnlab/kernels/adamw.hpp: the elementwise AdamW update of one parameter tensor.
//
// What it is for: AdamW::update (train/optimizer.hpp) computes the step's coefficients once per
// tensor, in double as PyTorch does; this kernel applies them to every element in SIMD. Not
// for: computing the coefficients (bias corrections, the learning rate schedule).
//
//   attnlab::kernels::AdamWStep s{...};  // from AdamW::update
//   attnlab::kernels::adamw_update(p, grad, m, v, n, s);
#pragma once

#include <cstddef>

namespace attnlab {
namespace kernels {

// The coefficients of one step, each already rounded to float (see AdamW::update).
struct AdamWStep {
    bool decay = false;                 // apply the decoupled weight decay: p *= keep
    float keep = 1.0f;                  // 1 - lr · weight_decay
    float one_minus_beta1 = 0.1f;       // m += (1 - beta1)·(g - m)   (torch: exp_avg.lerp_)
    float beta2 = 0.999f;               // v = beta2·v + (1 - beta2)·g²
    float one_minus_beta2 = 0.001f;
    float bias_correction2_sqrt = 1.0f; // denom = √v / √(1 - beta2^t) + eps
    float eps = 1e-8f;
    float step_size = 1e-3f;            // p -= step_size·m / denom, step_size = lr / (1 - beta1^t)
};

// p, m, v (n) updated in place from the gradient g (n), in this order per element:
//   p *= keep (if decay); m += (1 - beta1)(g - m); v = beta2·v + (1 - beta2)·g·g;
//   p -= step_size·m / (√v / bias_correction2_sqrt + eps)
// with the same operations for every element. The SSE2 table rounds each of them (it has no
// fused multiply-add); the AVX2 and AVX-512 tables may fuse a·b + c, as the compiler contracts.
void adamw_update(float* p, const float* g, float* m, float* v, std::size_t n, const AdamWStep& step);

}  // namespace kernels
}  // namespace attnlab
