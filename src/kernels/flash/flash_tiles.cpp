// The public face of the flash tile kernels (kernels/flash_tiles.hpp): sizes, and calls into the
// ISA table (the micro-kernels are in flash_arch.hpp). Serial: the caller
// (src/attention/flash/) splits work over threads.
#include "attnlab/kernels/flash_tiles.hpp"

#include <cstdint>

#include "../kernel_table.hpp"
#include "attnlab/core/flop_counter.hpp"

namespace attnlab {
namespace kernels {

std::size_t flash_strip() { return table().flash_nr; }
std::size_t flash_group() { return table().flash_mr; }

std::size_t flash_strips_size(std::size_t rows, std::size_t d) {
    const std::size_t nr = flash_strip();
    return (rows + nr - 1) / nr * nr * d;
}

std::size_t flash_groups_size(std::size_t rows, std::size_t d) {
    const std::size_t mr = flash_group();
    return (rows + mr - 1) / mr * mr * d;
}

void flash_pack_strips(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float scale, float* xs) {
    table().flash_pack_strips(x, rows, d, ld, scale, xs);
}

void flash_pack_groups(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float scale, float* xg) {
    table().flash_pack_groups(x, rows, d, ld, scale, xg);
}

std::size_t flash_padded_value_dim(std::size_t dv) {
    const std::size_t nr = table().flash_vr;
    return (dv + nr - 1) / nr * nr;
}

void flash_pack_values(const float* v, std::size_t keys, std::size_t dv, std::size_t ld, float* vp) {
    table().flash_pack_values(v, keys, dv, ld, flash_padded_value_dim(dv), vp);
}

void flash_scores(const float* xg, std::size_t rows, std::size_t d, const float* ys, std::size_t strips, float* s,
                  std::size_t ld) {
    count_multiply_adds(static_cast<std::uint64_t>(rows) * strips * flash_strip() * d);
    table().flash_scores(xg, rows, d, ys, strips, s, ld);
}

void flash_softmax_pv_columns(float* st, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                              std::size_t ldv, std::size_t dp, float* o, float* row_max, float* row_sum,
                              float* alpha) {
    count_multiply_adds(static_cast<std::uint64_t>(rows) * cols * dp);
    table().flash_softmax_pv_columns(st, rows, cols, ldq, vp, ldv, dp, o, row_max, row_sum, alpha);
}

bool flash_lazy_exp() { return table().flash_lazy_exp; }

void flash_scores_exp(const float* kg, std::size_t keys, std::size_t d, const float* qs, std::size_t strips,
                      float* pt, std::size_t ld, const float* ref, float* tile_max, float* tile_sum) {
    count_multiply_adds(static_cast<std::uint64_t>(keys) * strips * flash_strip() * d);
    table().flash_scores_exp(kg, keys, d, qs, strips, pt, ld, ref, tile_max, tile_sum);
}

void flash_pv_columns(const float* pt, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                      std::size_t ldv, std::size_t dp, float* o, const float* alpha) {
    count_multiply_adds(static_cast<std::uint64_t>(rows) * cols * dp);
    table().flash_pv_columns(pt, rows, cols, ldq, vp, ldv, dp, o, alpha);
}

void flash_row_dots(const float* a, std::size_t lda, const float* b, std::size_t ldb, std::size_t rows,
                    std::size_t cols, float* out) {
    count_multiply_adds(static_cast<std::uint64_t>(rows) * cols);
    table().flash_row_dots(a, lda, b, ldb, rows, cols, out);
}

bool one_tile_fits(std::size_t keys, std::size_t columns) {
    const KernelTable& t = table();
    return keys > 0 && keys % t.lanes == 0 && keys <= t.one_tile_max_keys && columns > 0 &&
           columns % t.lanes == 0 && columns <= t.one_tile_max_columns;
}

void one_tile_transpose(const float* x, std::size_t rows, std::size_t d, std::size_t ld, float* xt) {
    table().one_tile_transpose(x, rows, d, ld, xt);
}

void one_tile_softmax(const float* q, std::size_t lq, std::size_t rows, std::size_t d, const float* kt,
                      std::size_t keys, float scale, std::ptrdiff_t hide_from, float* p, float* row_max,
                      float* row_sum) {
    count_multiply_adds(static_cast<std::uint64_t>(rows) * keys * d);
    table().one_tile_softmax(q, lq, rows, d, kt, keys, scale, hide_from, p, row_max, row_sum);
}

void one_tile_backward(const float* q, std::size_t lq, const float* dout, std::size_t ldo, std::size_t rows,
                       std::size_t d, std::size_t dv, const float* kt, const float* vt, std::size_t keys, float scale,
                       std::ptrdiff_t hide_from, const float* lse, const float* delta, float* p, float* ds) {
    count_multiply_adds(static_cast<std::uint64_t>(rows) * keys * (d + dv));
    table().one_tile_backward(q, lq, dout, ldo, rows, d, dv, kt, vt, keys, scale, hide_from, lse, delta, p, ds);
}

void one_tile_backward_from_weights(const float* dout, std::size_t ldo, std::size_t rows, std::size_t dv,
                                    const float* vt, std::size_t keys, float scale, const float* lse,
                                    const float* delta, const float* p, float* ds) {
    count_multiply_adds(static_cast<std::uint64_t>(rows) * keys * dv);
    table().one_tile_backward_from_weights(dout, ldo, rows, dv, vt, keys, scale, lse, delta, p, ds);
}

void one_tile_product(bool trans_a, const float* a, std::size_t rows, std::size_t k, const float* b,
                      std::size_t ldb, std::size_t n, float* c, std::size_t ldc, bool add) {
    count_multiply_adds(static_cast<std::uint64_t>(rows) * k * n);
    table().one_tile_product(trans_a, a, rows, k, b, ldb, n, c, ldc, add);
}

}  // namespace kernels
}  // namespace attnlab
