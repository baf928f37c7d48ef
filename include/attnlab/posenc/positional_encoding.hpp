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

namespace attnlab {

enum class PositionalKind { none, sinusoidal, learned, rope, time };

std::string_view positional_name(PositionalKind kind);
// Throws ConfigError listing the valid names for an unknown one.
PositionalKind positional_from_name(std::string_view name);

}  // namespace attnlab
