// attnlab/core/random.hpp: a small seeded random generator with the same stream everywhere.
//
// What it is for: parameter initialisation, dropout, and task generators that must give the
// same numbers natively (libstdc++) and in WebAssembly (libc++). std::uniform_real_distribution
// and std::normal_distribution are implementation-defined, so we draw from xoshiro256** and
// convert bits ourselves. Not for: cryptography.
//
//   attnlab::Rng rng(42);
//   float u = rng.uniform(-0.1f, 0.1f);
//   std::uint32_t token = rng.below(10);   // 0..9
#pragma once

#include <cstdint>

namespace attnlab {

class Rng {
public:
    explicit Rng(std::uint64_t seed = 0);
    // A generator that draws only zeros (uniform() 0, uniform(lo, hi) lo, normal() 0, below(n)
    // 0): for models whose parameters are all overwritten right after they are built (checkpoint
    // loaders), so building them costs no random draws. Its state, all zero, is one no seed gives
    // (splitmix64 is a bijection) and that xoshiro256** never leaves.
    static Rng zeros();
    std::uint64_t next_u64();
    // Uniform in [0, 1) with 24 random bits (exactly representable in float32).
    float uniform();
    // Uniform in [lo, hi).
    float uniform(float lo, float hi);
    // Standard normal (Box-Muller on two uniforms).
    float normal();
    // Uniform integer in [0, n), n > 0, without modulo bias.
    std::uint32_t below(std::uint32_t n);

private:
    std::uint64_t s_[4];
};

}  // namespace attnlab
