// attnlab/kernels/isa.hpp: which SIMD instruction set the kernels run with, chosen at run time.
//
// What it is for: the portable x86-64 build carries every hot kernel (matmul micro-kernel and
// packing, softmax and the FlashAttention tile steps, layer norm, GELU, ReLU) three times — for
// SSE2, which every x86-64 CPU has, for AVX2 + FMA, and for AVX-512 (F + DQ, 16 floats per
// vector) — and uses the best one the CPU supports, so the default build runs at AVX-512 or AVX2
// speed where it can and still runs everywhere. It also carries the WebAssembly build's kernels
// ("wasm": 4 floats, no FMA, the WebAssembly tile shapes and paths, on SSE4.1), which compute
// what the WebAssembly module computes, bit for bit: never chosen by default, they let the
// command line reproduce the page. WebAssembly and other CPUs carry one table ("wasm",
// "scalar", or xsimd's arch name).
// The environment variable ATTNLAB_ISA (e.g. ATTNLAB_ISA=sse2, ATTNLAB_ISA=wasm) overrides the
// first choice; set_isa switches later (benchmarks and tests compare ISAs in one process).
// Not for: choosing thread counts (core/thread_pool.hpp).
//
//   std::cout << attnlab::kernels::active_isa();           // "avx512" on an AVX-512 Xeon
//   for (auto& name : attnlab::kernels::available_isas())  // {"avx512", "avx2+fma", "sse2", "wasm"}
//       attnlab::kernels::set_isa(name);                   // then run and compare
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnlab {
namespace kernels {

// The name of the WebAssembly kernels' table (ATTNLAB_ISA=wasm, `attnlab ... --isa wasm`).
inline constexpr const char* kWasmIsa = "wasm";

// Name of the instruction set the kernels use now.
std::string active_isa();
// Floats per SIMD vector of the active instruction set (1 for the scalar build).
std::size_t active_simd_width();
// Instruction sets compiled in AND supported by this CPU, best first.
std::vector<std::string> available_isas();
// Switches the kernels to `name` (one of available_isas()); throws ConfigError listing the valid
// names otherwise. Not to be called while kernels run on other threads.
void set_isa(const std::string& name);

// The machine's multiply-add peak with the active ISA, for benchmarks: a register-only loop of
// independent FMA chains (no memory traffic), `rounds` times; the result only defeats dead-code
// elimination. One round is fma_peak_flops_per_round() flops.
float fma_peak_loop(std::size_t rounds);
std::size_t fma_peak_flops_per_round();

}  // namespace kernels
}  // namespace attnlab
