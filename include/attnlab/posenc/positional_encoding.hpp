// attnlab/posenc/positional_encoding.hpp: the four ways to tell attention where tokens are.
//
// What it is for: choosing among the encodings of article §4 by name. Attention alone is
// permutation-equivariant ("I love you" = "you love I"); each kind breaks that differently:
//   none        no position information at all
//   sinusoidal  fixed sin/cos table added to the embeddings   (posenc/sinusoidal.hpp)
//   learned     a trained table added to the embeddings, max length fixed (posenc/learned.hpp)
//   rope        rotates q and k per head inside attention     (posenc/rope.hpp)
//
//   attnlab::PositionalKind kind = attnlab::positional_from_name("rope");
#pragma once

#include <string_view>

namespace attnlab {

enum class PositionalKind { none, sinusoidal, learned, rope };

std::string_view positional_name(PositionalKind kind);
// Throws ConfigError listing the valid names for an unknown one.
PositionalKind positional_from_name(std::string_view name);

}  // namespace attnlab
