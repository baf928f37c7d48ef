// attnlab/posenc/learned.hpp: a trained table of position vectors, as in BERT and GPT-2.
//
// One row per position up to max_len: it cannot extrapolate (a longer input is an error, not a
// silent clamp) and its parameters grow with the length (article §4.3).
//
//   attnlab::Rng rng(1);
//   attnlab::LearnedPositionalEmbedding pos(/*max_len=*/32, /*width=*/16, rng);
//   pos.add_to(x);   // x: (B, T <= 32, 16)
#pragma once

#include <cstddef>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

struct LearnedPositionalEmbedding {
    Tensor2 table;  // (max_len, C), initialised N(0, 0.02²) like GPT-2

    LearnedPositionalEmbedding() = default;
    LearnedPositionalEmbedding(std::size_t max_len, std::size_t width, Rng& rng);

    std::size_t max_len() const { return table.shape(0); }
    std::size_t width() const { return table.shape(1); }
    // Throws ValueError naming both numbers if positions offset .. offset+t-1 exceed the table.
    void check_range(std::size_t t, std::size_t offset, const char* where) const;
    // x: (B, T, C) += table[offset : offset + T]
    void add_to(Tensor3& x, std::size_t offset = 0) const;
};

}  // namespace attnlab
