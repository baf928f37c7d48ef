// attnlab/text/script.hpp: traditional <-> simplified Chinese, one character at a time.
//
// What it is for: the Tang poems of chinese-poetry are in traditional characters; the `tang`
// model is trained on their simplified form, takes a prompt in either script (each character
// converted to the script it was trained on) and answers in the script the prompt used. The
// tables are OpenCC's character tables (TSCharacters, STCharacters; Apache-2.0, shipped in the
// opencc-js npm package), exported by scripts/export_opencc.mjs as data, never as code: the first
// candidate of each entry. Not for: phrase-level conversion (OpenCC's *Phrases tables), regional
// variants (Taiwan, Hong Kong), or anything beyond one code point to one code point.
//
// Text form (the exported file, and what a tokenizer carries): one entry a line,
//   t2s <traditional> <simplified>      s2t <simplified> <traditional>
// a line starting with '#' is a comment.
//
//   auto conv = attnlab::text::ScriptConverter::from_text(file_text, "opencc_chars.txt");
//   conv.to_simplified("雲日隱層闕");        // "云日隐层阙"
//   conv.detect("雲日隱層闕");               // Script::traditional
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

namespace attnlab::text {

enum class Script { simplified, traditional };
// "simplified", "traditional"
const char* script_name(Script s);
// The script called name; ConfigError naming the two otherwise.
Script parse_script(std::string_view name);

class ScriptConverter {
public:
    // IoError naming `where` and the line for a malformed line.
    static ScriptConverter from_text(std::string_view text, const char* where);
    // Every code point mapped (a character without an entry stays as it is); ValueError for
    // text that is not UTF-8.
    std::string to_simplified(std::string_view text) const;
    std::string to_traditional(std::string_view text) const;
    std::string to_script(std::string_view text, Script target) const;
    char32_t to_simplified(char32_t c) const;
    char32_t to_traditional(char32_t c) const;
    // traditional when more of the text's characters change under t2s than under s2t, else
    // simplified (a text with neither, e.g. 明月, reads as simplified).
    Script detect(std::string_view text) const;
    // The entries whose simplified side is in `simplified` (a tokenizer keeps only the
    // characters its vocabulary can hold).
    ScriptConverter restricted_to(const std::set<char32_t>& simplified) const;
    // The text form, entries sorted by code point (from_text of it gives an equal converter).
    std::string text() const;
    std::size_t size() const { return t2s_.size() + s2t_.size(); }

private:
    std::unordered_map<char32_t, char32_t> t2s_, s2t_;
};

}  // namespace attnlab::text
