// attnlab/kernels/matmul.hpp: single-precision matrix products, SIMD (xsimd) and cache-blocked.
//
// What it is for: every dense product in the engine (projections, Q·Kᵀ, weights·V and their
// gradients). The three variants avoid materialising transposes: PyTorch's Linear weight is
// (out, in), so y = x·Wᵀ is matmul_nt, and dW = dyᵀ·x is matmul_tn. Not for: batched or
// strided views beyond a leading dimension (callers loop over heads).
//
// Pointer variants take row-major matrices with explicit leading dimensions (elements between
// rows) and either overwrite C or accumulate into it (C += ...). When overwriting, an optional
// bias row (N) is added to every row of C in the same pass (C = A·B + bias, one rounding:
// exactly C = bias followed by C += A·B); with Accumulate::yes a bias is a ConfigError. They run in parallel over rows
// of C on the default thread pool; each element is computed by the same instruction sequence
// whatever the thread count, so results do not depend on it.
//
//   attnlab::Tensor2 a = ..., b = ...;          // (M, K), (K, N)
//   attnlab::Tensor2 c = attnlab::matmul(a, b); // (M, N)
#pragma once

#include <cstddef>

#include "attnlab/core/tensor.hpp"
#include "attnlab/kernels/epilogue.hpp"

namespace attnlab {

enum class Accumulate : bool { no = false, yes = true };

namespace kernels {
// Each packs B into `scratch` (matmul_scratch_floats(n, k) floats) or, when it is null, into a
// grow-only buffer of the calling thread. Kernels that run small products inside their own pool
// tasks (flash attention's tiles) pass a buffer per thread they own, so that which worker
// happens to run a task cannot make a later call allocate.
// C (M, N) = A (M, K) · B (K, N)
void matmul_nn(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc = Accumulate::no,
               const float* bias = nullptr, float* scratch = nullptr, const Epilogue& epilogue = {});
// C (M, N) = A (M, K) · B (N, K)ᵀ
void matmul_nt(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc = Accumulate::no,
               const float* bias = nullptr, float* scratch = nullptr, const Epilogue& epilogue = {});
// C (M, N) = A (K, M)ᵀ · B (K, N)
void matmul_tn(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
               std::size_t m, std::size_t n, std::size_t k, Accumulate acc = Accumulate::no,
               const float* bias = nullptr, float* scratch = nullptr, const Epilogue& epilogue = {});
// Floats of `scratch` the products above need for an (M, N) result summed over K.
std::size_t matmul_scratch_floats(std::size_t n, std::size_t k);

// The same products with a plain triple loop (double accumulation): the reference every fast
// path is tested against.
void matmul_nn_reference(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                         std::size_t ldc, std::size_t m, std::size_t n, std::size_t k);
void matmul_nt_reference(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                         std::size_t ldc, std::size_t m, std::size_t n, std::size_t k);
void matmul_tn_reference(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                         std::size_t ldc, std::size_t m, std::size_t n, std::size_t k);
}  // namespace kernels

// a: (M, K), b: (K, N) -> (M, N)
Tensor2 matmul(const Tensor2& a, const Tensor2& b);
// a: (M, K), b: (N, K) -> (M, N)     (a · bᵀ)
Tensor2 matmul_nt(const Tensor2& a, const Tensor2& b);
// a: (K, M), b: (K, N) -> (M, N)     (aᵀ · b)
Tensor2 matmul_tn(const Tensor2& a, const Tensor2& b);

}  // namespace attnlab
