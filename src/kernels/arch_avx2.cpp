// The AVX2 + FMA kernel table. The top-level CMakeLists.txt compiles this file alone with
// -mavx2 -mfma; dispatch.cpp uses the table only on CPUs that report both (see simd.hpp for what
// this file may contain so no AVX2 code leaks into the rest of the program).
#include "kernel_table.hpp"
#include "simd.hpp"

#if ATTNLAB_X86_DISPATCH && defined(__AVX2__) && defined(__FMA__)
#define ATTNLAB_HAS_AVX2_TABLE 1
#include "kernel_table_impl.hpp"
#else
#define ATTNLAB_HAS_AVX2_TABLE 0
#endif

namespace attnlab {
namespace kernels {

const KernelTable* table_avx2() {
#if ATTNLAB_HAS_AVX2_TABLE
    static constexpr KernelTable table = arch::make_table<xsimd::fma3<xsimd::avx2>>("avx2+fma");
    return &table;
#else
    return nullptr;
#endif
}

}  // namespace kernels
}  // namespace attnlab
