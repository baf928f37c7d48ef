// attnlab/posenc/rope.hpp: rotary position embedding (Su et al. 2021, "RoFormer").
//
// What it is for: encoding position by rotating q and k inside attention, so that the score
// q_i·k_j depends on the positions only through i - j (article §4.3; tested in
// tests/posenc/test_rope.cpp). Applied per head after the split, to Q and K only, never to V.
//
// Pairing convention: rotate-half (GPT-NeoX, Hugging Face LLaMA), not interleaved (the original
// RoFormer / Meta LLaMA code). For head dim D, dimension p < D/2 is paired with p + D/2:
//   theta_p = base^(-2p / D),   angle = pos · theta_p
//   x'[p]       = x[p] · cos(angle) - x[p + D/2] · sin(angle)
//   x'[p + D/2] = x[p + D/2] · cos(angle) + x[p] · sin(angle)
// D must be even. Angles are computed in double precision.
//
//   attnlab::apply_rope(q, /*offset=*/0);   // q: (B, H, T, D), rotated in place
#pragma once

#include <cstddef>
#include <vector>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

inline constexpr double kRopeDefaultBase = 10000.0;

// Cos/sin of every (position, pair): positions offset .. offset + T - 1, pairs 0 .. D/2 - 1.
struct RopeTable {
    std::size_t t = 0, half = 0;
    std::vector<float> cos, sin;  // (T, D/2) each
    RopeTable(std::size_t t, std::size_t head_dim, std::size_t offset = 0, double base = kRopeDefaultBase);
};

// x: (T, D) rows at stride ld, rotated in place by the table's angles (or by minus the angles
// when inverse: the transpose of the rotation, which is also the backward pass).
void rope_rotate(float* x, std::size_t t, std::size_t d, std::size_t ld, const RopeTable& table, bool inverse = false);

// x: (B, H, T, D) rotated in place for positions offset .. offset + T - 1.
// Throws ConfigError if D is odd.
void apply_rope(Tensor4& x, std::size_t offset = 0, double base = kRopeDefaultBase, bool inverse = false);

}  // namespace attnlab
