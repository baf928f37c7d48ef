// attnlab/posenc/sinusoidal.hpp: the fixed sinusoidal encoding of Vaswani et al. (2017, §3.5).
//
// PE[pos, 2i] = sin(pos / base^(2i/C)),  PE[pos, 2i+1] = cos(pos / base^(2i/C)), base = 10000.
// Many frequencies, no parameters; PE[pos + k] is a linear function of PE[pos] (article §4.2).
// For an odd width C the last column has only its sin term. Computed in double, stored as float.
//
//   attnlab::Tensor2 pe = attnlab::sinusoidal_table(12, 16);   // (T=12, C=16)
#pragma once

#include <cstddef>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

// -> (T, C) rows for positions offset .. offset + T - 1
Tensor2 sinusoidal_table(std::size_t t, std::size_t c, std::size_t offset = 0, double base = 10000.0);
// x: (B, T, C) += PE rows for positions offset .. offset + T - 1
void add_sinusoidal(Tensor3& x, std::size_t offset = 0, double base = 10000.0);

}  // namespace attnlab
