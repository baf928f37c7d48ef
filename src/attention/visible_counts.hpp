// src/attention/visible_counts.hpp (private): visible_key_counts (attention/normalizer.hpp)
// into a caller's buffer, for the kernels that need n_i every call (sigmoid and relu weights,
// forward and backward) and keep it in a thread_buffer<kVisibleCounts> (task_slots.hpp) so that a
// training step allocates nothing.
#pragma once

#include <cstddef>

#include "attnlab/attention/mask.hpp"

namespace attnlab {

// mask, batch B, queries T, keys S -> counts (B, T) row-major: the keys query i of batch row b
// may see, as floats (the same numbers visible_key_counts returns).
void visible_key_counts(const AttentionMask& mask, std::size_t batch, std::size_t t, std::size_t s, float* counts);

}  // namespace attnlab
