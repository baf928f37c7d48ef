// attnlab/core/error.hpp: the exceptions every public function throws on bad input.
//
// What it is for: one family of typed errors (like xtensor's broadcast_error) whose messages
// name the function, the expected and the actual values, so a user (or JavaScript, through
// the bindings) knows exactly what to fix. Not for: internal invariants of kernels, which use
// ATTNLAB_DEBUG_ASSERT and vanish in release builds.
//
//   try { mha.forward(x); }
//   catch (const attnlab::ShapeError& e) { std::cerr << e.what(); }
//   // "MultiHeadAttention::forward: x must be (B, T, 64), got (2, 5, 63)"
#pragma once

#include <cassert>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace attnlab {

// Base of all attnlab errors. Catch this to catch everything the library throws on purpose.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A tensor has the wrong rank or extents for the operation.
class ShapeError : public Error {
public:
    using Error::Error;
};

// A configuration value is invalid (d_model not divisible by heads, unknown option name, ...).
class ConfigError : public Error {
public:
    using Error::Error;
};

// A value is outside its domain: NaN/Inf in checked input, a position beyond a learned table,
// a request whose size would exceed the memory budget.
class ValueError : public Error {
public:
    using Error::Error;
};

// Reading or writing a file or byte buffer failed: truncated, corrupt, or mismatched checkpoint.
class IoError : public Error {
public:
    using Error::Error;
};

namespace detail {
template <class... Args>
std::string concat(Args&&... args) {
    std::ostringstream out;
    (out << ... << std::forward<Args>(args));
    return out.str();
}
}  // namespace detail

// Throws E with the concatenation of args as its message:
//   fail<ShapeError>("softmax_rows: expected rank 2, got ", x.dimension());
template <class E = Error, class... Args>
[[noreturn]] void fail(Args&&... args) {
    throw E(detail::concat(std::forward<Args>(args)...));
}

}  // namespace attnlab

// Internal invariants of kernels (never user input): checked in debug builds only.
#ifdef NDEBUG
#define ATTNLAB_DEBUG_ASSERT(cond) ((void)0)
#else
#define ATTNLAB_DEBUG_ASSERT(cond) assert(cond)
#endif
