// The kernel table of builds without x86 run-time dispatch: WebAssembly (xsimd's sse4_1 arch,
// which Emscripten maps onto simd128), other CPUs (xsimd's best compiled-in arch), and the
// scalar flavour (ATTNLAB_NO_SIMD: one-lane batches).
#include "kernel_table.hpp"
#include "simd.hpp"

#if !ATTNLAB_X86_DISPATCH
#include "kernel_table_impl.hpp"
#endif

namespace attnlab {
namespace kernels {

const KernelTable* table_portable() {
#if ATTNLAB_X86_DISPATCH
    return nullptr;
#elif defined(ATTNLAB_NO_SIMD)
    static constexpr KernelTable table = arch::make_table<simd::scalar>("scalar");
    return &table;
#elif defined(__wasm_simd128__)
    static constexpr KernelTable table = arch::make_table<xsimd::default_arch>("wasm-simd128");
    return &table;
#else
    static constexpr KernelTable table = arch::make_table<xsimd::default_arch>(xsimd::default_arch::name());
    return &table;
#endif
}

}  // namespace kernels
}  // namespace attnlab
