#include "attnlab/text/char_vocab.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/text/unicode.hpp"

namespace attnlab::text {

namespace {
constexpr const char* kSpecialNames[] = {"<unk>", "<bos>", "<eos>"};
constexpr const char* kTrainedOn = "trained_on ";
}  // namespace

double CharCounts::coverage(std::size_t n) const {
    if (total == 0) return 1.0;
    std::size_t covered = 0;
    for (std::size_t i = 0; i < std::min(n, by_count.size()); ++i) covered += by_count[i].second;
    return static_cast<double>(covered) / static_cast<double>(total);
}

CharCounts count_characters(const std::vector<std::string>& documents) {
    std::unordered_map<char32_t, std::size_t> counts;
    CharCounts c;
    for (const std::string& d : documents) {
        for (const CodePoint& cp : decode_utf8(d, "count_characters")) {
            ++counts[cp.value];
            ++c.total;
        }
    }
    c.by_count.assign(counts.begin(), counts.end());
    std::sort(c.by_count.begin(), c.by_count.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    return c;
}

void CharTokenizer::index() {
    ids_.clear();
    for (std::size_t id = kSpecials; id < tokens_.size(); ++id) {
        const std::vector<CodePoint> cps = decode_utf8(tokens_[id], "CharTokenizer");
        ids_[cps[0].value] = static_cast<std::int32_t>(id);
    }
}

CharTokenizer CharTokenizer::build(const std::vector<std::string>& documents, std::size_t chars,
                                   const ScriptConverter* script, Script trained_on) {
    if (chars == 0 || chars > kMaxChars) {
        fail<ConfigError>("CharTokenizer::build: the number of characters must be in 1 .. ", kMaxChars, ", got ", chars);
    }
    const CharCounts counts = count_characters(documents);
    CharTokenizer t;
    t.tokens_.assign(std::begin(kSpecialNames), std::end(kSpecialNames));
    std::set<char32_t> kept;
    for (std::size_t i = 0; i < std::min(chars, counts.by_count.size()); ++i) {
        std::string s;
        append_utf8(s, counts.by_count[i].first);
        t.tokens_.push_back(s);
        kept.insert(counts.by_count[i].first);
    }
    if (script) t.script_ = trained_on == Script::simplified ? script->restricted_to(kept) : *script;
    t.trained_on_ = trained_on;
    t.index();
    return t;
}

CharTokenizer CharTokenizer::from_files(const std::string& chars_json, const std::string& script_txt) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(chars_json);
    } catch (const nlohmann::json::exception& e) {
        fail<IoError>("chars.json: not valid JSON (", e.what(), ")");
    }
    if (!doc.is_array() || doc.size() < kSpecials) {
        fail<IoError>("chars.json: must be a JSON array starting with <unk>, <bos>, <eos>");
    }
    CharTokenizer t;
    std::set<char32_t> seen;
    for (std::size_t id = 0; id < doc.size(); ++id) {
        if (!doc[id].is_string()) fail<IoError>("chars.json: entry ", id, " is not a string");
        const std::string s = doc[id].get<std::string>();
        if (id < kSpecials) {
            if (s != kSpecialNames[id]) fail<IoError>("chars.json: entry ", id, " must be ", kSpecialNames[id], ", got '", s, "'");
        } else {
            if (!is_valid_utf8(s)) fail<IoError>("chars.json: entry ", id, " is not valid UTF-8");
            const std::vector<CodePoint> cps = decode_utf8(s, "chars.json");
            if (cps.size() != 1) fail<IoError>("chars.json: entry ", id, " must be one character, got '", s, "'");
            if (!seen.insert(cps[0].value).second) fail<IoError>("chars.json: entry ", id, " ('", s, "') repeats an earlier one");
        }
        t.tokens_.push_back(s);
    }
    if (!script_txt.empty()) {
        const std::size_t eol = script_txt.find('\n');
        const std::string first = script_txt.substr(0, eol);
        if (first.rfind(kTrainedOn, 0) != 0) fail<IoError>("script.txt: the first line must be 'trained_on simplified|traditional'");
        try {
            t.trained_on_ = parse_script(first.substr(std::string(kTrainedOn).size()));
        } catch (const ConfigError& e) {
            fail<IoError>("script.txt: ", e.what());
        }
        t.script_ = ScriptConverter::from_text(eol == std::string::npos ? "" : script_txt.substr(eol + 1), "script.txt");
    }
    t.index();
    return t;
}

std::int32_t CharTokenizer::id_of(char32_t c) const {
    if (script_) c = trained_on_ == Script::simplified ? script_->to_simplified(c) : script_->to_traditional(c);
    const auto it = ids_.find(c);
    return it == ids_.end() ? kUnk : it->second;
}

std::vector<TokenSpan> CharTokenizer::encode_spans(std::string_view text) const {
    std::vector<TokenSpan> out;
    for (const CodePoint& cp : decode_utf8(text, "CharTokenizer::encode")) out.push_back({id_of(cp.value), cp.begin, cp.end});
    return out;
}

std::string CharTokenizer::decode(const std::vector<std::int32_t>& ids) const {
    std::string out;
    for (std::int32_t id : ids) {
        check_id(id, "CharTokenizer::decode");
        if (id == kUnk) out += "\xEF\xBF\xBD";  // U+FFFD
        else if (id >= static_cast<std::int32_t>(kSpecials)) out += tokens_[static_cast<std::size_t>(id)];
    }
    return out;
}

std::string CharTokenizer::decode_in(const std::vector<std::int32_t>& ids, Script script) const {
    const std::string text = decode(ids);
    if (!script_ || script == trained_on_) return text;
    return script_->to_script(text, script);
}

std::string CharTokenizer::decode_like(const std::vector<std::int32_t>& ids, std::string_view like) const {
    return script_ ? decode_in(ids, script_->detect(like)) : decode(ids);
}

std::string CharTokenizer::token_text(std::int32_t id) const {
    check_id(id, "CharTokenizer::token_text");
    return tokens_[static_cast<std::size_t>(id)];
}

TokenizerFiles CharTokenizer::files() const {
    TokenizerFiles f{{"chars.json", nlohmann::json(tokens_).dump()}};
    if (script_) f["script.txt"] = std::string(kTrainedOn) + script_name(trained_on_) + "\n" + script_->text();
    return f;
}

}  // namespace attnlab::text
