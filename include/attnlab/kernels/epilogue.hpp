// attnlab/kernels/epilogue.hpp: what a matmul does to its result in the same pass as it stores it.
//
// What it is for: fusing the elementwise step that follows a product into the product's store,
// so the result is not read and written again: the feed-forward's ReLU after fc1, the ReLU
// backward (the gradient gated by the ReLU's output) after fc2's dx, and a residual connection
// (y = x + sublayer(x), and its gradient dx = dy + sublayerᵀ(dy)) after the product that ends a
// sub-layer. Not for: a ReLU or a gate on an accumulating product (Accumulate::yes), a
// ConfigError like a bias; an added matrix may follow an accumulation (C = (C + A·B) + R).
//
//   // act (N, F) = max(x·W1ᵀ + b1, 0)
//   attnlab::kernels::matmul_nt(x, c, w1, c, act, f, n, f, c, attnlab::Accumulate::no, b1, nullptr,
//                               attnlab::kernels::Epilogue::relu());
#pragma once

namespace attnlab {
namespace kernels {

// none: C = A·B (+ bias). relu: C = max(C, 0), NaN kept (as relu_forward). gate: C = C where
// gate > 0, else 0: dhidden = [act > 0] · dact. add: C = C + R, rounded once more exactly like
// a separate elementwise sum of the stored C and R. The gate and R are (M, N) matrices indexed
// like C (C's ldc), the epilogue's `operand`.
struct Epilogue {
    enum class Kind : unsigned char { none, relu, gate, add };
    Kind kind = Kind::none;
    const float* operand = nullptr;  // the gate (Kind::gate) or R (Kind::add)

    static Epilogue relu() { return {Kind::relu, nullptr}; }
    static Epilogue gated_by(const float* gate) { return {Kind::gate, gate}; }
    static Epilogue adding(const float* r) { return {Kind::add, r}; }
};

// "none", "relu", "gate", "add": for error messages.
inline const char* epilogue_name(Epilogue::Kind kind) {
    switch (kind) {
        case Epilogue::Kind::none: return "none";
        case Epilogue::Kind::relu: return "relu";
        case Epilogue::Kind::gate: return "gate";
        case Epilogue::Kind::add: return "add";
    }
    return "none";
}

}  // namespace kernels
}  // namespace attnlab
