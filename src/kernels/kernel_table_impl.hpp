// src/kernels/kernel_table_impl.hpp (private): builds the KernelTable of one architecture from
// the kernel templates. Included only by the arch_<isa>.cpp files, each compiled with its ISA's
// flags; see simd.hpp for the rule on what those files may contain.
#pragma once

#include "elementwise_arch.hpp"
#include "flash/flash_arch.hpp"
#include "flash/one_tile_arch.hpp"
#include "kernel_table.hpp"
#include "matmul_arch.hpp"
#include "softmax_arch.hpp"

namespace attnlab {
namespace kernels {
namespace arch {

template <class Arch>
constexpr KernelTable make_table(const char* isa) {
    return KernelTable{
        isa,
        simd::Batch<Arch>::size,
        MatmulShape<Arch>::NR,
        FlashShape<Arch>::NR,
        FlashShape<Arch>::VR,
        FlashShape<Arch>::MR,
        FlashShape<Arch>::kLazyExp,
        MatmulShape<Arch>::kTrimsPartialStrips,
        MatmulShape<Arch>::kKcTransA,
        MatmulShape<Arch>::kMaxLdbInPlace,
        &pack_b<Arch>,
        &gemm_rows<Arch>,
        &softmax_rows<Arch>,
        &softmax_rows_backward<Arch>,
        &softmax_tile<Arch>,
        &flash_backward_tile<Arch>,
        &pointwise_weight_rows<Arch>,
        &pointwise_weight_columns<Arch>,
        &pack_row_groups<Arch, FlashShape<Arch>::NR>,
        &pack_row_groups<Arch, FlashShape<Arch>::MR>,
        &flash_pack_values<Arch>,
        &flash_scores<Arch>,
        &flash_softmax_pv_columns<Arch>,
        &flash_scores_exp<Arch>,
        &flash_pv_columns<Arch>,
        &flash_row_dots<Arch>,
        OneTileShape<Arch>::kMaxKeys,
        OneTileShape<Arch>::kMaxColumns,
        &one_tile_transpose<Arch>,
        &one_tile_softmax<Arch>,
        &one_tile_backward<Arch>,
        &one_tile_backward_from_weights<Arch>,
        &one_tile_product<Arch>,
        &relu_forward<Arch>,
        &relu_backward<Arch>,
        &gelu_forward<Arch>,
        &gelu_backward<Arch>,
        &gelu_tanh_forward<Arch>,
        &gelu_tanh_backward<Arch>,
        &layer_norm_forward<Arch>,
        &layer_norm_backward_rows<Arch>,
        &lstm_cell_forward<Arch>,
        &lstm_cell_backward<Arch>,
        &adamw_update<Arch>,
        &fma_peak<Arch>,
        2 * kPeakChains * simd::Batch<Arch>::size,
    };
}

}  // namespace arch
}  // namespace kernels
}  // namespace attnlab
