// attnlab/posenc/positional_encoding.hpp: the ways to tell attention where tokens (or steps) are.
//
// What it is for: choosing among the encodings of article §4 by name. Attention alone is
// permutation-equivariant ("I love you" = "you love I"); each kind breaks that differently:
//   none        no position information at all
//   sinusoidal  fixed sin/cos table added to the embeddings   (posenc/sinusoidal.hpp)
//   learned     a trained table added to the embeddings, max length fixed (posenc/learned.hpp)
//   rope        rotates q and k per head inside attention     (posenc/rope.hpp)
//   time        forecasters only (model/series/series_models.hpp): the sinusoidal table for the step's
//               place in its window, plus sin/cos of each timestamp at the series' periods read
//               beside the values (posenc/time_encoding.hpp, article §7.2)
//
//   attnlab::PositionalKind kind = attnlab::positional_from_name("rope");
#pragma once

#include <string_view>

#include "attnlab/core/choice.hpp"

namespace attnlab {

#define ATTNLAB_POSITIONAL_VALUES(X)                                                                      \
    X(none, "no position information")                                                                   \
    X(sinusoidal, "the fixed sin/cos table added to the embeddings")                                     \
    X(learned, "a trained table added to the embeddings, at most max_len positions")                     \
    X(rope, "q and k rotated per head by their position")                                                \
    X(time, "for forecasters, the sinusoidal table plus sin/cos of each timestamp at time_periods (section 7.2)")
ATTNLAB_CHOICE(PositionalKind, "positional encoding", ATTNLAB_POSITIONAL_VALUES,
               "how position enters (article section 4)")

// Throws ConfigError listing the valid names for an unknown one.
inline std::string_view positional_name(PositionalKind kind) { return choice_name(kind); }
inline PositionalKind positional_from_name(std::string_view name) { return choice_from_name<PositionalKind>(name); }

}  // namespace attnlab
