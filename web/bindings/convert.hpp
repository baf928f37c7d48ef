// web/bindings/convert.hpp: the type conversions between JavaScript values and the engine, and
// the one way a C++ exception reaches JavaScript.
//
// What it is for: every bound class (one file each: multi_head_attention.cpp, trace.cpp, ...)
// converts its arguments with these helpers, calls the engine, and converts the result back.
// Bindings hold no engine logic.
//   * Tensors cross as plain objects { shape: number[], data: Float32Array }, row-major. Data is
//     copied in and copied out: JavaScript never holds a view into WASM memory (it would go
//     stale when memory grows, and would see later writes).
//   * Options objects are read through JsOptions, which rejects unknown keys by name.
//   * Every call runs inside `guarded`: a C++ exception (attnlab::Error or any std::exception)
//     becomes a JavaScript Error carrying the C++ message, and the module stays usable.
// Not for: engine validation (shapes against the layer's config, d_model % heads ...): the
// engine throws for those and `guarded` passes its message on.
//
//   emscripten::val Foo::bar(emscripten::val x) {
//       return guarded("Foo.bar", [&] { return tensor_to_js(engine_call(tensor3_from_js(x, "Foo.bar", "x"))); }, x);
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <emscripten/val.h>

#include "attnlab/core/tensor.hpp"

namespace attnlab::web {

using emscripten::val;

// ---- errors at the boundary ---------------------------------------------------------------

namespace detail {
// Copies the message of the exception being handled (call only inside a catch block).
void keep_current_exception_message(const char* where) noexcept;
// Throws a JavaScript Error with the kept message. Nothing that owns memory may be alive in
// any WASM frame at this point: a JavaScript throw unwinds them without running destructors.
[[noreturn]] void throw_kept_message();
}  // namespace detail

// Runs body() and returns its result. If it throws, every `js_args` (the val parameters of the
// bound function, which embind would release only on a normal return) is released, and a
// JavaScript Error with "<where>: <C++ message>" is thrown (the engine's messages already
// start with the function's name; `where` is the JS-facing name, added when absent).
template <class Body, class... JsArgs>
auto guarded(const char* where, Body&& body, JsArgs&... js_args) -> decltype(body()) {
    try {
        return body();
    } catch (...) {
        detail::keep_current_exception_message(where);
    }
    ((js_args = val::undefined()), ...);
    detail::throw_kept_message();
}

// ---- tensors ------------------------------------------------------------------------------

// {shape, data: Float32Array} -> the shape as extents. Checks that `shape` is an array of
// non-negative integers, `data` a Float32Array, and product(shape) == data.length.
std::vector<std::size_t> js_tensor_shape(const val& t, const char* where, const char* what);

// {shape:[T, C]} or {shape:[B, T, C]} -> (B, T, C), B = 1 for rank 2. `batched` says which.
Tensor3 tensor3_from_js(const val& t, const char* where, const char* what, bool* batched = nullptr);
// {shape: `expected`} (extents of -1 match anything) -> flat copy of the data.
std::vector<float> floats_from_js(const val& t, const ShapeSpec& expected, const char* where, const char* what);

// A fresh { shape, data: Float32Array } holding a copy of n = product(shape) floats at `data`.
val tensor_to_js(const float* data, const std::vector<std::size_t>& shape);
template <std::size_t N>
val tensor_to_js(const Array<float, N>& t) {
    return tensor_to_js(t.data(), std::vector<std::size_t>(t.shape().begin(), t.shape().end()));
}

// Token ids: an Int32Array or number[] of integers (one sequence, (1, T)), or
// {shape:[T] | [B, T], data: Int32Array | number[]}. Values must be integers in int32 range (the
// engine checks them against its vocabulary). `batched` says whether the input was [B, T].
Index2 tokens_from_js(const val& t, const char* where, const char* what, bool* batched = nullptr);
// {shape, data: Int32Array} holding a copy of product(shape) ids at `data`.
val index_tensor_to_js(const std::int32_t* data, const std::vector<std::size_t>& shape);
template <std::size_t N>
val index_tensor_to_js(const Array<std::int32_t, N>& t) {
    return index_tensor_to_js(t.data(), std::vector<std::size_t>(t.shape().begin(), t.shape().end()));
}
// {shape, data: Uint8Array} (masks: 1 = padding).
val mask_to_js(const Mask2& m);
// A fresh Int32Array / Uint8Array holding a copy of n elements.
val int32_array_to_js(const std::int32_t* data, std::size_t n);
val uint8_array_to_js(const std::uint8_t* data, std::size_t n);
// A Uint8Array or ArrayBuffer -> its bytes (checkpoints).
std::vector<std::uint8_t> bytes_from_js(const val& v, const char* where, const char* what);

// {shape:[R, C], data: Uint8Array | any typed array | number[] | boolean[]} with values 0/1 (or
// false/true) -> (R, C). Uint8Array is copied in one go, anything else element by element.
// A rank-1 mask {shape:[C]} is taken as (1, C) when allow_rank1 is set.
Mask2 mask_from_js(const val& m, const char* where, const char* what, bool allow_rank1);

// ---- plain values -------------------------------------------------------------------------

val strings_to_js(const std::vector<std::string>& items);
// A JS array of strings -> std::vector<std::string>; Error naming the bad element otherwise.
std::vector<std::string> strings_from_js(const val& v, const char* where, const char* what);

// Reads an options object: construction rejects anything but a plain object (undefined and
// null mean "no options") and any key outside `allowed`, naming it and listing the valid ones.
class JsOptions {
public:
    JsOptions(const val& options, std::vector<const char*> allowed, const char* where);

    bool has(const char* key) const;  // present and not undefined
    val get(const char* key) const;   // undefined when absent
    bool boolean(const char* key, bool fallback) const;
    // A non-negative integer that fits size_t (JS numbers above 2^32 - 1 are rejected).
    std::size_t size(const char* key, std::size_t fallback) const;
    double number(const char* key, double fallback) const;
    // A finite number that a float holds: |x| <= FLT_MAX (converting a double beyond that range to
    // float is undefined behaviour). Engine options that are floats are read only through this.
    float float32(const char* key, float fallback) const;
    std::string string(const char* key, const std::string& fallback) const;
    // True when the value at key is null or undefined.
    bool is_null(const char* key) const;
    const char* where() const { return where_; }

private:
    val options_;
    const char* where_;
};

// A non-negative integer from a JS number (Error "<where>: <what> must be ..." otherwise).
std::size_t size_from_js(const val& v, const char* where, const char* what);
// An integer >= -1 (heads: -1 = whole-width stage).
std::ptrdiff_t index_from_js(const val& v, const char* where, const char* what);

}  // namespace attnlab::web
