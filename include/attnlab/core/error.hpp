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

// Why a file (a safetensors image, a checkpoint) was refused, as a value for callers that say it
// in their own words (the page, in English or Chinese); the message says it with the values.
enum class FileProblem {
    too_short,         // fewer bytes than the 8-byte header length
    header_too_long,   // a header length beyond the limit: not the start of a safetensors file
    truncated,         // the header or a tensor's data promises more bytes than the file holds
    bad_header,        // the header is not safetensors JSON (its syntax, an entry's keys, dtype or shape)
    not_a_checkpoint,  // a safetensors file attnlab did not save (format, version, model config)
    mismatch,          // tensors that do not match the model the checkpoint's config describes
};

// "too_short", "header_too_long", ...: the name JavaScript reads (an Error's `problem`).
inline const char* file_problem_name(FileProblem p) {
    switch (p) {
        case FileProblem::too_short: return "too_short";
        case FileProblem::header_too_long: return "header_too_long";
        case FileProblem::truncated: return "truncated";
        case FileProblem::bad_header: return "bad_header";
        case FileProblem::not_a_checkpoint: return "not_a_checkpoint";
        case FileProblem::mismatch: return "mismatch";
    }
    return "";
}

// An IoError that says which FileProblem it is (other refusals of a file are plain IoErrors).
class FileError : public IoError {
public:
    FileError(FileProblem problem, const std::string& message) : IoError(message), problem_(problem) {}
    FileProblem problem() const noexcept { return problem_; }

private:
    FileProblem problem_;
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

// Throws FileError(problem) with the concatenation of args as its message.
template <class... Args>
[[noreturn]] void fail_file(FileProblem problem, Args&&... args) {
    throw FileError(problem, detail::concat(std::forward<Args>(args)...));
}

}  // namespace attnlab

// Internal invariants of kernels (never user input): checked in debug builds only.
#ifdef NDEBUG
#define ATTNLAB_DEBUG_ASSERT(cond) ((void)0)
#else
#define ATTNLAB_DEBUG_ASSERT(cond) assert(cond)
#endif
