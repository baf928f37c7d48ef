// attnlab/interp/detectors.hpp: head detectors, how much of its attention a head puts where a
// pattern says (TransformerLens' head detector, "mul" score).
//
// What it is for: labelling the heads of a decoder (the article's §3.2, "heads learn different
// patterns") by five patterns, each a set P_i of keys for every query row i of a sequence:
//   previous_token   P_i = {i - 1}
//   duplicate_token  P_i = {j < i : token_j = token_i}         (every earlier occurrence)
//   induction        P_i = {j + 1 : j < i, token_j = token_i}  (the token after each earlier occurrence)
//   first_token      P_i = {0}                                  (an attention sink)
//   self             P_i = {i}
// The score of a head is the mean, over the query rows that have at least one pattern key, of
// the share of the row's weight that falls on those keys: mean_i (Σ_{j∈P_i} A_ij / Σ_j A_ij).
// With softmax weights Σ_j A_ij = 1; the division makes the share of a sigmoid or relu head's
// row too (a row of zero weight is left out).
// The first token: as a key it is one like any other (TransformerLens' exclude_bos = false);
// as a query, row 0 is left out of every score, because causal attention gives it its whole
// weight on itself whatever the head does (it would count 1 for self and first_token).
// Where this differs from TransformerLens (detect_head, error_measure "mul"): it divides the
// pattern's weight summed over all rows by the weight of all rows, so rows without a pattern
// key count as 0 (a perfect previous-token head scores (T-1)/T there, and an induction head on
// a repeated random sequence at most about 1/2); here they are left out and such heads score 1.
// A pattern with no row at all (no repeated token for duplicate_token) has no score (nullopt).
// Not for: encoders (no causal rows), batches.
//
//   std::vector<std::int32_t> tokens = attnlab::interp::random_repeat(20, gpt.config().vocab_size, 1);
//   for (const attnlab::interp::HeadScores& h : attnlab::interp::detect_heads(gpt, tokens))
//       std::printf("%zu.%zu induction %.2f\n", h.layer, h.head, h.score(attnlab::interp::HeadPattern::induction).value_or(0));
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

#include "attnlab/core/choice.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace attnlab {

#define ATTNLAB_HEAD_PATTERN_VALUES(X)                                                   \
    X(previous_token, "the key just before the query")                                  \
    X(duplicate_token, "every earlier key holding the query's token")                   \
    X(induction, "the key after every earlier occurrence of the query's token")         \
    X(first_token, "the first key (an attention sink)")                                 \
    X(self, "the query's own position")
ATTNLAB_CHOICE(HeadPattern, "head pattern", ATTNLAB_HEAD_PATTERN_VALUES,
               "which keys a head detector expects each query to attend to")

namespace interp {

inline constexpr std::size_t kNumHeadPatterns = std::size(ChoiceTraits<HeadPattern>::values);

// The pattern's keys for every query row of tokens (T): (T, T), 1 where key j is in P_i, else 0.
Tensor2 detection_pattern(HeadPattern pattern, const std::vector<std::int32_t>& tokens);

// A head's score against a pattern: weights (T, S) of causal attention, pattern (T, S) of 0/1,
// as at the top of this header (row 0 and rows without a pattern key or weight left out).
// ShapeError for shapes that differ.
std::optional<double> pattern_score(const Tensor2& weights, const Tensor2& pattern);

struct HeadScores {
    std::size_t layer = 0;
    std::size_t head = 0;
    std::array<std::optional<double>, kNumHeadPatterns> scores;  // in HeadPattern's order
    const std::optional<double>& score(HeadPattern p) const { return scores[static_cast<std::size_t>(p)]; }
};

// Every head of a decoder on tokens (T), layer by layer: L·H entries. ValueError for a
// sequence the model cannot read (interp::check_tokens).
std::vector<HeadScores> detect_heads(const DecoderLM& model, const std::vector<std::int32_t>& tokens);
// The same from attention maps (L, H, T, T) already computed.
std::vector<HeadScores> detect_heads(const Tensor4& maps, const std::vector<std::int32_t>& tokens);

// n tokens drawn uniformly from 0..vocab-1 by Rng(seed), then the same n again: (2n). The second
// half is where induction heads show (ValueError for n = 0 or vocab = 0).
std::vector<std::int32_t> random_repeat(std::size_t n, std::size_t vocab, std::uint64_t seed);

}  // namespace interp
}  // namespace attnlab
