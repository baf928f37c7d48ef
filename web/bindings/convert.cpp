#include "convert.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>

#include <emscripten.h>
#include <emscripten/stack.h>

#include "attnlab/core/error.hpp"

namespace attnlab::web {

// ---- errors at the boundary ---------------------------------------------------------------
//
// Why not just `throw`: in Emscripten 3.1.6 a C++ exception that leaves WASM reaches JavaScript
// as a bare number (-fexceptions) or an opaque WebAssembly.Exception (-fwasm-exceptions), never
// as an Error with the message. So `guarded` catches, keeps the message in a static buffer, lets
// every C++ object die with the catch block, and then a tiny JS function throws `new Error`.
//
// A JavaScript throw unwinds the WASM frames between it and the JS caller without running their
// epilogues. Frames below embind's C++ invoker are repaired by the invoke_* wrappers of
// JS-based exception handling (they restore the stack pointer and rethrow), but the invoker's
// own frame, entered straight from JavaScript, is not: 16-32 bytes of stack lost per failing
// call (measured), a silent stack overflow after a few hundred thousand failures. So the throw
// also queues a microtask that puts the stack pointer back at the stack base. Microtasks run
// only when the JavaScript call stack is empty, i.e. when no WASM frame is live, and then the
// stack pointer belongs at the base; a burst of synchronous failing calls borrows at most
// 32 bytes each until then.

namespace {
std::string& kept_message() {
    static std::string message;  // reused: its capacity stays, so failing calls do not allocate
    return message;
}
// The kept FileError's problem (file_problem_name), or nullptr.
const char*& kept_problem() {
    static const char* problem = nullptr;
    return problem;
}
}  // namespace

// A refused file's Error also carries `problem` (file_problem_name: "truncated", ...), so a page
// can say which in its own words without reading the English message.
EM_JS(void, attnlab_throw_js_error, (const char* message, const char* problem, std::uintptr_t stack_base), {
    var text = UTF8ToString(message);
    queueMicrotask(function() { stackRestore(stack_base); });
    var error = new Error(text);
    if (problem) error.problem = UTF8ToString(problem);
    throw error;
});

namespace detail {

void keep_current_exception_message(const char* where) noexcept {
    std::string& out = kept_message();
    kept_problem() = nullptr;
    try {
        throw;
    } catch (const attnlab::FileError& e) {
        out = e.what();
        kept_problem() = attnlab::file_problem_name(e.problem());
    } catch (const attnlab::Error& e) {
        out = e.what();  // engine and conversion messages already name the function
    } catch (const std::bad_alloc&) {
        out = std::string(where) + ": out of WebAssembly memory (std::bad_alloc)";
    } catch (const std::exception& e) {
        out = std::string(where) + ": " + e.what();
    } catch (...) {
        out = std::string(where) + ": unknown C++ exception";
    }
}

void throw_kept_message() {
    attnlab_throw_js_error(kept_message().c_str(), kept_problem(), emscripten_stack_get_base());
    __builtin_unreachable();
}

}  // namespace detail

// ---- tensors ------------------------------------------------------------------------------

namespace {

bool is_instance(const val& v, const char* constructor) { return v.instanceof(val::global(constructor)); }

std::string js_type_name(const val& v) {
    if (v.isNull()) return "null";
    if (v.isUndefined()) return "undefined";
    if (v.isArray()) return "Array";
    const std::string type = v.typeOf().as<std::string>();
    if (type == "object") {
        val ctor = v["constructor"];
        if (!ctor.isUndefined() && !ctor.isNull() && !ctor["name"].isUndefined()) return ctor["name"].as<std::string>();
    }
    return type;
}

bool is_plain_object(const val& v) {
    return !v.isNull() && !v.isUndefined() && !v.isArray() && v.typeOf().as<std::string>() == "object";
}

// Copies n elements of a JS typed array into dst (one TypedArray.prototype.set, no per-element calls).
template <class T>
void copy_typed_array_in(const val& src, T* dst, std::size_t n) {
    val(emscripten::typed_memory_view(n, dst)).call<void>("set", src);
}

const double kMaxSize = static_cast<double>(std::numeric_limits<std::uint32_t>::max());

}  // namespace

std::size_t size_from_js(const val& v, const char* where, const char* what) {
    if (!v.isNumber()) fail<ConfigError>(where, ": ", what, " must be a number, got ", js_type_name(v));
    const double d = v.as<double>();
    if (!(d >= 0) || d != std::floor(d) || d > kMaxSize) {
        fail<ConfigError>(where, ": ", what, " must be a non-negative integer, got ", d);
    }
    return static_cast<std::size_t>(d);
}

std::ptrdiff_t index_from_js(const val& v, const char* where, const char* what) {
    if (!v.isNumber()) fail<ConfigError>(where, ": ", what, " must be a number, got ", js_type_name(v));
    const double d = v.as<double>();
    if (!(d >= -1) || d != std::floor(d) || d > kMaxSize) {
        fail<ConfigError>(where, ": ", what, " must be an integer >= -1, got ", d);
    }
    return static_cast<std::ptrdiff_t>(d);
}

namespace {
std::vector<std::size_t> shape_from_js(const val& t, const char* where, const char* what) {
    if (!is_plain_object(t)) {
        fail<ShapeError>(where, ": ", what, " must be an object {shape: number[], data: Float32Array}, got ",
                         js_type_name(t));
    }
    const val shape = t["shape"];
    if (!shape.isArray()) fail<ShapeError>(where, ": ", what, ".shape must be an array of integers, got ", js_type_name(shape));
    const std::size_t rank = shape["length"].as<std::size_t>();
    std::vector<std::size_t> extents(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::string name = std::string(what) + ".shape[" + std::to_string(i) + "]";
        extents[i] = size_from_js(shape[i], where, name.c_str());
    }
    return extents;
}

std::size_t checked_product(const std::vector<std::size_t>& extents, const char* where, const char* what) {
    std::size_t n = 1;
    for (std::size_t e : extents) {
        if (e != 0 && n > std::numeric_limits<std::size_t>::max() / e) {
            fail<ShapeError>(where, ": ", what, ".shape ", shape_string(extents), " is too large");
        }
        n *= e;
    }
    return n;
}
}  // namespace

std::vector<std::size_t> js_tensor_shape(const val& t, const char* where, const char* what) {
    std::vector<std::size_t> extents = shape_from_js(t, where, what);
    const val data = t["data"];
    if (!is_instance(data, "Float32Array")) {
        fail<ShapeError>(where, ": ", what, ".data must be a Float32Array, got ", js_type_name(data));
    }
    const std::size_t n = checked_product(extents, where, what);
    const std::size_t length = data["length"].as<std::size_t>();
    if (n != length) {
        fail<ShapeError>(where, ": ", what, ".shape ", shape_string(extents), " holds ", n,
                         " elements but data.length is ", length);
    }
    return extents;
}

Tensor3 tensor3_from_js(const val& t, const char* where, const char* what, bool* batched) {
    const std::vector<std::size_t> e = js_tensor_shape(t, where, what);
    if (e.size() != 2 && e.size() != 3) {
        fail<ShapeError>(where, ": ", what, " must have shape [T, C] or [B, T, C], got ", shape_string(e));
    }
    if (batched) *batched = e.size() == 3;
    const std::size_t b = e.size() == 3 ? e[0] : 1, r = e[e.size() - 2], c = e[e.size() - 1];
    require_allocatable({b, r, c}, where, what);
    Tensor3 out = Tensor3::from_shape({b, r, c});
    copy_typed_array_in(t["data"], out.data(), out.size());
    return out;
}

std::vector<float> floats_from_js(const val& t, const ShapeSpec& expected, const char* where, const char* what) {
    const std::vector<std::size_t> e = js_tensor_shape(t, where, what);
    bool ok = e.size() == expected.size();
    for (std::size_t i = 0; ok && i < e.size(); ++i) ok = expected[i] < 0 || static_cast<std::ptrdiff_t>(e[i]) == expected[i];
    if (!ok) fail<ShapeError>(where, ": ", what, " must have shape ", spec_string(expected), ", got ", shape_string(e));
    std::vector<float> out(checked_product(e, where, what));
    copy_typed_array_in(t["data"], out.data(), out.size());
    return out;
}

val tensor_to_js(const float* data, const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (std::size_t e : shape) n *= e;
    val array = val::global("Float32Array").new_(n);
    array.call<void>("set", val(emscripten::typed_memory_view(n, data)));
    val js_shape = val::array();
    for (std::size_t e : shape) js_shape.call<void>("push", static_cast<double>(e));
    val out = val::object();
    out.set("shape", js_shape);
    out.set("data", array);
    return out;
}

namespace {
// A JS typed array of element type T (constructor name `ctor`) holding a copy of n elements.
template <class T>
val typed_array_to_js(const char* ctor, const T* data, std::size_t n) {
    val array = val::global(ctor).new_(n);
    if (n) array.call<void>("set", val(emscripten::typed_memory_view(n, data)));
    return array;
}

val shape_to_js(const std::vector<std::size_t>& shape) {
    val js_shape = val::array();
    for (std::size_t e : shape) js_shape.call<void>("push", static_cast<double>(e));
    return js_shape;
}

// Copies the n ids of `data` (an Int32Array, or an array of integers) into dst.
void copy_ids_in(const val& data, std::int32_t* dst, std::size_t n, const char* where, const char* what) {
    if (is_instance(data, "Int32Array")) {
        copy_typed_array_in(data, dst, n);
        return;
    }
    for (std::size_t i = 0; i < n; ++i) {
        const val v = data[i];
        const double d = v.isNumber() ? v.as<double>() : std::nan("");
        if (!(d == std::floor(d)) || d < std::numeric_limits<std::int32_t>::min() ||
            d > std::numeric_limits<std::int32_t>::max()) {
            fail<ValueError>(where, ": ", what, "[", i, "] must be an integer token id, got ",
                             v.isNumber() ? std::to_string(d) : js_type_name(v));
        }
        dst[i] = static_cast<std::int32_t>(d);
    }
}
}  // namespace

Index2 tokens_from_js(const val& t, const char* where, const char* what, bool* batched) {
    std::vector<std::size_t> e;
    val data = t;
    if (is_instance(t, "Int32Array") || t.isArray()) {
        e = {t["length"].as<std::size_t>()};
    } else if (is_plain_object(t)) {
        e = shape_from_js(t, where, what);
        data = t["data"];
        if (!is_instance(data, "Int32Array") && !data.isArray()) {
            fail<ShapeError>(where, ": ", what, ".data must be an Int32Array or an array of integers, got ",
                             js_type_name(data));
        }
        const std::size_t n = checked_product(e, where, what), length = data["length"].as<std::size_t>();
        if (n != length) {
            fail<ShapeError>(where, ": ", what, ".shape ", shape_string(e), " holds ", n, " elements but data.length is ",
                             length);
        }
    } else {
        fail<ShapeError>(where, ": ", what, " must be an Int32Array, an array of integers or {shape: [T] | [B, T], "
                         "data: Int32Array}, got ", js_type_name(t));
    }
    if (e.size() != 1 && e.size() != 2) {
        fail<ShapeError>(where, ": ", what, " must have shape [T] or [B, T], got ", shape_string(e));
    }
    if (batched) *batched = e.size() == 2;
    const std::size_t b = e.size() == 2 ? e[0] : 1, n = e.back();
    require_allocatable({b, n}, where, what);
    Index2 out = Index2::from_shape({b, n});
    copy_ids_in(data, out.data(), out.size(), where, what);
    return out;
}

val index_tensor_to_js(const std::int32_t* data, const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (std::size_t e : shape) n *= e;
    val out = val::object();
    out.set("shape", shape_to_js(shape));
    out.set("data", typed_array_to_js("Int32Array", data, n));
    return out;
}

val mask_to_js(const Mask2& m) {
    val out = val::object();
    out.set("shape", shape_to_js({m.shape(0), m.shape(1)}));
    out.set("data", typed_array_to_js("Uint8Array", m.data(), m.size()));
    return out;
}

val int32_array_to_js(const std::int32_t* data, std::size_t n) { return typed_array_to_js("Int32Array", data, n); }
val uint8_array_to_js(const std::uint8_t* data, std::size_t n) { return typed_array_to_js("Uint8Array", data, n); }

std::vector<std::uint8_t> bytes_from_js(const val& v, const char* where, const char* what) {
    val bytes = v;
    if (is_instance(v, "ArrayBuffer")) {
        bytes = val::global("Uint8Array").new_(v);
    } else if (!is_instance(v, "Uint8Array")) {
        fail<IoError>(where, ": ", what, " must be a Uint8Array or an ArrayBuffer, got ", js_type_name(v));
    }
    const std::size_t n = bytes["length"].as<std::size_t>();
    require_allocatable({n / sizeof(float) + 1}, where, what);
    std::vector<std::uint8_t> out(n);
    if (n) copy_typed_array_in(bytes, out.data(), n);
    return out;
}

Mask2 mask_from_js(const val& m, const char* where, const char* what, bool allow_rank1) {
    std::vector<std::size_t> e = shape_from_js(m, where, what);
    if (e.size() == 1 && allow_rank1) e.insert(e.begin(), 1);
    if (e.size() != 2) {
        fail<ShapeError>(where, ": ", what, " must have shape [rows, cols]", allow_rank1 ? " or [cols]" : "",
                         ", got ", shape_string(e));
    }
    const std::size_t n = checked_product(e, where, what);
    const val data = m["data"];
    const bool typed = is_instance(data, "Uint8Array");
    const bool array_like = data.isArray() || val::global("ArrayBuffer").call<bool>("isView", data);
    if (!array_like || is_instance(data, "DataView")) {
        fail<ShapeError>(where, ": ", what, ".data must be a Uint8Array, another typed array or an array of 0/1 "
                         "or booleans, got ", js_type_name(data));
    }
    const std::size_t length = data["length"].as<std::size_t>();
    if (length != n) {
        fail<ShapeError>(where, ": ", what, ".shape ", shape_string(e), " holds ", n, " elements but data.length is ",
                         length);
    }
    Mask2 out = Mask2::from_shape({e[0], e[1]});
    if (typed) {
        copy_typed_array_in(data, out.data(), n);
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            const val v = data[i];
            if (v.isTrue() || v.isFalse()) {
                out.data()[i] = v.isTrue() ? 1 : 0;
            } else if (v.isNumber() && (v.as<double>() == 0 || v.as<double>() == 1)) {
                out.data()[i] = static_cast<std::uint8_t>(v.as<double>());
            } else {
                fail<ShapeError>(where, ": ", what, ".data[", i, "] must be 0, 1, false or true, got ", js_type_name(v));
            }
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (out.data()[i] > 1) {
            fail<ShapeError>(where, ": ", what, ".data[", i, "] must be 0 or 1 (1 = masked), got ", int(out.data()[i]));
        }
    }
    return out;
}

// ---- plain values -------------------------------------------------------------------------

val strings_to_js(const std::vector<std::string>& items) {
    val out = val::array();
    for (const auto& s : items) out.call<void>("push", val(s));
    return out;
}

std::vector<std::string> strings_from_js(const val& v, const char* where, const char* what) {
    if (!v.isArray()) fail<ConfigError>(where, ": ", what, " must be an array of strings, got ", js_type_name(v));
    const std::size_t n = v["length"].as<std::size_t>();
    std::vector<std::string> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const val item = v[i];
        if (!item.isString()) fail<ConfigError>(where, ": ", what, "[", i, "] must be a string, got ", js_type_name(item));
        out.push_back(item.as<std::string>());
    }
    return out;
}

JsOptions::JsOptions(const val& options, std::vector<const char*> allowed, const char* where)
    : options_(options), where_(where) {
    if (options.isUndefined() || options.isNull()) {
        options_ = val::object();
        return;
    }
    if (!is_plain_object(options)) fail<ConfigError>(where, ": options must be an object, got ", js_type_name(options));
    const val keys = val::global("Object").call<val>("keys", options);
    const std::size_t n = keys["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
        const std::string key = keys[i].as<std::string>();
        bool known = false;
        for (const char* a : allowed) known = known || key == a;
        if (!known) {
            std::string valid;
            for (const char* a : allowed) valid += (valid.empty() ? "" : ", ") + std::string(a);
            fail<ConfigError>(where, ": unknown option '", key, "' (valid: ", valid, ")");
        }
    }
}

bool JsOptions::has(const char* key) const { return !options_[key].isUndefined(); }
val JsOptions::get(const char* key) const { return options_[key]; }
bool JsOptions::is_null(const char* key) const { return options_[key].isUndefined() || options_[key].isNull(); }

bool JsOptions::boolean(const char* key, bool fallback) const {
    const val v = options_[key];
    if (v.isUndefined()) return fallback;
    if (!v.isTrue() && !v.isFalse()) fail<ConfigError>(where_, ": option '", key, "' must be true or false, got ", js_type_name(v));
    return v.isTrue();
}

std::size_t JsOptions::size(const char* key, std::size_t fallback) const {
    const val v = options_[key];
    if (v.isUndefined()) return fallback;
    const std::string what = std::string("option '") + key + "'";
    return size_from_js(v, where_, what.c_str());
}

double JsOptions::number(const char* key, double fallback) const {
    const val v = options_[key];
    if (v.isUndefined()) return fallback;
    if (!v.isNumber() || !std::isfinite(v.as<double>())) {
        fail<ConfigError>(where_, ": option '", key, "' must be a finite number, got ",
                          v.isNumber() ? std::to_string(v.as<double>()) : js_type_name(v));
    }
    return v.as<double>();
}

float JsOptions::float32(const char* key, float fallback) const {
    const double v = number(key, fallback);
    if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max())) {
        char text[32];  // the shortest of 15 or 17 digits that reads back as v
        std::snprintf(text, sizeof text, "%.15g", v);
        if (std::strtod(text, nullptr) != v) std::snprintf(text, sizeof text, "%.17g", v);
        fail<ConfigError>(where_, ": option '", key, "' must be within float32 range (|x| <= 3.4028235e+38), got ", text);
    }
    return static_cast<float>(v);
}

std::string JsOptions::string(const char* key, const std::string& fallback) const {
    const val v = options_[key];
    if (v.isUndefined()) return fallback;
    if (!v.isString()) fail<ConfigError>(where_, ": option '", key, "' must be a string, got ", js_type_name(v));
    return v.as<std::string>();
}

}  // namespace attnlab::web
