// attnlab/text/char_vocab.hpp: one character a token, over a vocabulary of the most frequent
// characters of a corpus (the tokenizer of the `tang` model and of `--corpus FILE --tokens char`).
//
// What it is for: Chinese verse, where a character is the unit of meaning, rhyme and metre. Ids
// 0, 1, 2 are <unk> (a character outside the vocabulary), <bos> and <eos> (begin and end of a
// document); then every kept character, line break and punctuation included, most frequent
// first. A tokenizer built with a ScriptConverter (text/script.hpp) converts each character of
// the text to the script it was trained on before looking it up, so traditional and simplified
// prompts give the same ids; decode_in() writes ids back in either script. Not for: subwords
// (text/byte_bpe.hpp), or adding <bos>/<eos> (encode adds none; callers place them).
//
// Files: chars.json (a JSON array of the token strings, id = index, the three specials first)
// and, optional, script.txt (the converter's text form plus a first line "trained_on simplified").
//
//   auto tok = attnlab::text::CharTokenizer::build({"床前明月光，"}, 100, nullptr);
//   tok.encode("明月");            // {id of 明, id of 月}
//   tok.decode(tok.encode("月"));  // "月"
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnlab/text/script.hpp"
#include "attnlab/text/tokenizer.hpp"

namespace attnlab::text {

// Characters of a corpus by count, with what a vocabulary of the first n would cover.
struct CharCounts {
    std::vector<std::pair<char32_t, std::size_t>> by_count;  // most frequent first, ties by code point
    std::size_t total = 0;                                   // characters counted
    // Share of `total` the n most frequent characters cover (n >= distinct: 1).
    double coverage(std::size_t n) const;
};
CharCounts count_characters(const std::vector<std::string>& documents);

class CharTokenizer final : public Tokenizer {
public:
    static constexpr std::int32_t kUnk = 0, kBos = 1, kEos = 2;
    static constexpr std::size_t kSpecials = 3;
    // The vocabulary of the `chars` most frequent characters of `documents` (in the script they
    // are in) plus the three specials. ConfigError for chars == 0 or chars > kMaxChars.
    // `script`: the converter prompts go through, with the script the documents are in.
    static CharTokenizer build(const std::vector<std::string>& documents, std::size_t chars,
                               const ScriptConverter* script, Script trained_on = Script::simplified);
    static constexpr std::size_t kMaxChars = 65536;
    // IoError naming the file and the entry for malformed contents.
    static CharTokenizer from_files(const std::string& chars_json, const std::string& script_txt);

    std::string_view kind() const override { return "char"; }
    std::size_t vocab_size() const override { return tokens_.size(); }
    std::vector<TokenSpan> encode_spans(std::string_view text) const override;
    // The text of the ids in the script trained on; <bos> and <eos> as nothing, <unk> as U+FFFD.
    std::string decode(const std::vector<std::int32_t>& ids) const override;
    // decode() then converted to `script` (no converter: as decode()).
    std::string decode_in(const std::vector<std::int32_t>& ids, Script script) const;
    std::string token_text(std::int32_t id) const override;
    TokenizerFiles files() const override;
    std::optional<std::int32_t> begin_id() const override { return kBos; }
    std::optional<std::int32_t> end_id() const override { return kEos; }
    // decode_in() the script `like` is in, with a converter; decode() without one.
    std::string decode_like(const std::vector<std::int32_t>& ids, std::string_view like) const override;

    // The converter and the script the vocabulary is in, when built with one.
    const std::optional<ScriptConverter>& script() const { return script_; }
    Script trained_on() const { return trained_on_; }
    // The id of a character, kUnk when absent (after conversion to the trained script).
    std::int32_t id_of(char32_t c) const;

private:
    CharTokenizer() = default;
    void index();  // ids_ from tokens_

    std::vector<std::string> tokens_;  // id -> token string ("<unk>", "<bos>", "<eos>", then characters)
    std::unordered_map<char32_t, std::int32_t> ids_;
    std::optional<ScriptConverter> script_;
    Script trained_on_ = Script::simplified;
};

}  // namespace attnlab::text
