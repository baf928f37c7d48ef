// attnlab/text/bpe_trainer.hpp: learns byte-level BPE merges from a corpus, in GPT-2's scheme.
//
// What it is for: the English models' tokenizer. The text is split into GPT-2's pieces
// (gpt2_pieces, text/byte_bpe.hpp), each piece's bytes become byte symbols, and the most
// frequent adjacent pair of symbols over all pieces (weighted by how often each piece occurs)
// is merged, again and again (Sennrich et al. 2016, "Neural Machine Translation of Rare Words
// with Subword Units", section 3.1; Radford et al. 2019, section 2.2, for bytes). Ties go to the
// pair whose symbols have the smaller ids (bytes first, then merges in order), so the result is
// deterministic. Pairs seen fewer than twice are never merged. The output is GPT-2's two files,
// read by the same ByteBpeTokenizer that reads GPT-2's own. Not for: special tokens
// (<|endoftext|>), or training on anything but UTF-8 text.
//
//   attnlab::text::TokenizerFiles f = attnlab::text::train_byte_bpe({"the cat the hat"}, 10);
//   auto bpe = attnlab::text::ByteBpeTokenizer::from_files(f["vocab.json"], f["merges.txt"]);
//   bpe.encode(" the");   // one token
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/text/tokenizer.hpp"

namespace attnlab::text {

inline constexpr std::size_t kMaxBpeMerges = 65536;

// vocab.json (the 256 byte symbols, ids 0..255 by byte value, then one token per new merge
// result, in merge order) and merges.txt ("#version" line, then up to `merges` lines). Fewer
// merges when no pair occurs twice. ConfigError for merges > kMaxBpeMerges; ValueError for text
// that is not UTF-8 (naming the document and the byte).
TokenizerFiles train_byte_bpe(const std::vector<std::string>& texts, std::size_t merges);

}  // namespace attnlab::text
