// tests/support/random_tensor.hpp: seeded random tensors for tests.
#pragma once

#include <cstdint>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab::test {

// Standard-normal entries scaled by `scale`, deterministic for a seed.
template <class T>
T random_normal(const typename T::shape_type& shape, std::uint64_t seed, float scale = 1.0f) {
    T t = T::from_shape(shape);
    Rng rng(seed);
    for (auto& x : t) x = scale * rng.normal();
    return t;
}

}  // namespace attnlab::test
