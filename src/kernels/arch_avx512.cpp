// The AVX-512 kernel table (512-bit vectors of 16 floats, 32 vector registers, FMA). The
// top-level CMakeLists.txt compiles this file alone with -mavx512f -mavx512dq (F implies AVX2
// and FMA; xsimd 8.1's avx512f code uses DQ's 256-bit extracts, for hadd); dispatch.cpp uses
// the table only on CPUs (and kernels) that report AVX-512F and DQ, every AVX-512 server CPU
// since 2017, so no AVX-512 code runs elsewhere (see simd.hpp for what this file may contain).
// GCC 12 reports the `__m512 __Y = __Y;` of its own _mm512_undefined_ps as uninitialised once
// xsimd's AVX-512 max and shift are inlined into the fully unrolled one-tile kernels: a false
// positive inside the compiler's intrinsic headers, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "kernel_table.hpp"
#include "simd.hpp"

#if ATTNLAB_X86_DISPATCH && defined(__AVX512F__) && defined(__AVX512DQ__)
#define ATTNLAB_HAS_AVX512_TABLE 1
#include "kernel_table_impl.hpp"
#else
#define ATTNLAB_HAS_AVX512_TABLE 0
#endif

namespace attnlab {
namespace kernels {

const KernelTable* table_avx512() {
#if ATTNLAB_HAS_AVX512_TABLE
    static constexpr KernelTable table = arch::make_table<xsimd::avx512f>("avx512");
    return &table;
#else
    return nullptr;
#endif
}

}  // namespace kernels
}  // namespace attnlab
