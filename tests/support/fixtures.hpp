// tests/support/fixtures.hpp: load the PyTorch golden fixtures and compare tensors to them.
//
// What it is for: the third tier of tests (CONVENTIONS.md, 10): committed reference tensors
// produced by tests/reference/make_fixtures.py, read here without Python, and a comparison
// that reports the max abs difference and the first bad multi-index. Not for: production
// checkpoint loading (use attnlab/io/safetensors.hpp directly).
//
//   auto fx = attnlab::test::load_fixture("mha_basic");        // tests/reference/fixtures/mha_basic.safetensors
//   attnlab::Tensor3 x = fx.tensor<3>("x");                    // (B, T, C)
//   int heads = fx.meta_int("num_heads");
//   attnlab::Tensor3 y = run_my_attention(x, ...);
//   EXPECT_TRUE(attnlab::test::all_close(y, fx.tensor<3>("output"), 1e-5));
//
// A missing fixture, tensor or metadata key records a gtest failure naming the fixture and
// the key, then throws FixtureError (deliberately not an attnlab::Error, so an
// EXPECT_THROW(..., attnlab::Error) in a test cannot swallow it).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "attnlab/core/tensor.hpp"
#include "attnlab/io/safetensors.hpp"

namespace attnlab::test {

class FixtureError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Fixture {
public:
    Fixture(std::string name, io::SafeTensors tensors) : name_(std::move(name)), st_(std::move(tensors)) {}

    const std::string& name() const { return name_; }
    bool has(const std::string& tensor) const { return st_.contains(tensor); }
    bool has_meta(const std::string& key) const { return st_.metadata().count(key) != 0; }

    // Float tensor of rank N (F32 in the file).
    template <std::size_t N>
    Array<float, N> tensor(const std::string& tensor_name) const {
        return get([&] { return st_.get_f32<N>(tensor_name); });
    }
    // Mask of rank N (U8 or BOOL in the file), 1 = masked.
    template <std::size_t N>
    Array<std::uint8_t, N> mask(const std::string& tensor_name) const {
        return get([&] { return st_.get_u8<N>(tensor_name); });
    }
    // Integer tensor of rank N (I32, or I64 within int32 range).
    template <std::size_t N>
    Array<std::int32_t, N> ints(const std::string& tensor_name) const {
        return get([&] { return st_.get_i32<N>(tensor_name); });
    }
    std::vector<std::size_t> shape(const std::string& tensor_name) const {
        return get([&] { return st_.shape(tensor_name); });
    }

    // Metadata values, parsed; a missing key or a value of the wrong form fails the test.
    std::string meta_string(const std::string& key) const;
    long long meta_int(const std::string& key) const;
    double meta_double(const std::string& key) const;
    bool meta_bool(const std::string& key) const;  // "1"/"0" (also "true"/"false")

    const io::SafeTensors& safetensors() const { return st_; }

private:
    [[noreturn]] void fail(const std::string& message) const;

    template <class F>
    auto get(F&& f) const -> decltype(f()) {
        try {
            return f();
        } catch (const attnlab::IoError& e) {
            fail(e.what());
        }
    }

    std::string name_;
    io::SafeTensors st_;
};

// Reads ATTNLAB_FIXTURE_DIR "/" name ".safetensors"; fails the test if it cannot.
Fixture load_fixture(const std::string& name);

// Success iff |actual[i] - expected[i]| <= atol + rtol * |expected[i]| for every element
// (a NaN on either side is a failure). The message gives the max abs difference, the number
// of bad elements and the first bad multi-index with both values.
::testing::AssertionResult all_close(const float* actual, const float* expected,
                                     const std::vector<std::size_t>& shape, double atol, double rtol = 0.0);

// Same for xtensor containers or expressions; shapes must match exactly.
template <class A, class E>
::testing::AssertionResult all_close(const A& actual, const E& expected, double atol, double rtol = 0.0) {
    const xt::xarray<float> a = actual;  // evaluated, row-major, contiguous
    const xt::xarray<float> e = expected;
    const std::vector<std::size_t> sa(a.shape().begin(), a.shape().end());
    const std::vector<std::size_t> se(e.shape().begin(), e.shape().end());
    if (sa != se) {
        return ::testing::AssertionFailure()
               << "shape mismatch: actual " << attnlab::shape_string(sa) << ", expected " << attnlab::shape_string(se);
    }
    return all_close(a.data(), e.data(), sa, atol, rtol);
}

}  // namespace attnlab::test
