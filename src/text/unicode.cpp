#include "attnlab/text/unicode.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "attnlab/core/error.hpp"

namespace attnlab::text {

namespace {

struct CodeRange {
    char32_t first, last;
};
// Lower-case runs: every stride-th code point of [first, last] maps to itself + delta.
struct CaseRun {
    char32_t first, last;
    std::int32_t delta;
    std::uint32_t stride;
};
struct MultiLower {
    char32_t cp;
    char32_t mapped[3];
    std::uint32_t length;
};
struct StripEntry {
    char32_t cp;
    std::uint32_t offset, length;  // into kStripPool
};

#include "unicode_tables.inc"

template <std::size_t N>
bool in_ranges(const CodeRange (&table)[N], char32_t cp) {
    const CodeRange* end = table + N;
    // The first range whose last code point is >= cp.
    const CodeRange* it = std::lower_bound(table, end, cp, [](const CodeRange& r, char32_t c) { return r.last < c; });
    return it != end && it->first <= cp;
}

// One UTF-8 sequence at text[i]: its code point and length, or length = the bytes of the
// maximal prefix of a valid sequence (at least 1) and valid = false (the WHATWG decoder's rule:
// one U+FFFD per maximal subpart).
struct Decoded {
    char32_t cp;
    std::size_t length;
    bool valid;
};
Decoded decode_one(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) return {b0, 1, true};
    std::size_t need;
    char32_t cp;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1;
        cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2;
        cp = b0 & 0x0F;
        if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
        if (b0 == 0xED) hi = 0x9F;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3;
        cp = b0 & 0x07;
        if (b0 == 0xF0) lo = 0x90;  // no overlong forms
        if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
        return {0, 1, false};
    }
    for (std::size_t k = 1; k <= need; ++k) {
        if (i + k >= text.size()) return {0, k, false};
        const unsigned char b = byte(i + k);
        const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
        if (b < l || b > h) return {0, k, false};
        cp = (cp << 6) | (b & 0x3F);
    }
    return {cp, need + 1, true};
}

}  // namespace

std::vector<CodePoint> decode_utf8(std::string_view text, const char* where) {
    std::vector<CodePoint> out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const Decoded d = decode_one(text, i);
        if (!d.valid) {
            fail<ValueError>(where, ": the text is not valid UTF-8 at byte ", i, " (byte value ",
                             static_cast<int>(static_cast<unsigned char>(text[i])), ")");
        }
        out.push_back({d.cp, i, i + d.length});
        i += d.length;
    }
    return out;
}

bool is_valid_utf8(std::string_view bytes) {
    for (std::size_t i = 0; i < bytes.size();) {
        const Decoded d = decode_one(bytes, i);
        if (!d.valid) return false;
        i += d.length;
    }
    return true;
}

std::string valid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size();) {
        const Decoded d = decode_one(bytes, i);
        if (d.valid) out.append(bytes.substr(i, d.length));
        else append_utf8(out, 0xFFFD);
        i += d.length;
    }
    return out;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

bool is_letter(char32_t cp) { return in_ranges(kLetterRanges, cp); }
bool is_number(char32_t cp) { return in_ranges(kNumberRanges, cp); }
bool is_js_space(char32_t cp) { return in_ranges(kJsSpaceRanges, cp); }

bool is_bert_whitespace(char32_t cp) {
    return cp == U' ' || cp == U'\t' || cp == U'\n' || cp == U'\r' || in_ranges(kSpaceSeparatorRanges, cp);
}
bool is_bert_control(char32_t cp) {
    if (cp == U'\t' || cp == U'\n' || cp == U'\r') return false;
    return in_ranges(kOtherRanges, cp);
}
bool is_bert_punctuation(char32_t cp) {
    // BERT counts every ASCII printable that is not a letter or digit ("^", "$", "`" are not in
    // Unicode's P* categories) as punctuation.
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
        return true;
    }
    return in_ranges(kPunctuationRanges, cp);
}
bool is_cjk_ideograph(char32_t cp) {
    // The blocks BERT's _is_chinese_char lists (CJK Unified Ideographs, Extensions A-E and the
    // compatibility ideographs); Hangul, kana and CJK punctuation are not among them.
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}
bool is_nonspacing_mark(char32_t cp) { return in_ranges(kNonspacingMarkRanges, cp); }

void append_lower(std::u32string& out, char32_t cp) {
    for (const MultiLower& m : kLowerMulti) {
        if (m.cp == cp) {
            out.append(m.mapped, m.length);
            return;
        }
    }
    const CaseRun* end = std::end(kLowerRuns);
    const CaseRun* it =
        std::lower_bound(std::begin(kLowerRuns), end, cp, [](const CaseRun& r, char32_t c) { return r.last < c; });
    if (it != end && it->first <= cp && (cp - it->first) % it->stride == 0) {
        out += static_cast<char32_t>(static_cast<std::int64_t>(cp) + it->delta);
        return;
    }
    out += cp;
}

void append_stripped(std::u32string& out, char32_t cp) {
    if (is_nonspacing_mark(cp)) return;
    // Hangul syllables decompose algorithmically (Unicode 15, section 3.12) into L V [T] jamo,
    // none of which is a mark.
    constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
    constexpr char32_t kTCount = 28, kNCount = 21 * 28, kSCount = 19 * 21 * 28;
    if (cp >= kSBase && cp < kSBase + kSCount) {
        const char32_t s = cp - kSBase;
        out += kLBase + s / kNCount;
        out += kVBase + (s % kNCount) / kTCount;
        if (s % kTCount != 0) out += kTBase + s % kTCount;
        return;
    }
    const StripEntry* end = std::end(kStripEntries);
    const StripEntry* it =
        std::lower_bound(std::begin(kStripEntries), end, cp, [](const StripEntry& e, char32_t c) { return e.cp < c; });
    if (it != end && it->cp == cp) {
        out.append(kStripPool + it->offset, it->length);
        return;
    }
    out += cp;
}

}  // namespace attnlab::text
