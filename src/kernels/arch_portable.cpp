// The kernel table of builds with neither x86 run-time dispatch nor the WebAssembly kernels:
// other CPUs (xsimd's best compiled-in arch) and the scalar WebAssembly flavour (ATTNLAB_NO_SIMD:
// one-lane batches). The WebAssembly SIMD build's table is arch_wasm.cpp's.
#include "kernel_table.hpp"
#include "simd.hpp"

#if !ATTNLAB_X86_DISPATCH && !defined(__wasm_simd128__)
#include "kernel_table_impl.hpp"
#endif

namespace attnlab {
namespace kernels {

const KernelTable* table_portable() {
#if ATTNLAB_X86_DISPATCH || (defined(__wasm_simd128__) && !defined(ATTNLAB_NO_SIMD))
    return nullptr;
#elif defined(ATTNLAB_NO_SIMD)
    static constexpr KernelTable table = arch::make_table<simd::scalar>("scalar");
    return &table;
#else
    static constexpr KernelTable table = arch::make_table<xsimd::default_arch>(xsimd::default_arch::name());
    return &table;
#endif
}

}  // namespace kernels
}  // namespace attnlab
