// The kernel table of the WebAssembly kernels ("wasm"): xsimd's sse4_1 architecture (WasmArch,
// 4 floats, no FMA) with the WebAssembly build's tile shapes, packing and flash-forward choices
// (simd::kWasmKernels). In the WebAssembly SIMD build this is the one table, Emscripten mapping
// the SSE4.1 operations onto simd128. Natively the top-level CMakeLists.txt compiles this file
// alone with -msse4.1 -ffp-contract=off, and dispatch.cpp offers the table on CPUs with SSE4.1
// (never as the default): the same operations in the same order as the WebAssembly build, so
// `attnlab --isa wasm` reproduces the page's numbers bit for bit (docs/testing.md).
#define ATTNLAB_WASM_TABLE_FILE 1  // simd.hpp: this file defines the WebAssembly kernels' max and exp
#include "attnlab/kernels/isa.hpp"
#include "kernel_table.hpp"
#include "simd.hpp"

#if !defined(ATTNLAB_NO_SIMD) && (defined(__wasm_simd128__) || (ATTNLAB_X86_DISPATCH && defined(__SSE4_1__)))
#define ATTNLAB_HAS_WASM_TABLE 1
#include "kernel_table_impl.hpp"
#else
#define ATTNLAB_HAS_WASM_TABLE 0
#endif

namespace attnlab {
namespace kernels {

const KernelTable* table_wasm() {
#if ATTNLAB_HAS_WASM_TABLE
    static constexpr KernelTable table = arch::make_table<simd::WasmArch>(kWasmIsa);
    return &table;
#else
    return nullptr;
#endif
}

}  // namespace kernels
}  // namespace attnlab
