// Row softmax, forward and backward: threading here, the SIMD row loops (vector body and scalar
// tail) in softmax_arch.hpp, compiled per ISA and chosen at run time (kernels/isa.hpp).
//
// Legend: rows = independent softmax problems (B·H·T attention rows), cols = entries per row
// (S keys), ld = floats between row starts. See softmax_arch.hpp for the stability argument.
#include "attnlab/kernels/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "kernel_table.hpp"

namespace attnlab {
namespace kernels {
namespace {

// Rows per chunk are chosen so a chunk holds at least this many entries: a (T, S) attention
// score matrix of a short sequence stays on one thread.
constexpr std::size_t kMinEntriesPerChunk = std::size_t{1} << 14;

std::size_t row_grain(std::size_t cols) {
    return std::max<std::size_t>(1, kMinEntriesPerChunk / std::max<std::size_t>(cols, 1));
}

}  // namespace

void softmax_rows(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
    ATTNLAB_DEBUG_ASSERT(rows <= 1 || ld >= cols);
    parallel_for(
        0, rows,
        [&](std::size_t begin, std::size_t end) { table().softmax_rows(x + begin * ld, end - begin, cols, ld); },
        row_grain(cols));
}

void softmax_rows_reference(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
    for (std::size_t r = 0; r < rows; ++r) {
        float* row = x + r * ld;
        double max = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < cols; ++j) max = std::max(max, double(row[j]));
        if (max == -std::numeric_limits<double>::infinity()) {
            std::fill(row, row + cols, 0.0f);
            continue;
        }
        double sum = 0.0;
        for (std::size_t j = 0; j < cols; ++j) sum += std::exp(double(row[j]) - max);
        for (std::size_t j = 0; j < cols; ++j) row[j] = static_cast<float>(std::exp(double(row[j]) - max) / sum);
    }
}

void softmax_rows_backward(const float* y, const float* dy, float* dx, std::size_t rows, std::size_t cols,
                           std::size_t ld) {
    ATTNLAB_DEBUG_ASSERT(rows <= 1 || ld >= cols);
    parallel_for(
        0, rows,
        [&](std::size_t begin, std::size_t end) {
            table().softmax_rows_backward(y + begin * ld, dy + begin * ld, dx + begin * ld, end - begin, cols, ld);
        },
        row_grain(cols));
}

void softmax_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float scale, float* row_max,
                  float* row_sum) {
    ATTNLAB_DEBUG_ASSERT(rows <= 1 || ld >= cols);
    table().softmax_tile(s, rows, cols, ld, scale, row_max, row_sum);
}

void flash_backward_tile(float* s, float* dp, std::size_t rows, std::size_t cols, std::size_t ld, float scale,
                         const float* lse, const float* delta) {
    ATTNLAB_DEBUG_ASSERT(rows <= 1 || ld >= cols);
    table().flash_backward_tile(s, dp, rows, cols, ld, scale, lse, delta);
}

void pointwise_weight_rows(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                           const float* visible) {
    ATTNLAB_DEBUG_ASSERT(rows <= 1 || ld >= cols);
    table().pointwise_weight_rows(normalizer, x, rows, cols, ld, visible);
}

void pointwise_weight_columns(Normalizer normalizer, float* x, std::size_t rows, std::size_t cols, std::size_t ld,
                              const float* visible) {
    ATTNLAB_DEBUG_ASSERT(cols <= 1 || ld >= rows);
    table().pointwise_weight_columns(normalizer, x, rows, cols, ld, visible);
}

}  // namespace kernels

// x: (R, N) -> (R, N)
Tensor2 softmax_rows(const Tensor2& x) {
    Tensor2 y = x;
    kernels::softmax_rows(y.data(), y.shape(0), y.shape(1), y.shape(1));
    return y;
}

}  // namespace attnlab
