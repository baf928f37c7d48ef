// src/kernels/simd.hpp (private to src/kernels): the vector type the kernel templates are written
// against, for each instruction set the library is compiled for.
//
// Every SIMD kernel is ONE template on an architecture tag `Arch` (src/kernels/*_arch.hpp), and
// each arch_<isa>.cpp translation unit instantiates all of them for its ISA with its own compile
// flags (see the top-level CMakeLists.txt); dispatch.cpp picks one table at run time. Tags:
//   xsimd::sse2              baseline of every x86-64 CPU (the portable default build)
//   xsimd::fma3<xsimd::avx2> AVX2 + FMA, only in arch_avx2.cpp (compiled with -mavx2 -mfma)
//   xsimd::avx512f           AVX-512, only in arch_avx512.cpp
//   WasmArch (xsimd::sse4_1) the WebAssembly kernels (arch_wasm.cpp): in the WebAssembly build
//                            Emscripten maps sse4_1 onto simd128; natively the same file compiled
//                            with -msse4.1 (no FMA) is the "wasm" table, which computes what the
//                            WebAssembly build computes, in the same order, bit for bit
//   xsimd::default_arch      non-x86 native builds (arch_portable.cpp)
//   simd::scalar             ATTNLAB_NO_SIMD (the scalar WASM flavour): one lane, plain floats
//
// Where the WebAssembly kernels take other choices than the native ones (tile shapes, packing,
// the lazy-reference flash forward, the row maximum's last steps), the templates ask
// kWasmKernels<Arch>, a compile-time property of the architecture tag, never of the compiler
// target: so the native "wasm" table takes every choice the WebAssembly build takes.
//
// Rule for code included by the arch_*.cpp files: raw pointers and loops only — no std::vector,
// std::function, <algorithm> or other inline library templates. A library template instantiated
// in the AVX2 file is an ordinary weak symbol, and the linker may keep that AVX2 copy for the
// whole program, which would then fault on a CPU without AVX2. Helpers here live in namespace
// simd and are templates on Arch (or trivially scalar), so each ISA gets its own symbols.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#if !defined(ATTNLAB_NO_SIMD)
#include <xsimd/xsimd.hpp>
#endif
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif !defined(ATTNLAB_NO_SIMD) && defined(ATTNLAB_WASM_TABLE_FILE) && defined(__SSE4_1__)
#include <smmintrin.h>
#endif
// 4 x 4 transposes for packing (simd::transpose4). xsimd 8.1 has no transpose, but the four
// 128-bit SSE shuffles it takes exist on every x86 table and map 1:1 onto simd128 shuffles in
// Emscripten's SSE headers (the WASM build compiles with -msse4.1).
#if !defined(ATTNLAB_NO_SIMD) && defined(__SSE2__)
#include <xmmintrin.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#define ATTNLAB_SSE_TRANSPOSE 1
#else
#define ATTNLAB_SSE_TRANSPOSE 0
#endif

// True where the library carries an SSE2 and an AVX2+FMA table and chooses at run time.
#if !defined(ATTNLAB_NO_SIMD) && (defined(__x86_64__) || defined(_M_X64)) && !defined(__EMSCRIPTEN__)
#define ATTNLAB_X86_DISPATCH 1
#else
#define ATTNLAB_X86_DISPATCH 0
#endif

// True where this file is compiled for the WebAssembly kernels' vectors: in the WebAssembly
// build, and natively in arch_wasm.cpp (ATTNLAB_WASM_TABLE_FILE, compiled with SSE4.1) alone.
#if !defined(ATTNLAB_NO_SIMD) && \
    (defined(__wasm_simd128__) || (defined(ATTNLAB_WASM_TABLE_FILE) && defined(__SSE4_1__)))
#define ATTNLAB_WASM_VECTORS 1
#else
#define ATTNLAB_WASM_VECTORS 0
#endif

namespace attnlab {
namespace kernels {
namespace simd {

// The one-lane "architecture" of the scalar flavour.
struct scalar {};

// Whether Arch is the WebAssembly kernels' architecture (WasmArch). Every choice the
// WebAssembly kernels make differently from the native ones is `if constexpr
// (kWasmKernels<Arch>)`, so the native "wasm" table makes it too.
template <class Arch>
inline constexpr bool kWasmKernels = false;
#if !defined(ATTNLAB_NO_SIMD)
using WasmArch = xsimd::sse4_1;
template <>
inline constexpr bool kWasmKernels<WasmArch> = true;
#endif

// A batch of one float with the subset of xsimd::batch<float>'s interface the kernels use.
struct ScalarBatch {
    static constexpr std::size_t size = 1;
    float v;
    ScalarBatch() = default;
    ScalarBatch(float x) : v(x) {}  // NOLINT: broadcast, like xsimd::batch(float)
    static ScalarBatch load_aligned(const float* p) { return ScalarBatch(*p); }
    static ScalarBatch load_unaligned(const float* p) { return ScalarBatch(*p); }
    void store_aligned(float* p) const { *p = v; }
    void store_unaligned(float* p) const { *p = v; }
    friend ScalarBatch operator+(ScalarBatch a, ScalarBatch b) { return a.v + b.v; }
    friend ScalarBatch operator-(ScalarBatch a, ScalarBatch b) { return a.v - b.v; }
    friend ScalarBatch operator*(ScalarBatch a, ScalarBatch b) { return a.v * b.v; }
    friend ScalarBatch operator/(ScalarBatch a, ScalarBatch b) { return a.v / b.v; }
    ScalarBatch& operator+=(ScalarBatch b) {
        v += b.v;
        return *this;
    }
    friend bool operator<(ScalarBatch a, ScalarBatch b) { return a.v < b.v; }
    friend bool operator>(ScalarBatch a, ScalarBatch b) { return a.v > b.v; }
};

template <class Arch>
struct BatchOf;
template <>
struct BatchOf<scalar> {
    using type = ScalarBatch;
};
#if !defined(ATTNLAB_NO_SIMD)
template <class Arch>
struct BatchOf {
    using type = xsimd::batch<float, Arch>;
};
#endif

// Floats of architecture Arch: xsimd::batch<float, Arch>, or ScalarBatch.
template <class Arch>
using Batch = typename BatchOf<Arch>::type;

// --- Operations: one overload set for xsimd batches, one for the scalar lane. ---

// (static: every translation unit keeps its own copy, compiled with its own flags.)
static inline ScalarBatch fma(ScalarBatch a, ScalarBatch b, ScalarBatch c) { return a.v * b.v + c.v; }
static inline ScalarBatch max(ScalarBatch a, ScalarBatch b) { return a.v < b.v ? b.v : a.v; }
static inline ScalarBatch exp(ScalarBatch a) { return std::exp(a.v); }
static inline ScalarBatch erf(ScalarBatch a) { return std::erf(a.v); }
static inline ScalarBatch sqrt(ScalarBatch a) { return std::sqrt(a.v); }
static inline float hadd(ScalarBatch a) { return a.v; }
static inline ScalarBatch select(bool c, ScalarBatch a, ScalarBatch b) { return c ? a : b; }

#if !defined(ATTNLAB_NO_SIMD)
template <class A>
inline xsimd::batch<float, A> fma(const xsimd::batch<float, A>& a, const xsimd::batch<float, A>& b,
                                  const xsimd::batch<float, A>& c) {
    return xsimd::fma(a, b, c);
}
template <class A>
inline xsimd::batch<float, A> max(const xsimd::batch<float, A>& a, const xsimd::batch<float, A>& b) {
    return xsimd::max(a, b);
}
template <class A>
inline xsimd::batch<float, A> exp(const xsimd::batch<float, A>& a) {
    return xsimd::exp(a);
}
template <class A>
inline xsimd::batch<float, A> erf(const xsimd::batch<float, A>& a) {
    return xsimd::erf(a);
}
template <class A>
inline xsimd::batch<float, A> sqrt(const xsimd::batch<float, A>& a) {
    return xsimd::sqrt(a);  // the correctly rounded square root (sqrtps; f32x4.sqrt in WebAssembly)
}
template <class A>
inline float hadd(const xsimd::batch<float, A>& a) {
    return xsimd::hadd(a);
}
template <class A>
inline xsimd::batch<float, A> select(const xsimd::batch_bool<float, A>& c, const xsimd::batch<float, A>& a,
                                     const xsimd::batch<float, A>& b) {
    return xsimd::select(c, a, b);
}
#endif

#if ATTNLAB_WASM_VECTORS
// The WebAssembly kernels' max and exp. In the WebAssembly build xsimd's sse4_1 batches go
// through Emscripten's SSE emulation, which emulates two of the operations the hot loops need
// badly (read with wasm-dis): _mm_max_ps becomes f32x4.gt + v128.bitselect, and _mm_cvtps_epi32
// inside xsimd::exp becomes a per-lane loop through memory (f32.nearest, i32.trunc_f32_s,
// stores). These overloads (exact matches, so preferred over the templates above) are written
// once against the f32x4 operations below: simd128 instructions that map 1:1 in the WebAssembly
// build, and the SSE4.1 instructions that compute the same lanes natively (the "wasm" table).
// static: every translation unit keeps its own copy (see the rule at the top).
using WasmBatch = xsimd::batch<float, WasmArch>;

namespace f32x4 {
#if defined(__wasm_simd128__)
using F = v128_t;  // four floats
using I = v128_t;  // four int32
static inline F splat(float x) { return wasm_f32x4_splat(x); }
static inline F add(F a, F b) { return wasm_f32x4_add(a, b); }
static inline F sub(F a, F b) { return wasm_f32x4_sub(a, b); }
static inline F mul(F a, F b) { return wasm_f32x4_mul(a, b); }
static inline F nearest(F a) { return wasm_f32x4_nearest(a); }  // round half to even
static inline F pmax(F a, F b) { return wasm_f32x4_pmax(a, b); }  // a < b ? b : a
static inline F lt(F a, F b) { return wasm_f32x4_lt(a, b); }
static inline F gt(F a, F b) { return wasm_f32x4_gt(a, b); }
static inline F select(F mask, F a, F b) { return wasm_v128_bitselect(a, b, mask); }  // mask ? a : b
static inline I trunc_i32(F a) { return wasm_i32x4_trunc_sat_f32x4(a); }
static inline I splat_i32(int x) { return wasm_i32x4_splat(x); }
static inline I add_i32(I a, I b) { return wasm_i32x4_add(a, b); }
static inline I sub_i32(I a, I b) { return wasm_i32x4_sub(a, b); }
static inline I shr_i32(I a, int n) { return wasm_i32x4_shr(a, n); }  // arithmetic
static inline I shl_i32(I a, int n) { return wasm_i32x4_shl(a, n); }
static inline F bits_f32(I a) { return a; }
static inline F of(const WasmBatch& x) { return (v128_t)(__m128)x; }
static inline WasmBatch batch(F x) { return WasmBatch((__m128)x); }
#else
using F = __m128;
using I = __m128i;
static inline F splat(float x) { return _mm_set1_ps(x); }
static inline F add(F a, F b) { return _mm_add_ps(a, b); }
static inline F sub(F a, F b) { return _mm_sub_ps(a, b); }
static inline F mul(F a, F b) { return _mm_mul_ps(a, b); }
static inline F nearest(F a) { return _mm_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// maxps(x, y) = x > y ? x : y, so maxps(b, a) = a < b ? b : a: f32x4.pmax, NaN lanes included.
static inline F pmax(F a, F b) { return _mm_max_ps(b, a); }
static inline F lt(F a, F b) { return _mm_cmplt_ps(a, b); }
static inline F gt(F a, F b) { return _mm_cmpgt_ps(a, b); }
static inline F select(F mask, F a, F b) { return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)); }
// cvttps gives INT_MIN where trunc_sat saturates (|a| >= 2^31) or gives 0 (NaN): exp below uses
// it only for lanes its range selects overwrite or that are NaN whatever 2^k is.
static inline I trunc_i32(F a) { return _mm_cvttps_epi32(a); }
static inline I splat_i32(int x) { return _mm_set1_epi32(x); }
static inline I add_i32(I a, I b) { return _mm_add_epi32(a, b); }
static inline I sub_i32(I a, I b) { return _mm_sub_epi32(a, b); }
static inline I shr_i32(I a, int n) { return _mm_srai_epi32(a, n); }
static inline I shl_i32(I a, int n) { return _mm_slli_epi32(a, n); }
static inline F bits_f32(I a) { return _mm_castsi128_ps(a); }
static inline F of(const WasmBatch& x) { return x; }
static inline WasmBatch batch(F x) { return WasmBatch(x); }
#endif
}  // namespace f32x4

// f32x4.pmax: b < a ? a : b, one instruction (like maxps; inputs here are never NaN).
static inline WasmBatch max(const WasmBatch& a, const WasmBatch& b) {
    return f32x4::batch(f32x4::pmax(f32x4::of(a), f32x4::of(b)));
}

// exp(x) in the Cephes single-precision form (the algorithm xsimd uses too, ~1 ulp):
// k = nearest(x·log2 e), r = x - k·ln 2 (in two parts), exp(r) by a degree-7 polynomial,
// times 2^k built in the exponent bits. x < ln(FLT_MIN) (including -inf) gives 0, x > ln(FLT_MAX)
// gives +inf.
static inline WasmBatch exp(const WasmBatch& xb) {
    using namespace f32x4;
    const F x = of(xb);
    const F k = nearest(mul(x, splat(1.44269504088896341f)));
    F r = sub(x, mul(k, splat(0.693359375f)));
    r = sub(r, mul(k, splat(-2.12194440e-4f)));
    F p = splat(1.9875691500e-4f);
    p = add(mul(p, r), splat(1.3981999507e-3f));
    p = add(mul(p, r), splat(8.3334519073e-3f));
    p = add(mul(p, r), splat(4.1665795894e-2f));
    p = add(mul(p, r), splat(1.6666665459e-1f));
    p = add(mul(p, r), splat(5.0000001201e-1f));
    p = add(add(mul(p, mul(r, r)), r), splat(1.0f));
    // 2^k as 2^h · 2^(k-h), h = k/2, so k = 128 (x just below ln FLT_MAX) builds no infinity.
    const I ki = trunc_i32(k);
    const I h = shr_i32(ki, 1);
    const I bias = splat_i32(127);
    const F pow2_h = bits_f32(shl_i32(add_i32(h, bias), 23));
    const F pow2_rest = bits_f32(shl_i32(add_i32(sub_i32(ki, h), bias), 23));
    F y = mul(mul(p, pow2_h), pow2_rest);
    y = select(lt(x, splat(-87.3365447504f)), splat(0.0f), y);
    y = select(gt(x, splat(88.7228391117f)), splat(__builtin_inff()), y);
    return batch(y);
}
#endif

// 2^t for t <= 0 (and -inf), for the probabilities of an online softmax: t is clamped to -127,
// split as t = n + f with n = nearest integer (the 1.5·2^23 "magic number" addition, so no float
// to int conversion, which Emscripten emulates badly), 2^f for |f| <= 1/2 by a degree-5
// polynomial (relative error < 2.4e-7), and 2^n built in the exponent bits from the low
// bits of t + magic. n = -127 gives exactly 0: exp2(-inf) = 0, and results below 2^-126 flush
// to 0 (they are weights a float sum cannot see next to the row maximum's 1). Positive t is
// computed as accurately up to t < 127.5 (n <= 127), which the flash forward's lazy reference
// relies on (flash_scores_exp: p up to 2^8, and past that its tile is rescaled or recomputed);
// beyond, the exponent bits overflow into infinity or the sign, so callers must not use them.
//
// Exp2NonPositive<Arch> holds the constants as vectors: build it once before a loop and call
// it per vector. On WebAssembly this matters: Emscripten emits every constant as a v128.const
// at its use, and V8 materialises each through general-purpose registers, inside the loop
// (about ten times the cost of the function itself with its 11 constants). There
// the constants are loaded from a writable array, which LLVM cannot fold back into constants.
#if defined(__wasm_simd128__) && !defined(ATTNLAB_NO_SIMD)
inline float wasm_exp2_constants[8] = {12583039.0f,          -127.0f,
                                        1.327697653323412e-3f, 9.675545617938042e-3f,
                                        5.55071160197258e-2f,  2.4022120237350464e-1f,
                                        6.931469440460205e-1f, 1.0000001192092896f};
#endif

template <class Arch>
struct Exp2NonPositive {
    using B = Batch<Arch>;
    B magic, floor, c5, c4, c3, c2, c1, c0;
    Exp2NonPositive() {
#if defined(__wasm_simd128__) && !defined(ATTNLAB_NO_SIMD)
        const float* c = wasm_exp2_constants;
#else
        // 1.5·2^23 + 127: t + magic rounds t to an integer in the low mantissa bits, already
        // offset by the exponent bias (magic is an integer, so k - magic = nearest(t)); the clamp;
        // then 2^f by a degree-5 polynomial fitted for relative error on [-1/2, 1/2] (weighted
        // least squares on Chebyshev nodes: max 2.4e-7 evaluated in float32)
        static constexpr float c[8] = {12583039.0f,          -127.0f,
                                       1.327697653323412e-3f, 9.675545617938042e-3f,
                                       5.55071160197258e-2f,  2.4022120237350464e-1f,
                                       6.931469440460205e-1f, 1.0000001192092896f};
#endif
        magic = B(c[0]), floor = B(c[1]);
        c5 = B(c[2]), c4 = B(c[3]), c3 = B(c[4]), c2 = B(c[5]), c1 = B(c[6]), c0 = B(c[7]);
    }
    B operator()(const B& t_in) const;
};

template <>
inline ScalarBatch Exp2NonPositive<scalar>::operator()(const ScalarBatch& t) const {
    return t.v < -127.0f ? 0.0f : std::exp2(t.v);
}

#if !defined(ATTNLAB_NO_SIMD)
template <class Arch>
inline Batch<Arch> Exp2NonPositive<Arch>::operator()(const B& t_in) const {
    using I = xsimd::batch<std::int32_t, Arch>;
    const B t = max(t_in, floor);
    const B k = t + magic;
    const B f = t - (k - magic);  // in [-1/2, 1/2]
    B p = fma(c5, f, c4);
    p = fma(p, f, c3);
    p = fma(p, f, c2);
    p = fma(p, f, c1);
    p = fma(p, f, c0);
    // bits(k) = bits(1.5·2^23) + 127 + n: the shift drops the first term and leaves the biased
    // exponent of 2^n (n >= -127 by the clamp, so 127 + n >= 0; n = -127 gives 0.0f).
    const B pow2n = xsimd::bitwise_cast<B>(xsimd::bitwise_cast<I>(k) << 23);
    return p * pow2n;
}
#endif

#if ATTNLAB_SSE_TRANSPOSE
// dst[p·ld_dst + j] = scale · src[j·ld_src + p] for j, p < 4 (scale 1: an exact copy). A template
// on Arch so each ISA's file gets its own symbol.
template <class Arch>
inline void transpose4(const float* src, std::size_t ld_src, float* dst, std::size_t ld_dst, float scale = 1.0f) {
    __m128 r0 = _mm_loadu_ps(src), r1 = _mm_loadu_ps(src + ld_src);
    __m128 r2 = _mm_loadu_ps(src + 2 * ld_src), r3 = _mm_loadu_ps(src + 3 * ld_src);
    if (scale != 1.0f) {
        const __m128 c = _mm_set1_ps(scale);
        r0 = _mm_mul_ps(r0, c);
        r1 = _mm_mul_ps(r1, c);
        r2 = _mm_mul_ps(r2, c);
        r3 = _mm_mul_ps(r3, c);
    }
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(dst, r0);
    _mm_storeu_ps(dst + ld_dst, r1);
    _mm_storeu_ps(dst + 2 * ld_dst, r2);
    _mm_storeu_ps(dst + 3 * ld_dst, r3);
}
#endif

// Before a loop over an array of vectors with a constant trip count (a micro-tile's rows and
// vectors): unroll it completely, so that every index is a constant and the array stays in
// registers. Left to its heuristics, GCC kept some epilogue loops rolled, indexed the
// accumulators at run time and so kept all of them in a stack copy (matmul_arch.hpp).
#if defined(__clang__)
#define ATTNLAB_UNROLL_ALL _Pragma("unroll")
#elif defined(__GNUC__)
#define ATTNLAB_UNROLL_ALL _Pragma("GCC unroll 64")
#else
#define ATTNLAB_UNROLL_ALL
#endif

// Calls f(std::integral_constant<size_t, I>) for I = 0 .. N-1 in order: a loop whose index is a
// constant in each call, for indexing arrays of vectors that must stay in registers.
template <class F, std::size_t... I>
inline void unroll_each(const F& f, std::index_sequence<I...>) {
    (f(std::integral_constant<std::size_t, I>{}), ...);
}
template <std::size_t N, class F>
inline void unroll(const F& f) {
    unroll_each(f, std::make_index_sequence<N>{});
}

// Runs kernel(std::integral_constant<size_t, R>) for R = rows (1..MR), so each row count gets
// its own fully unrolled micro-kernel.
template <std::size_t MR, class Kernel>
inline void dispatch_rows(std::size_t rows, const Kernel& kernel) {
    static_assert(MR >= 1 && MR <= 6, "dispatch_rows handles up to 6 rows");
    switch (rows) {
        case 6: if constexpr (MR >= 6) kernel(std::integral_constant<std::size_t, 6>{}); break;
        case 5: if constexpr (MR >= 5) kernel(std::integral_constant<std::size_t, 5>{}); break;
        case 4: if constexpr (MR >= 4) kernel(std::integral_constant<std::size_t, 4>{}); break;
        case 3: if constexpr (MR >= 3) kernel(std::integral_constant<std::size_t, 3>{}); break;
        case 2: if constexpr (MR >= 2) kernel(std::integral_constant<std::size_t, 2>{}); break;
        default: kernel(std::integral_constant<std::size_t, 1>{}); break;
    }
}

// Scalar helpers that must not come from <algorithm> (see the rule above); static for the same
// reason as the scalar overloads.
static inline std::size_t min_size(std::size_t a, std::size_t b) { return a < b ? a : b; }
static inline float max_float(float a, float b) { return a < b ? b : a; }
// Asks for the cache line holding p to be read into cache (a hint: never faults, no result).
// WebAssembly has no prefetch instruction: nothing there.
static inline void prefetch(const float* p) {
#if defined(__wasm__)
    (void)p;
#else
    __builtin_prefetch(p);
#endif
}

// The largest lane of a batch (no NaN lanes): the end of every vectorised row maximum. A tree,
// log2(W) compares deep, not a chain of W - 1 dependent ones (15 with AVX-512: the longest
// latency of a short softmax row); a maximum is exact, so the order changes nothing.
// On x86 the tree runs in registers (halves, then the 128-bit shuffles) instead of through a
// stack copy of the lanes, which matters for the fused one-tile forward's short rows.
// The WebAssembly kernels keep the memory form (Emscripten emulates _mm_max_ps with a compare
// and select), natively too: the two forms may differ in the sign of a zero maximum.
template <class B>
inline constexpr bool kWasmBatch = false;
#if !defined(ATTNLAB_NO_SIMD)
template <class A>
inline constexpr bool kWasmBatch<xsimd::batch<float, A>> = kWasmKernels<A>;
#endif

template <class B>
inline float max_lane(const B& v) {
#if ATTNLAB_SSE_TRANSPOSE && !defined(__EMSCRIPTEN__)
    if constexpr ((B::size == 4 || B::size == 8 || B::size == 16) && !kWasmBatch<B>) {
        __m128 m;
        if constexpr (B::size == 16) {
#if defined(__AVX512F__) && defined(__AVX512DQ__)
            const __m512 x = v;
            // (the DQ extracts, as xsimd's hadd: GCC 12 warns on the cast's undefined upper half)
            const __m256 h = _mm256_max_ps(_mm512_extractf32x8_ps(x, 0), _mm512_extractf32x8_ps(x, 1));
            m = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
#endif
        } else if constexpr (B::size == 8) {
#if defined(__AVX__)
            const __m256 x = v;
            m = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
#endif
        } else {
            m = v;
        }
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
        return _mm_cvtss_f32(m);
    }
#endif
    alignas(64) float lanes[B::size];
    v.store_aligned(lanes);
    for (std::size_t width = B::size / 2; width >= 1; width /= 2) {
        for (std::size_t l = 0; l < width; ++l) lanes[l] = max_float(lanes[l], lanes[l + width]);
    }
    return lanes[0];
}

}  // namespace simd
}  // namespace kernels
}  // namespace attnlab
