#include "attnlab/core/random.hpp"

#include <cmath>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(std::uint64_t seed) {
    for (auto& s : s_) s = splitmix64(seed);
}

Rng Rng::zeros() {
    Rng r;
    for (auto& s : r.s_) s = 0;
    return r;
}

std::uint64_t Rng::next_u64() {  // xoshiro256** (Blackman & Vigna, 2018)
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

float Rng::uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }

float Rng::uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

float Rng::normal() {
    if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) return 0.0f;  // Rng::zeros(): skip the transcendentals
    // 1 - u keeps the logarithm's argument in (0, 1].
    const double u1 = 1.0 - static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
    const double u2 = static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

std::uint32_t Rng::below(std::uint32_t n) {
    if (n == 0) fail<ValueError>("Rng::below: n must be positive, got 0");
    if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) return 0;  // Rng::zeros(): rejection would never end
    // Lemire's multiply-shift with rejection.
    std::uint64_t m = static_cast<std::uint64_t>(static_cast<std::uint32_t>(next_u64() >> 32)) * n;
    std::uint32_t low = static_cast<std::uint32_t>(m);
    if (low < n) {
        const std::uint32_t threshold = static_cast<std::uint32_t>(-n) % n;
        while (low < threshold) {
            m = static_cast<std::uint64_t>(static_cast<std::uint32_t>(next_u64() >> 32)) * n;
            low = static_cast<std::uint32_t>(m);
        }
    }
    return static_cast<std::uint32_t>(m >> 32);
}

}  // namespace attnlab
