// attnlab/kernels/epilogue.hpp: what a matmul does to its result in the same pass as it stores it.
//
// What it is for: fusing the elementwise step that follows a product into the product's store,
// so the result is not read and written again: the feed-forward's ReLU after fc1, and the ReLU
// backward (the gradient gated by the ReLU's output) after fc2's dx. Not for: accumulating
// products (Accumulate::yes), where it is a ConfigError, like a bias.
//
//   // act (N, F) = max(x·W1ᵀ + b1, 0)
//   attnlab::kernels::matmul_nt(x, c, w1, c, act, f, n, f, c, attnlab::Accumulate::no, b1, nullptr,
//                               attnlab::kernels::Epilogue::relu());
#pragma once

namespace attnlab {
namespace kernels {

// none: C = A·B (+ bias). relu: C = max(C, 0), NaN kept (as relu_forward). gate: C = C where
// gate > 0, else 0, with gate (M, N) indexed like C (C's ldc): dhidden = [act > 0] · dact.
struct Epilogue {
    enum class Kind : unsigned char { none, relu, gate };
    Kind kind = Kind::none;
    const float* gate = nullptr;  // Kind::gate only

    static Epilogue relu() { return {Kind::relu, nullptr}; }
    static Epilogue gated_by(const float* gate) { return {Kind::gate, gate}; }
};

}  // namespace kernels
}  // namespace attnlab
