// attnlab/text/byte_bpe.hpp: GPT-2's byte-level BPE (Radford et al. 2019, section 2.2), from any
// vocab + merges pair in GPT-2's file format.
//
// What it is for: the tokenizer of GPT-2 and its family, and of any model whose merges were
// trained in the same scheme (text-models trains its own and writes them in these files):
//   1. the text is split into pieces by GPT-2's pattern
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      (gpt2_pieces: letters, numbers, other symbols, each with at most one leading space;
//      English contractions; runs of whitespace, a run before a word leaving its last space to
//      the word);
//   2. each piece's UTF-8 bytes become symbols, byte b the character byte_symbol(b) (the
//      printable bytes stand for themselves, the others for U+0100 onwards, so every symbol is
//      a visible character and " " is "Ġ");
//   3. within a piece the adjacent pair whose merge comes first in merges.txt is merged, all
//      its occurrences left to right, until no pair has a merge; each final symbol is a token
//      of vocab.json.
// Every byte has a symbol, so any text encodes with no unknown token.
//
// Files: vocab.json (a JSON object token -> id; GPT-2's encoder.json) and merges.txt (one merge
// "a b" per line, a first line starting "#version" skipped; GPT-2's vocab.bpe). Each merge's
// two symbols and their concatenation must be tokens of the vocabulary (IoError naming the line
// otherwise), so encoding works on ids throughout.
//
// Reference: the pieces follow JavaScript's \p{L}, \p{N} and \s (the class tables are Node's
// Unicode data; scripts/gen_unicode_tables.mjs), and the ids equal gpt-3-encoder's encode()
// (tests/wasm/tokenizer.test.mjs). A pair is its two symbols, as in OpenAI's encoder.py and
// Hugging Face's tokenizers. Text must be valid UTF-8 (a JavaScript string with a lone surrogate
// is refused, where TextEncoder would write U+FFFD).
//
//   auto bpe = attnlab::text::ByteBpeTokenizer::from_files(vocab_json, merges_txt);
//   bpe.encode(" world");                  // {995}: one piece, " world" -> "Ġworld"
//   attnlab::text::gpt2_pieces("it's 42"); // {"it", "'s", " 42"} as byte ranges
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attnlab/text/tokenizer.hpp"

namespace attnlab::text {

// A piece of the text: bytes [begin, end).
struct TextPiece {
    std::size_t begin, end;
};
// GPT-2's pre-tokenization of UTF-8 text (step 1 above); ValueError for invalid UTF-8.
std::vector<TextPiece> gpt2_pieces(std::string_view text);
// The UTF-8 text of the symbol standing for byte b (GPT-2's bytes_to_unicode).
const std::string& byte_symbol(std::uint8_t b);

class ByteBpeTokenizer final : public Tokenizer {
public:
    // IoError naming the file and the line or key for malformed contents.
    static ByteBpeTokenizer from_files(const std::string& vocab_json, const std::string& merges_txt);

    std::string_view kind() const override { return "byte_bpe"; }
    std::size_t vocab_size() const override { return tokens_.size(); }
    std::vector<TokenSpan> encode_spans(std::string_view text) const override;
    std::string decode(const std::vector<std::int32_t>& ids) const override;
    // The token's bytes: each symbol character as its byte, any other character (a token added
    // outside the byte alphabet) as its UTF-8.
    std::string token_text(std::int32_t id) const override;
    TokenizerFiles files() const override;  // vocab.json, merges.txt as given

    // The vocabulary's string for id (its symbols, e.g. "Ġworld").
    const std::string& token_string(std::int32_t id) const;
    std::size_t merge_count() const { return merge_count_; }

private:
    ByteBpeTokenizer() = default;
    // The BPE of one piece's bytes, appended to out with their spans (offset: the piece's start).
    void encode_piece(std::string_view bytes, std::size_t offset, std::vector<TokenSpan>& out) const;

    struct Merge {
        std::uint32_t rank;
        std::int32_t merged;  // id of the concatenation
    };
    std::vector<std::string> tokens_;       // id -> vocabulary string ("" for an unused id)
    std::vector<std::string> token_bytes_;  // id -> the bytes it decodes to
    std::int32_t byte_ids_[256];            // byte -> id of its symbol, or -1 when the vocabulary lacks it
    std::unordered_map<std::uint64_t, Merge> merges_;  // (left id << 32 | right id) -> merge
    std::size_t merge_count_ = 0;
    std::string vocab_json_, merges_txt_;  // the files, kept for files()
};

}  // namespace attnlab::text
