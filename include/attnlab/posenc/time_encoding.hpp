// attnlab/posenc/time_encoding.hpp: sinusoids of the timestamp at known periods (article §7.2).
//
// What it is for: telling a forecaster *when* each step is, not only where it sits in its window.
// The sinusoidal table (sinusoidal.hpp) encodes the position 0 .. T-1 inside a window, the same
// for every window; a seasonal series needs the phase of each cycle, which only the timestamp
// carries. For periods P_1 .. P_K (the series' known cycles: 24 hours, 7 days, ...):
//   TE[t, 2k] = sin(2π t / P_k),  TE[t, 2k+1] = cos(2π t / P_k)
// so a step's features say where it is in every cycle, and two steps a whole number of periods
// apart share them. Why fixed periods rather than learned frequencies: the periods of a seasonal
// series are usually known (the calendar), fixed features have no parameters to fit from a few
// windows, and a Linear layer over [values, TE] learns each cycle's amplitude and phase as the
// weights of its sin and cos (a·sin(θ + φ) = a cos φ · sin θ + a sin φ · cos θ).
// t mod P is taken in double before the sine, so large timestamps keep their phase.
// Not for: positions inside a sequence of tokens (sinusoidal.hpp, rope.hpp).
//
//   attnlab::Tensor3 te = attnlab::time_encoding(batch.time, {12, 24});   // (B, T, 4)
#pragma once

#include <cstddef>
#include <vector>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

// time: (B, T) timestamps, each finite and >= 0 -> (B, T, 2K) as above, K = periods.size().
// ConfigError for no period or a period <= 0; ValueError naming the first bad timestamp.
Tensor3 time_encoding(const Tensor2& time, const std::vector<double>& periods);

}  // namespace attnlab
