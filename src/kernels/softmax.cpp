// Row softmax, forward and backward, with an xsimd vector body and a scalar tail per loop.
//
// Legend: rows = independent softmax problems (B·H·T attention rows), cols = entries per row
// (S keys), ld = floats between row starts.
//
// Stability: y_j = exp(x_j - max) / Σ exp(x_i - max). Subtracting the row max makes every
// exponent <= 0, so exp never overflows and the sum is >= 1 (the max entry contributes
// exp(0) = 1): finite input can give neither Inf nor NaN. Masked entries are -inf and
// exp(-inf - max) = 0 exactly. A row with no finite entry has max = -inf; there
// x - max would be NaN, so such a row is defined as all zeros (attention to nothing).
#include "attnlab/kernels/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"

namespace attnlab {
namespace kernels {
namespace {

using Batch = xsimd::batch<float>;
constexpr std::size_t W = Batch::size;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Rows per chunk are chosen so a chunk holds at least this many entries: a (T, S) attention
// score matrix of a short sequence stays on one thread.
constexpr std::size_t kMinEntriesPerChunk = std::size_t{1} << 14;

std::size_t row_grain(std::size_t cols) {
    return std::max<std::size_t>(1, kMinEntriesPerChunk / std::max<std::size_t>(cols, 1));
}

// max_j x[j] over n floats; -inf when n == 0 or every entry is -inf.
float row_max(const float* x, std::size_t n) {
    Batch vmax(kNegInf);
    std::size_t j = 0;
    for (; j + W <= n; j += W) vmax = xsimd::max(vmax, Batch::load_unaligned(x + j));
    alignas(64) float lanes[W];
    vmax.store_aligned(lanes);
    float best = kNegInf;
    for (std::size_t l = 0; l < W; ++l) best = std::max(best, lanes[l]);
    for (; j < n; ++j) best = std::max(best, x[j]);
    return best;
}

// x: (n), overwritten by softmax(x).
void softmax_row(float* x, std::size_t n) {
    const float max = row_max(x, n);
    if (max == kNegInf) {  // every entry masked: no weight anywhere (and n == 0 is a no-op)
        std::fill(x, x + n, 0.0f);
        return;
    }
    const Batch vmax(max);
    Batch vsum(0.0f);
    std::size_t j = 0;
    for (; j + W <= n; j += W) {
        const Batch e = xsimd::exp(Batch::load_unaligned(x + j) - vmax);
        e.store_unaligned(x + j);
        vsum += e;
    }
    float sum = xsimd::hadd(vsum);
    for (; j < n; ++j) {
        x[j] = std::exp(x[j] - max);
        sum += x[j];
    }
    const float inv = 1.0f / sum;  // sum >= 1
    const Batch vinv(inv);
    j = 0;
    for (; j + W <= n; j += W) (Batch::load_unaligned(x + j) * vinv).store_unaligned(x + j);
    for (; j < n; ++j) x[j] *= inv;
}

// y, dy, dx: (n); dx = y ⊙ (dy - Σ_j dy_j y_j), dx may alias dy.
void softmax_row_backward(const float* y, const float* dy, float* dx, std::size_t n) {
    Batch vdot(0.0f);
    std::size_t j = 0;
    for (; j + W <= n; j += W) {
        vdot = xsimd::fma(Batch::load_unaligned(dy + j), Batch::load_unaligned(y + j), vdot);
    }
    float dot = xsimd::hadd(vdot);
    for (; j < n; ++j) dot += dy[j] * y[j];
    // All of dy has been read: writing dx (possibly dy itself) is safe from here on.
    const Batch vdot_all(dot);
    j = 0;
    for (; j + W <= n; j += W) {
        const Batch yv = Batch::load_unaligned(y + j);
        (yv * (Batch::load_unaligned(dy + j) - vdot_all)).store_unaligned(dx + j);
    }
    for (; j < n; ++j) dx[j] = y[j] * (dy[j] - dot);
}

}  // namespace

void softmax_rows(float* x, std::size_t rows, std::size_t cols, std::size_t ld) {
    ATTNLAB_DEBUG_ASSERT(rows <= 1 || ld >= cols);
    parallel_for(
        0, rows,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t r = begin; r < end; ++r) softmax_row(x + r * ld, cols);
        },
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
            for (std::size_t r = begin; r < end; ++r) softmax_row_backward(y + r * ld, dy + r * ld, dx + r * ld, cols);
        },
        row_grain(cols));
}

}  // namespace kernels

// x: (R, N) -> (R, N)
Tensor2 softmax_rows(const Tensor2& x) {
    Tensor2 y = x;
    kernels::softmax_rows(y.data(), y.shape(0), y.shape(1), y.shape(1));
    return y;
}

}  // namespace attnlab
