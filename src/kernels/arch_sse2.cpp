// The SSE2 kernel table: the baseline every x86-64 CPU runs (compiled with the default flags).
#include "kernel_table.hpp"
#include "simd.hpp"

#if ATTNLAB_X86_DISPATCH
#include "kernel_table_impl.hpp"
#endif

namespace attnlab {
namespace kernels {

const KernelTable* table_sse2() {
#if ATTNLAB_X86_DISPATCH
    static constexpr KernelTable table = arch::make_table<xsimd::sse2>("sse2");
    return &table;
#else
    return nullptr;
#endif
}

}  // namespace kernels
}  // namespace attnlab
