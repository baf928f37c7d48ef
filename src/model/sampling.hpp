// src/model/sampling.hpp (internal): what every language model's generate() shares — picking
// the next token from a row of logits, and a prompt as a (1, T) batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab::detail {

// The next token from one row of logits (V): argmax (first maximum) when greedy, else a draw
// from softmax(logits / temperature) by inverting the cumulative sum (in double) at rng.uniform().
std::int32_t choose_token(const float* logits, std::size_t v, float temperature, Rng& rng);

// tokens (T) -> (1, T)
Index2 as_row(const std::vector<std::int32_t>& tokens);

}  // namespace attnlab::detail
