// attnlab/core/column_sums.hpp: per-column sums over the rows of a (rows, cols) grid of terms, in
// parallel, with the same result for any thread count.
//
// What it is for: the gradients that reduce over tokens (a Linear's bias, layer norm's gamma and
// beta). A model has few columns (C = 64), so splitting over columns alone leaves one serial
// task; here the tasks are fixed blocks of kColumnSumRows rows x kColumnSumBlock columns, each
// summed in row order into its own partial, and the partials are added in block order. The
// blocks do not depend on the thread count, so neither do the sums. Not for: sums that must
// follow plain row order over all rows (the order here is per block of rows).
//
//   // db (out) += Σ_r dy[r][j], dy: (n, out)
//   float* const outputs[1] = {db};
//   attnlab::column_sums<float, 1>(n, out, outputs, [&](std::size_t r, std::size_t j0, std::size_t w, auto& sums) {
//       for (std::size_t j = 0; j < w; ++j) sums[0][j] += dy[r * out + j0 + j];
//   });
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "attnlab/core/thread_pool.hpp"

namespace attnlab {

inline constexpr std::size_t kColumnSumRows = 256;  // rows per partial sum
inline constexpr std::size_t kColumnSumBlock = 64;  // columns a task sums at once, in local arrays

// out[k][j] += Σ_r term_k(r, j) for K sums per column, j < cols, accumulated in T (float, or
// double for more precision) within each block of rows, the block partials added in double,
// rounded to float once. add_row(r, j0, w, sums) adds row r's
// terms of columns [j0, j0 + w) to sums[k][0 .. w) (T sums[K][kColumnSumBlock], local to the
// task: registers, not memory that could alias the inputs). The partials live in a grow-only
// buffer of the calling thread, so a training step that calls from the same thread every step
// allocates only in its first.
template <class T, std::size_t K, class AddRow>
void column_sums(std::size_t rows, std::size_t cols, float* const (&out)[K], const AddRow& add_row) {
    const std::size_t row_blocks = (rows + kColumnSumRows - 1) / kColumnSumRows;
    const std::size_t col_blocks = (cols + kColumnSumBlock - 1) / kColumnSumBlock;
    // (row_blocks, K, cols): sum k of columns j over row block rb at (rb·K + k)·cols + j
    thread_local std::vector<T> partials;
    if (partials.size() < row_blocks * K * cols) partials.resize(row_blocks * K * cols);
    T* const part = partials.data();
    parallel_for(
        0, row_blocks * col_blocks,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t task = begin; task < end; ++task) {
                const std::size_t rb = task / col_blocks, j0 = (task % col_blocks) * kColumnSumBlock;
                const std::size_t w = std::min(kColumnSumBlock, cols - j0);
                const std::size_t r_end = std::min(rows, (rb + 1) * kColumnSumRows);
                T sums[K][kColumnSumBlock] = {};
                // A whole block passes its width as a constant: once add_row is inlined, its
                // loop over the columns is of fixed length, so the compiler keeps the sums in
                // vector registers across the rows instead of loading and storing them per row.
                if (w == kColumnSumBlock) {
                    for (std::size_t r = rb * kColumnSumRows; r < r_end; ++r) add_row(r, j0, kColumnSumBlock, sums);
                } else {
                    for (std::size_t r = rb * kColumnSumRows; r < r_end; ++r) add_row(r, j0, w, sums);
                }
                for (std::size_t k = 0; k < K; ++k) std::copy(sums[k], sums[k] + w, part + (rb * K + k) * cols + j0);
            }
        },
        1);
    for (std::size_t k = 0; k < K; ++k) {
        for (std::size_t j = 0; j < cols; ++j) {
            double total = 0;  // the few block partials, added in double whatever T
            for (std::size_t rb = 0; rb < row_blocks; ++rb) total += part[(rb * K + k) * cols + j];
            out[k][j] += static_cast<float>(total);
        }
    }
}

}  // namespace attnlab
