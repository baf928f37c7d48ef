// The public face of the flash forward tile kernels (kernels/flash_tiles.hpp): sizes, and calls
// into the ISA table (the micro-kernels are in flash_arch.hpp). Serial: the caller
// (attention/flash_attention.cpp) splits work over threads.
#include "attnlab/kernels/flash_tiles.hpp"

#include "kernel_table.hpp"

namespace attnlab {
namespace kernels {

std::size_t flash_strip() { return table().nr; }

std::size_t flash_packed_keys_size(std::size_t keys, std::size_t d) {
    const std::size_t nr = flash_strip();
    return (keys + nr - 1) / nr * nr * d;
}

std::size_t flash_padded_value_dim(std::size_t dv) {
    const std::size_t nr = flash_strip();
    return (dv + nr - 1) / nr * nr;
}

void flash_pack_keys(const float* k, std::size_t keys, std::size_t d, float* kp) {
    table().flash_pack_keys(k, keys, d, kp);
}

void flash_pack_values(const float* v, std::size_t keys, std::size_t dv, float* vp) {
    table().flash_pack_values(v, keys, dv, flash_padded_value_dim(dv), vp);
}

std::size_t flash_query_group() { return table().flash_mr; }

std::size_t flash_packed_queries_size(std::size_t rows, std::size_t d) {
    const std::size_t mr = flash_query_group();
    return (rows + mr - 1) / mr * mr * d;
}

void flash_pack_queries(const float* q, std::size_t rows, std::size_t d, float scale, float* qp) {
    table().flash_pack_queries(q, rows, d, scale, qp);
}

void flash_scores(const float* qp, std::size_t rows, std::size_t d, const float* kp, std::size_t strips, float* s,
                  std::size_t ld) {
    table().flash_scores(qp, rows, d, kp, strips, s, ld);
}

void flash_softmax_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, float* row_max, float* row_sum,
                        float* rescale) {
    table().flash_softmax_tile(s, rows, cols, ld, row_max, row_sum, rescale);
}

void flash_accumulate_pv(const float* p, std::size_t ld, std::size_t rows, std::size_t cols, const float* vp,
                         std::size_t dp, float* o) {
    table().flash_accumulate_pv(p, ld, rows, cols, vp, dp, o);
}

void flash_softmax_pv_tile(float* s, std::size_t rows, std::size_t cols, std::size_t ld, const float* vp,
                           std::size_t dp, float* o, float* row_max, float* row_sum) {
    table().flash_softmax_pv_tile(s, rows, cols, ld, vp, dp, o, row_max, row_sum);
}

}  // namespace kernels
}  // namespace attnlab
