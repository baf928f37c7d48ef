// attnlab/interp/poem_patterns.hpp: a regulated poem's form read from its tokens, and the four
// attention patterns of verse that heads are scored by (the heads-real experiment, the page's
// §3.2 and §5.2 figures and its Heads tab all use these, and nothing else).
//
// The line rule (the one definition): tokens are read in order by their text.
//   - "，" or "。" (a mark) closes the current line and is its last column: a line of n
//     characters has them at columns 0..n-1 and its mark at column n. A mark that would close a
//     line with no character yet (a mark after a mark, or first) belongs to no line.
//   - a token whose text is empty (the begin and end tokens) or only white space (a line break,
//     a space) belongs to no line and does not close one.
//   - every other token is the next character of the current line (an unknown character too).
// Lines are numbered from 0; a couplet is lines 2m and 2m + 1. An unclosed last line (a poem
// being written) has its characters but no last character: it is no rhyme query.
//
// The patterns, each a set P_i of keys for the query token i (T tokens; (ℓ, c) is line ℓ,
// column c, and e_ℓ is the column of line ℓ's last character, the one before its mark):
//   paired_line  i = (2m + 1, c), the mark included  P_i = {(2m, c)}        (parallelism: the same column)
//   paired_next  i = (2m + 1, c), the mark included  P_i = {(2m, c + 1)}    (what the next token answers: a
//                causal model predicts token i + 1 at position i)
//   rhyme        i = (2m + 1, e_{2m+1}), m >= 1      P_i = {(2m - 1, e_{2m-1})}  (the previous couplet's rhyme)
//   rhyme_next   i = (2m + 1, e_{2m+1} - 1), m >= 1  P_i = {(2m - 1, e_{2m-1})}  (the rhyme about to be written)
// A key that does not exist (a shorter first line, an unclosed line) leaves P_i empty. Every key
// is earlier than its query, so the patterns suit causal attention. Tokens outside lines (the
// first token <bos> included) are never a query or a key; the score (interp::pattern_score) also
// leaves row 0 out.
// Not for: other forms of verse (lines are not checked against a form; see text::regulated_lines).
//
//   std::vector<std::string> texts = {"", "白", "日", "，", "黄", "河", "。"};
//   Tensor2 keys = attnlab::interp::poem_pattern(attnlab::PoemPattern::paired_line, attnlab::interp::poem_form(texts));
//   // keys(4, 1) == 1: 黄 (line 1, column 0) -> 白 (line 0, column 0)
#pragma once

#include <cstddef>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attnlab/core/choice.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

#define ATTNLAB_POEM_PATTERN_VALUES(X)                                                        \
    X(paired_line, "the same column of the couplet's first line")                             \
    X(paired_next, "the next column of the couplet's first line (what the next token answers)") \
    X(rhyme, "the last character of the previous couplet's second line, from the last character") \
    X(rhyme_next, "the last character of the previous couplet's second line, from the one before the last")
ATTNLAB_CHOICE(PoemPattern, "poem pattern", ATTNLAB_POEM_PATTERN_VALUES,
               "which keys of a regulated poem a head is expected to attend to")

namespace interp {

inline constexpr std::size_t kNumPoemPatterns = std::size(ChoiceTraits<PoemPattern>::values);
inline constexpr std::size_t kNoLine = std::numeric_limits<std::size_t>::max();

// Where each of T tokens stands in the poem, by the line rule above.
struct PoemForm {
    std::vector<std::size_t> line;    // (T) the token's line, kNoLine outside lines
    std::vector<std::size_t> column;  // (T) its column in the line (kNoLine outside lines)
    std::vector<bool> mark;           // (T) true for a line's closing mark
};

// The form of T tokens given by their texts (T).
PoemForm poem_form(const std::vector<std::string>& texts);

// The pattern's keys for every query row: form of T tokens -> (T, T), 1 where key j is in P_i, else 0.
Tensor2 poem_pattern(PoemPattern pattern, const PoemForm& form);

}  // namespace interp
}  // namespace attnlab
