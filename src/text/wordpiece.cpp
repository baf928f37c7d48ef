#include "attnlab/text/wordpiece.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/text/unicode.hpp"

namespace attnlab::text {

namespace {

// The special tokens BertTokenizer never splits, when the vocabulary has them.
constexpr const char* kSpecialTokens[] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};

// CJK ideographs, CJK symbols and punctuation, full-width forms: decode() sets no space next to them.
bool is_wide(char32_t cp) {
    return is_cjk_ideograph(cp) || (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF00 && cp <= 0xFFEF);
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
    }
}

bool optional_bool(const nlohmann::json& config, const char* key, bool fallback) {
    if (!config.contains(key) || config[key].is_null()) return fallback;
    if (!config[key].is_boolean()) {
        fail<IoError>("tokenizer_config.json: \"", key, "\" must be true, false or null, got ", config[key].dump());
    }
    return config[key].get<bool>();
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::from_files(const std::string& vocab_txt, const std::string& config_json) {
    WordPieceTokenizer t;
    if (!is_valid_utf8(vocab_txt)) fail<IoError>("vocab.txt: is not valid UTF-8");
    // One token per line (HF's load_vocab strips only the "\n"); a final newline ends the last line.
    for (std::size_t begin = 0; begin < vocab_txt.size();) {
        std::size_t end = vocab_txt.find('\n', begin);
        if (end == std::string::npos) end = vocab_txt.size();
        t.tokens_.emplace_back(vocab_txt, begin, end - begin);
        begin = end + 1;
    }
    if (t.tokens_.empty()) fail<IoError>("vocab.txt: has no tokens");
    if (t.tokens_.size() > std::size_t{1} << 30) fail<IoError>("vocab.txt: has ", t.tokens_.size(), " lines, too many tokens");
    for (std::size_t id = 0; id < t.tokens_.size(); ++id) t.ids_[t.tokens_[id]] = static_cast<std::int32_t>(id);
    const auto unk = t.ids_.find("[UNK]");
    if (unk == t.ids_.end()) fail<IoError>("vocab.txt: has no [UNK] token (WordPiece maps unknown words to it)");
    t.unk_ = unk->second;
    for (const char* special : kSpecialTokens) {
        if (t.ids_.count(special)) t.specials_.emplace_back(special);
    }
    std::sort(t.specials_.begin(), t.specials_.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });

    if (!config_json.empty()) {
        nlohmann::json config;
        try {
            config = nlohmann::json::parse(config_json);
        } catch (const nlohmann::json::exception& e) {
            fail<IoError>("tokenizer_config.json: not valid JSON (", e.what(), ")");
        }
        if (!config.is_object()) fail<IoError>("tokenizer_config.json: must be a JSON object, got ", config.type_name());
        t.options_.lower_case = optional_bool(config, "do_lower_case", true);
        t.options_.strip_accents = optional_bool(config, "strip_accents", t.options_.lower_case);
        t.options_.tokenize_chinese_chars = optional_bool(config, "tokenize_chinese_chars", true);
    }
    t.vocab_txt_ = vocab_txt;
    t.config_json_ = config_json;
    return t;
}

std::vector<TokenSpan> WordPieceTokenizer::encode_spans(std::string_view text) const {
    const std::vector<CodePoint> cps = decode_utf8(text, "WordPieceTokenizer::encode");
    std::vector<TokenSpan> out;
    std::vector<Char> plain;
    // Step 1: special tokens written in the text, longest first at each position.
    for (std::size_t i = 0; i < cps.size();) {
        bool special = false;
        if (cps[i].value == U'[') {
            for (const std::string& s : specials_) {
                if (text.compare(cps[i].begin, s.size(), s) != 0) continue;
                encode_plain(plain, out);
                plain.clear();
                const std::size_t begin = cps[i].begin, end = begin + s.size();
                out.push_back({ids_.at(s), begin, end});
                while (i < cps.size() && cps[i].begin < end) ++i;
                special = true;
                break;
            }
        }
        if (special) continue;
        plain.push_back({cps[i].value, cps[i].begin, cps[i].end});
        ++i;
    }
    encode_plain(plain, out);
    return out;
}

void WordPieceTokenizer::encode_plain(const std::vector<Char>& chars, std::vector<TokenSpan>& out) const {
    std::vector<Char> word, processed, piece;
    std::u32string mapped, stripped;
    const auto finish_word = [&] {
        if (word.empty()) return;
        // Step 4: lower-case and strip accents, character by character (each result keeps the
        // bytes of the character it came from), then split off punctuation.
        processed.clear();
        for (const Char& c : word) {
            mapped.clear();
            if (options_.lower_case) append_lower(mapped, c.value);
            else mapped += c.value;
            for (char32_t m : mapped) {
                stripped.clear();
                if (options_.strip_accents) append_stripped(stripped, m);
                else stripped += m;
                for (char32_t s : stripped) processed.push_back({s, c.begin, c.end});
            }
        }
        piece.clear();
        for (const Char& c : processed) {
            if (is_bert_punctuation(c.value)) {
                wordpiece(piece, out);
                piece.clear();
                wordpiece({c}, out);
            } else {
                piece.push_back(c);
            }
        }
        wordpiece(piece, out);
        word.clear();
    };
    for (const Char& c : chars) {
        // Step 2: drop NUL, U+FFFD and control characters; whitespace separates words.
        if (c.value == 0 || c.value == 0xFFFD || is_bert_control(c.value)) continue;
        if (is_bert_whitespace(c.value)) {
            finish_word();
            continue;
        }
        // Step 3: a CJK ideograph is a word of its own.
        if (options_.tokenize_chinese_chars && is_cjk_ideograph(c.value)) {
            finish_word();
            word.push_back(c);
            finish_word();
            continue;
        }
        word.push_back(c);
    }
    finish_word();
}

void WordPieceTokenizer::wordpiece(const std::vector<Char>& word, std::vector<TokenSpan>& out) const {
    if (word.empty()) return;
    if (word.size() > options_.max_chars_per_word) {
        out.push_back({unk_, word.front().begin, word.back().end});
        return;
    }
    const std::size_t first = out.size();
    std::string candidate;
    for (std::size_t start = 0; start < word.size();) {
        std::int32_t found = -1;
        std::size_t end = word.size();
        for (; end > start; --end) {
            candidate = start > 0 ? "##" : "";
            for (std::size_t k = start; k < end; ++k) append_utf8(candidate, word[k].value);
            const auto it = ids_.find(candidate);
            if (it != ids_.end()) {
                found = it->second;
                break;
            }
        }
        if (found < 0) {  // a part no token covers: the whole word is unknown
            out.resize(first);
            out.push_back({unk_, word.front().begin, word.back().end});
            return;
        }
        out.push_back({found, word[start].begin, word[end - 1].end});
        start = end;
    }
}

std::string WordPieceTokenizer::decode(const std::vector<std::int32_t>& ids) const {
    std::string out;
    char32_t last = 0;  // the last character written
    for (std::int32_t id : ids) {
        const std::string token = token_text(id);
        const bool continuation = token.size() > 2 && token.compare(0, 2, "##") == 0;
        const std::string_view piece = continuation ? std::string_view(token).substr(2) : std::string_view(token);
        const std::vector<CodePoint> cps = decode_utf8(piece, "WordPieceTokenizer::decode");
        if (!out.empty() && !continuation && !(cps.empty() || is_wide(last) || is_wide(cps.front().value))) out += ' ';
        out += piece;
        if (!cps.empty()) last = cps.back().value;
    }
    // clean_up_tokenization: no space before these (the text was split at them).
    for (const auto& [from, to] : {std::pair<const char*, const char*>{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","},
                                   {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"},
                                   {" 're", "'re"}}) {
        replace_all(out, from, to);
    }
    return out;
}

std::string WordPieceTokenizer::token_text(std::int32_t id) const {
    check_id(id, "WordPieceTokenizer");
    return tokens_[id];
}

TokenizerFiles WordPieceTokenizer::files() const {
    TokenizerFiles files{{"vocab.txt", vocab_txt_}};
    if (!config_json_.empty()) files["tokenizer_config.json"] = config_json_;
    return files;
}

}  // namespace attnlab::text
