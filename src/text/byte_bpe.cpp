#include "attnlab/text/byte_bpe.hpp"

#include <array>
#include <limits>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/text/unicode.hpp"

namespace attnlab::text {

namespace {

// GPT-2's bytes_to_unicode: the printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves; the other 68 bytes, in order, for U+0100, U+0101, ... so no symbol is a space or a
// control character.
std::array<char32_t, 256> make_byte_chars() {
    std::array<char32_t, 256> chars{};
    std::array<bool, 256> printable{};
    for (int b = '!'; b <= '~'; ++b) printable[b] = true;
    for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
    for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) chars[b] = printable[b] ? static_cast<char32_t>(b) : next++;
    return chars;
}
const std::array<char32_t, 256>& byte_chars() {
    static const std::array<char32_t, 256> chars = make_byte_chars();
    return chars;
}
// The byte a symbol character stands for, or -1.
int symbol_byte(char32_t cp) {
    static const std::array<int, 0x144> inverse = [] {
        std::array<int, 0x144> table;
        table.fill(-1);
        for (int b = 0; b < 256; ++b) table[byte_chars()[b]] = b;
        return table;
    }();
    return cp < inverse.size() ? inverse[cp] : -1;
}

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

bool is_other(char32_t cp) { return !is_js_space(cp) && !is_letter(cp) && !is_number(cp); }

}  // namespace

const std::string& byte_symbol(std::uint8_t b) {
    static const std::array<std::string, 256> symbols = [] {
        std::array<std::string, 256> out;
        for (int i = 0; i < 256; ++i) append_utf8(out[i], byte_chars()[i]);
        return out;
    }();
    return symbols[b];
}

std::vector<TextPiece> gpt2_pieces(std::string_view text) {
    const std::vector<CodePoint> cps = decode_utf8(text, "gpt2_pieces");
    const std::size_t n = cps.size();
    std::vector<TextPiece> out;
    const auto at = [&](std::size_t i) { return i < n ? cps[i].value : char32_t{0}; };
    const auto emit = [&](std::size_t first, std::size_t last) {  // code points [first, last)
        out.push_back({cps[first].begin, cps[last - 1].end});
    };
    // The alternatives of the pattern in its order; the first that matches at i wins, as in a
    // backtracking regex engine.
    for (std::size_t i = 0; i < n;) {
        const char32_t c = cps[i].value;
        // 's|'t|'re|'ve|'m|'ll|'d
        if (c == U'\'') {
            const char32_t a = at(i + 1), b = at(i + 2);
            std::size_t length = 0;
            if (a == U's' || a == U't' || a == U'm' || a == U'd') length = 2;
            else if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) length = 3;
            if (length > 0) {
                emit(i, i + length);
                i += length;
                continue;
            }
        }
        // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space, then a run of the class.
        bool matched = false;
        for (bool (*in_class)(char32_t) : {&is_letter, &is_number, &is_other}) {
            std::size_t j = i;
            if (c == U' ' && i + 1 < n && in_class(cps[i + 1].value)) j = i + 1;
            if (!in_class(cps[j].value)) continue;
            while (j < n && in_class(cps[j].value)) ++j;
            emit(i, j);
            i = j;
            matched = true;
            break;
        }
        if (matched) continue;
        // `\s+(?!\S)|\s+`: c is whitespace. The longest run not followed by a non-space: the
        // whole run at the end of the text, else the run less its last character (which goes
        // with the word after it), else (a run of one) that one character.
        std::size_t k = i;
        while (k < n && is_js_space(cps[k].value)) ++k;
        const std::size_t end = (k == n || k - 1 == i) ? k : k - 1;
        emit(i, end);
        i = end;
    }
    return out;
}

ByteBpeTokenizer ByteBpeTokenizer::from_files(const std::string& vocab_json, const std::string& merges_txt) {
    ByteBpeTokenizer t;
    nlohmann::json vocab;
    try {
        vocab = nlohmann::json::parse(vocab_json);
    } catch (const nlohmann::json::exception& e) {
        fail<IoError>("vocab.json: not valid JSON (", e.what(), ")");
    }
    if (!vocab.is_object()) fail<IoError>("vocab.json: must be a JSON object of token -> id, got ", vocab.type_name());
    if (vocab.empty()) fail<IoError>("vocab.json: has no tokens");
    std::unordered_map<std::string, std::int32_t> ids;
    ids.reserve(vocab.size());
    std::int64_t largest = -1;
    for (const auto& [token, value] : vocab.items()) {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
            value.get<std::int64_t>() >= std::numeric_limits<std::int32_t>::max()) {
            fail<IoError>("vocab.json: the id of token \"", token, "\" must be a non-negative 32-bit integer, got ",
                          value.dump());
        }
        const auto id = value.get<std::int64_t>();
        ids.emplace(token, static_cast<std::int32_t>(id));
        largest = std::max(largest, id);
    }
    if (largest >= static_cast<std::int64_t>(8 * vocab.size()) + 1024) {
        fail<IoError>("vocab.json: ids go up to ", largest, " for only ", vocab.size(), " tokens");
    }
    t.tokens_.assign(static_cast<std::size_t>(largest) + 1, std::string());
    std::vector<bool> used(t.tokens_.size(), false);
    for (const auto& [token, id] : ids) {
        if (used[id]) {
            fail<IoError>("vocab.json: id ", id, " belongs to two tokens, \"", t.tokens_[id], "\" and \"", token, "\"");
        }
        used[id] = true;
        t.tokens_[id] = token;
    }
    t.token_bytes_.resize(t.tokens_.size());
    for (std::size_t id = 0; id < t.tokens_.size(); ++id) {
        if (!used[id]) continue;
        std::string& bytes = t.token_bytes_[id];
        for (const CodePoint& cp : decode_utf8(t.tokens_[id], "vocab.json")) {
            const int b = symbol_byte(cp.value);
            if (b >= 0) bytes += static_cast<char>(b);
            else append_utf8(bytes, cp.value);
        }
    }
    for (int b = 0; b < 256; ++b) {
        const auto it = ids.find(byte_symbol(static_cast<std::uint8_t>(b)));
        t.byte_ids_[b] = it == ids.end() ? -1 : it->second;
    }

    // merges.txt: "a b" per line, in priority order.
    if (!is_valid_utf8(merges_txt)) fail<IoError>("merges.txt: is not valid UTF-8");
    std::size_t line_no = 0, begin = 0;
    while (begin < merges_txt.size()) {
        std::size_t end = merges_txt.find('\n', begin);
        if (end == std::string::npos) end = merges_txt.size();
        std::string_view line(merges_txt.data() + begin, end - begin);
        begin = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.rfind("#version", 0) == 0) continue;
        // Split on ASCII whitespace; empty lines carry no merge.
        std::vector<std::string_view> parts;
        for (std::size_t i = 0; i < line.size();) {
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
            std::size_t j = i;
            while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
            if (j > i) parts.push_back(line.substr(i, j - i));
            i = j;
        }
        if (parts.empty()) continue;
        if (parts.size() != 2) {
            fail<IoError>("merges.txt: line ", line_no, " must hold two symbols separated by a space, got \"",
                          std::string(line.substr(0, 80)), "\"");
        }
        const std::string left(parts[0]), right(parts[1]), merged = left + right;
        for (const std::string* s : {&left, &right, &merged}) {
            if (ids.count(*s) == 0) {
                fail<IoError>("merges.txt: line ", line_no, " (\"", left, " ", right, "\"): \"", *s,
                              "\" is not a token of vocab.json");
            }
        }
        const std::uint64_t key = pair_key(ids.at(left), ids.at(right));
        // A repeated merge keeps its first (highest-priority) rank.
        t.merges_.emplace(key, Merge{static_cast<std::uint32_t>(t.merge_count_), ids.at(merged)});
        ++t.merge_count_;
    }
    t.vocab_json_ = vocab_json;
    t.merges_txt_ = merges_txt;
    return t;
}

void ByteBpeTokenizer::encode_piece(std::string_view bytes, std::size_t offset, std::vector<TokenSpan>& out) const {
    struct Symbol {
        std::int32_t id;
        std::size_t length;  // bytes
    };
    std::vector<Symbol> word, next;
    word.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const auto b = static_cast<unsigned char>(bytes[i]);
        if (byte_ids_[b] < 0) {
            fail<ValueError>("ByteBpeTokenizer::encode: the vocabulary has no token for byte ", static_cast<int>(b),
                             " (symbol \"", byte_symbol(b), "\") at byte ", offset + i, " of the text");
        }
        word.push_back({byte_ids_[b], 1});
    }
    while (word.size() > 1) {
        // The adjacent pair whose merge has the lowest rank.
        const Merge* best = nullptr;
        std::int32_t left = 0, right = 0;
        for (std::size_t i = 0; i + 1 < word.size(); ++i) {
            const auto it = merges_.find(pair_key(word[i].id, word[i + 1].id));
            if (it != merges_.end() && (best == nullptr || it->second.rank < best->rank)) {
                best = &it->second;
                left = word[i].id;
                right = word[i + 1].id;
            }
        }
        if (best == nullptr) break;
        // Every occurrence of that pair, left to right.
        next.clear();
        for (std::size_t i = 0; i < word.size();) {
            if (i + 1 < word.size() && word[i].id == left && word[i + 1].id == right) {
                next.push_back({best->merged, word[i].length + word[i + 1].length});
                i += 2;
            } else {
                next.push_back(word[i]);
                ++i;
            }
        }
        word.swap(next);
    }
    std::size_t at = offset;
    for (const Symbol& s : word) {
        out.push_back({s.id, at, at + s.length});
        at += s.length;
    }
}

std::vector<TokenSpan> ByteBpeTokenizer::encode_spans(std::string_view text) const {
    std::vector<TokenSpan> out;
    for (const TextPiece& piece : gpt2_pieces(text)) {
        encode_piece(text.substr(piece.begin, piece.end - piece.begin), piece.begin, out);
    }
    return out;
}

std::string ByteBpeTokenizer::decode(const std::vector<std::int32_t>& ids) const {
    std::string bytes;
    for (std::int32_t id : ids) bytes += token_text(id);
    return valid_utf8(bytes);
}

std::string ByteBpeTokenizer::token_text(std::int32_t id) const {
    (void)token_string(id);  // checks the id
    return token_bytes_[id];
}

const std::string& ByteBpeTokenizer::token_string(std::int32_t id) const {
    check_id(id, "ByteBpeTokenizer");
    if (tokens_[id].empty()) {
        fail<ValueError>("ByteBpeTokenizer: token id ", id, " has no token in vocab.json (its ids have gaps)");
    }
    return tokens_[id];
}

TokenizerFiles ByteBpeTokenizer::files() const { return {{"vocab.json", vocab_json_}, {"merges.txt", merges_txt_}}; }

}  // namespace attnlab::text
