// attnlab/core/tensor.hpp: the tensor types the engine uses, and shape helpers.
//
// What it is for: naming the concrete xtensor containers that cross public interfaces
// (float32, row-major, fixed rank) and formatting/validating shapes in error messages.
// Not for: arithmetic (see kernels/), or lazy expressions: public signatures always take and
// return evaluated containers, never `auto` expressions (they dangle).
//
// Dimension legend, used in every shape comment of the project:
//   B batch, T query length, S key length, H heads, Hkv key/value heads, D head dim,
//   C = H * D model width, V vocabulary, F feed-forward width, W window.
//
//   attnlab::Tensor3 x = xt::zeros<float>({2, 5, 8});   // (B, T, C)
//   attnlab::require_shape(x, {2, 5, 8}, "forward", "x"); // throws ShapeError otherwise
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "attnlab/core/error.hpp"

namespace attnlab {

// Every tensor's buffer starts on a 64-byte boundary (a cache line, one AVX-512 vector), as
// PyTorch's CPU allocator does. With malloc's 16 bytes, where a buffer starts depends on the
// process, and vector loads and stores of rows that cross cache lines make the same training
// step several percent slower in one program than in another (docs/performance.md).
inline constexpr std::size_t kTensorAlignment = 64;

template <class T>
struct AlignedAllocator {
    using value_type = T;
    AlignedAllocator() noexcept = default;
    template <class U>
    AlignedAllocator(const AlignedAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kTensorAlignment)));
    }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kTensorAlignment)); }
    template <class U>
    bool operator==(const AlignedAllocator<U>&) const noexcept { return true; }
    template <class U>
    bool operator!=(const AlignedAllocator<U>&) const noexcept { return false; }
};

// A row-major tensor of rank N with an aligned buffer: the container behind every alias below.
template <class T, std::size_t N>
using Array = xt::xtensor<T, N, xt::layout_type::row_major, AlignedAllocator<T>>;

using Tensor1 = Array<float, 1>;
using Tensor2 = Array<float, 2>;
using Tensor3 = Array<float, 3>;
using Tensor4 = Array<float, 4>;
// Boolean masks: 1 = masked out (PyTorch's convention for bool attn_mask / key_padding_mask).
using Mask2 = Array<std::uint8_t, 2>;
using Mask3 = Array<std::uint8_t, 3>;
using Index1 = Array<std::int32_t, 1>;
using Index2 = Array<std::int32_t, 2>;

// "(2, 5, 8)" for error messages.
template <class Shape>
std::string shape_string(const Shape& shape) {
    std::string s = "(";
    bool first = true;
    for (auto d : shape) {
        if (!first) s += ", ";
        s += std::to_string(d);
        first = false;
    }
    return s + ")";
}

// Expected extents where -1 means "any", up to kMaxDims of them. Held inline (no heap), since
// every layer checks its input shapes on every call of a training step.
class ShapeSpec {
public:
    static constexpr std::size_t kMaxDims = 8;

    ShapeSpec(std::initializer_list<std::ptrdiff_t> dims) : ShapeSpec(dims.begin(), dims.end()) {}
    template <class It>
    ShapeSpec(It first, It last) {
        for (It it = first; it != last; ++it) {
            if (size_ == kMaxDims) {
                std::size_t n = 0;
                for (It c = first; c != last; ++c) ++n;
                fail<ShapeError>("ShapeSpec: ", n, " dimensions, at most ", kMaxDims, " are supported");
            }
            dims_[size_++] = static_cast<std::ptrdiff_t>(*it);
        }
    }

    std::size_t size() const { return size_; }
    std::ptrdiff_t operator[](std::size_t i) const { return dims_[i]; }

private:
    std::array<std::ptrdiff_t, kMaxDims> dims_{};
    std::size_t size_ = 0;
};

inline std::string spec_string(const ShapeSpec& spec) {
    std::string s = "(";
    for (std::size_t i = 0; i < spec.size(); ++i) {
        if (i) s += ", ";
        s += spec[i] < 0 ? std::string("*") : std::to_string(spec[i]);
    }
    return s + ")";
}

// Throws ShapeError "<where>: <what> must be <spec>, got <actual>" unless t matches spec.
template <class T>
void require_shape(const T& t, const ShapeSpec& spec, const char* where, const char* what) {
    const auto& shape = t.shape();
    bool ok = shape.size() == spec.size();
    for (std::size_t i = 0; ok && i < spec.size(); ++i) {
        ok = spec[i] < 0 || static_cast<std::ptrdiff_t>(shape[i]) == spec[i];
    }
    if (!ok) fail<ShapeError>(where, ": ", what, " must be ", spec_string(spec), ", got ", shape_string(shape));
}

// The same against the shape of another tensor: t must be shaped like `like`.
template <class T, class U>
void require_shape_like(const T& t, const U& like, const char* where, const char* what) {
    require_shape(t, ShapeSpec(like.shape().begin(), like.shape().end()), where, what);
}

// Throws ValueError naming the first non-finite element, when checking is on. Scans blocks for
// an exponent of all ones first (a loop the compiler vectorises), element by element only in a
// block that has one.
// Gives t the shape `shape` unless it has it already; then its buffer is kept (no allocation).
template <class T>
void shape_to(T& t, const typename T::shape_type& shape) {
    if (t.size() == 0 || !std::equal(shape.begin(), shape.end(), t.shape().begin())) t = T::from_shape(shape);
}

void require_finite(const float* data, std::size_t n, const char* where, const char* what);

// dst = src (dst resized to src's shape, its buffer kept when the size is unchanged), copied in
// parallel chunks on the default pool: the caches a training step fills with its activations
// (a serial 512 KiB copy left the other threads waiting).
void parallel_copy(const float* src, std::size_t n, float* dst);
template <class T>
void copy_into(const T& src, T& dst) {
    if (&src == &dst) return;
    dst.resize(src.shape());
    parallel_copy(src.data(), src.size(), dst.data());
}

template <class T>
void require_finite(const T& t, const char* where, const char* what) {
    require_finite(t.data(), t.size(), where, what);
}

// Largest number of float elements one tensor may hold (default 1 GiB of float32). Requests
// beyond it throw ValueError instead of failing deep inside an allocator (which in WASM
// aborts the module).
std::size_t max_tensor_elements();
void set_max_tensor_elements(std::size_t n);
// Throws ValueError if the product of extents overflows or exceeds max_tensor_elements().
void require_allocatable(std::initializer_list<std::size_t> extents, const char* where, const char* what);

}  // namespace attnlab
