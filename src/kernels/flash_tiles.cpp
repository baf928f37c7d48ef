// The public face of the flash tile kernels (kernels/flash_tiles.hpp): sizes, and calls into the
// ISA table (the micro-kernels are in flash_arch.hpp). Serial: the caller
// (attention/flash_attention.cpp) splits work over threads.
#include "attnlab/kernels/flash_tiles.hpp"

#include "kernel_table.hpp"

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
    const std::size_t nr = flash_strip();
    return (dv + nr - 1) / nr * nr;
}

void flash_pack_values(const float* v, std::size_t keys, std::size_t dv, std::size_t ld, float* vp) {
    table().flash_pack_values(v, keys, dv, ld, flash_padded_value_dim(dv), vp);
}

void flash_scores(const float* xg, std::size_t rows, std::size_t d, const float* ys, std::size_t strips, float* s,
                  std::size_t ld) {
    table().flash_scores(xg, rows, d, ys, strips, s, ld);
}

void flash_softmax_pv_columns(float* st, std::size_t rows, std::size_t cols, std::size_t ldq, const float* vp,
                              std::size_t ldv, std::size_t dp, float* o, float* row_max, float* row_sum,
                              float* alpha) {
    table().flash_softmax_pv_columns(st, rows, cols, ldq, vp, ldv, dp, o, row_max, row_sum, alpha);
}

}  // namespace kernels
}  // namespace attnlab
