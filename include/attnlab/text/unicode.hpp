// attnlab/text/unicode.hpp: UTF-8 and the Unicode character classes the tokenizers need.
//
// What it is for: decoding text into code points with their byte offsets (so a token can say
// which bytes of the input it covers), and classifying characters the way the reference
// tokenizers do: GPT-2's pre-tokenizer (\p{L}, \p{N} and JavaScript's \s, as gpt-3-encoder's
// encode() runs it in Node) and BERT's BasicTokenizer (punctuation, control, whitespace, CJK
// ideographs, lower-casing, accent stripping). The class tables are generated from Node's own
// Unicode data by scripts/gen_unicode_tables.mjs (src/text/unicode_tables.inc). Not for:
// normalisation forms (only the NFD-then-drop-marks step of accent stripping is here).
//
//   auto cps = attnlab::text::decode_utf8("héllo", "my_function");   // ValueError on bad UTF-8
//   cps[1].value == U'é'; cps[1].begin == 1; cps[1].end == 3;
//   attnlab::text::is_letter(U'é');                                    // true
//   std::string ok = attnlab::text::valid_utf8(bytes);                 // bad sequences -> U+FFFD
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::text {

// One decoded character and the bytes [begin, end) of the text it came from.
struct CodePoint {
    char32_t value;
    std::size_t begin, end;
};

// The code points of UTF-8 text. ValueError "<where>: the text is not valid UTF-8 at byte N ..."
// for an invalid, overlong, surrogate or truncated sequence.
std::vector<CodePoint> decode_utf8(std::string_view text, const char* where);
// True when the bytes are valid UTF-8.
bool is_valid_utf8(std::string_view bytes);
// The bytes with every maximal invalid subsequence replaced by U+FFFD, as the WHATWG decoder
// (JavaScript's TextDecoder) does; valid text comes back unchanged.
std::string valid_utf8(std::string_view bytes);
// Appends the UTF-8 encoding of cp (a scalar value: not a surrogate, at most U+10FFFF).
void append_utf8(std::string& out, char32_t cp);

// GPT-2's pre-tokenizer classes, as JavaScript's /u regular expressions define them.
bool is_letter(char32_t cp);    // \p{L}
bool is_number(char32_t cp);    // \p{N}
bool is_js_space(char32_t cp);  // \s: WhiteSpace and LineTerminator

// BERT's BasicTokenizer classes (HF transformers' tokenization_bert.py, _is_whitespace,
// _is_control, _is_punctuation, _is_chinese_char).
bool is_bert_whitespace(char32_t cp);   // space, \t, \n, \r, or a space separator (Zs)
bool is_bert_control(char32_t cp);      // category C* except \t, \n, \r
bool is_bert_punctuation(char32_t cp);  // ASCII non-alphanumeric printables, or category P*
bool is_cjk_ideograph(char32_t cp);     // the CJK Unified Ideographs blocks BERT lists
bool is_nonspacing_mark(char32_t cp);   // Mn

// cp lower-cased (String.prototype.toLowerCase of the one character; U+0130 gives two code
// points), appended to out.
void append_lower(std::u32string& out, char32_t cp);
// cp after NFD with its nonspacing marks dropped (BERT's _run_strip_accents), appended to out:
// "é" -> "e", a mark -> nothing, a Hangul syllable -> its conjoining jamo.
void append_stripped(std::u32string& out, char32_t cp);

}  // namespace attnlab::text
