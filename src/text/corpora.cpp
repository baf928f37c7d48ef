#include "attnlab/text/corpora.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/core/input_files.hpp"
#include "attnlab/text/unicode.hpp"

namespace attnlab::text {

std::string read_whole_file(const std::string& path, const char* what) {
    if (const std::optional<std::vector<std::uint8_t>> given = provided_input_file(path)) {
        return std::string(given->begin(), given->end());
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) fail<IoError>(what, ": cannot open '", path, "' (", std::strerror(errno), ")");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail<IoError>(what, ": error while reading '", path, "'");
    return text;
}

// ---------------------------------------------------------------------------------------------
// Tang poems

std::optional<std::vector<std::string>> regulated_lines(const std::vector<std::string>& paragraphs) {
    static const std::u32string kComma = U"，", kStop = U"。";
    std::vector<std::string> lines;
    std::size_t length = 0;
    for (const std::string& p : paragraphs) {
        if (!is_valid_utf8(p)) return std::nullopt;
        std::string line;
        std::size_t chars = 0;
        for (const CodePoint& cp : decode_utf8(p, "regulated_lines")) {
            append_utf8(line, cp.value);
            if (cp.value != kComma[0] && cp.value != kStop[0]) {
                // Only ideographs make a line: any other mark (□, brackets, notes) disqualifies it.
                if (!is_cjk_ideograph(cp.value)) return std::nullopt;
                ++chars;
                continue;
            }
            const char32_t expected = lines.size() % 2 == 0 ? kComma[0] : kStop[0];
            if (cp.value != expected || chars == 0) return std::nullopt;
            if (length == 0) length = chars;
            if (chars != length) return std::nullopt;
            lines.push_back(std::move(line));
            line.clear();
            chars = 0;
        }
        if (!line.empty() || lines.size() % 2 != 0) return std::nullopt;  // a paragraph holds whole couplets
    }
    if ((lines.size() != 4 && lines.size() != 8) || (length != 5 && length != 7)) return std::nullopt;
    return lines;
}

namespace {
// N of "poet.tang.N.json", or nothing for another name.
std::optional<long> tang_file_number(const std::string& name) {
    const std::string prefix = kTangFilePrefix, suffix = kTangFileSuffix;
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
        return std::nullopt;
    }
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    return std::stol(digits);
}

void add_poems(const std::string& path, const ScriptConverter* script, std::vector<Poem>& out) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(read_whole_file(path, "load_tang_poems"));
    } catch (const nlohmann::json::exception& e) {
        fail<IoError>("load_tang_poems: '", path, "' is not valid JSON (", e.what(), ")");
    }
    if (!doc.is_array()) fail<IoError>("load_tang_poems: '", path, "' must hold a JSON array of poems");
    for (const nlohmann::json& p : doc) {
        if (!p.is_object() || !p.contains("paragraphs") || !p["paragraphs"].is_array() || !p.contains("id")) {
            fail<IoError>("load_tang_poems: '", path, "' has a poem without id or paragraphs");
        }
        std::vector<std::string> paragraphs;
        for (const nlohmann::json& para : p["paragraphs"]) {
            if (para.is_string()) paragraphs.push_back(para.get<std::string>());
        }
        const std::optional<std::vector<std::string>> lines = regulated_lines(paragraphs);
        if (!lines) continue;
        Poem poem;
        poem.id = p["id"].get<std::string>();
        poem.title = p.value("title", "");
        poem.author = p.value("author", "");
        poem.lines = lines->size();
        poem.line_length = decode_utf8((*lines)[0], "load_tang_poems").size() - 1;
        for (std::size_t i = 0; i < lines->size(); ++i) poem.traditional += (*lines)[i] + (i % 2 ? "\n" : "");
        if (script) poem.simplified = script->to_simplified(poem.traditional);
        out.push_back(std::move(poem));
    }
}
}  // namespace

std::vector<Poem> load_tang_poems(const std::string& dir, const ScriptConverter* script) {
    // The files provided under dir (core/input_files.hpp) and those on disk, each once.
    std::vector<std::string> names = provided_input_names(dir);
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) names.push_back(entry.path().filename().string());
    if (ec && names.empty()) {
        fail<IoError>("load_tang_poems: cannot read the directory '", dir, "' (", ec.message(), "); run scripts/fetch_data.sh");
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::vector<std::pair<long, std::string>> files;
    for (const std::string& name : names) {
        if (const auto n = tang_file_number(name)) files.emplace_back(*n, dir + "/" + name);
    }
    if (files.empty()) fail<IoError>("load_tang_poems: '", dir, "' has no poet.tang.<N>.json files; run scripts/fetch_data.sh");
    std::sort(files.begin(), files.end());
    std::vector<Poem> poems;
    for (const auto& [n, path] : files) add_poems(path, script, poems);
    return poems;
}

// ---------------------------------------------------------------------------------------------
// Brown

namespace {
bool no_space_before(const std::string& w) {
    static const char* const kWords[] = {",", ".", ";", ":", "?", "!", ")", "''", "'"};
    return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}
bool no_space_after(const std::string& w) { return w == "(" || w == "``"; }
}  // namespace

BrownDocument parse_brown(const std::string& id, std::string_view tagged) {
    BrownDocument doc;
    doc.id = id;
    bool line_has_words = false, glue_next = true;
    std::size_t pos = 0;
    while (pos < tagged.size()) {
        const char c = tagged[pos];
        if (c == '\n') {
            if (line_has_words) {
                doc.text += '\n';
                glue_next = true;
            }
            line_has_words = false;
            ++pos;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            ++pos;
            continue;
        }
        std::size_t end = pos;
        while (end < tagged.size() && tagged[end] != ' ' && tagged[end] != '\t' && tagged[end] != '\n' && tagged[end] != '\r') ++end;
        const std::string_view token = tagged.substr(pos, end - pos);
        pos = end;
        const std::size_t slash = token.rfind('/');
        if (slash == std::string_view::npos || slash == 0 || slash + 1 == token.size()) {
            fail<IoError>("parse_brown: ", id, ": the token '", token, "' is not word/tag");
        }
        std::string word(token.substr(0, slash));
        const std::string tag(token.substr(slash + 1));
        const bool glue = glue_next || no_space_before(word);
        glue_next = no_space_after(word);
        if (word == "``" || word == "''") word = "\"";
        if (!glue) doc.text += ' ';
        doc.words.push_back({doc.text.size(), doc.text.size() + word.size(), tag});
        doc.text += word;
        line_has_words = true;
    }
    if (!doc.text.empty() && doc.text.back() != '\n') doc.text += '\n';
    if (!is_valid_utf8(doc.text)) fail<IoError>("parse_brown: ", id, " is not valid UTF-8");
    return doc;
}

std::vector<BrownDocument> load_brown(const std::string& dir) {
    const std::filesystem::path root(dir);
    const std::string cats = read_whole_file((root / "cats.txt").string(), "load_brown (run scripts/fetch_data.sh)");
    std::vector<BrownDocument> docs;
    std::size_t pos = 0;
    while (pos < cats.size()) {
        std::size_t eol = cats.find('\n', pos);
        if (eol == std::string::npos) eol = cats.size();
        const std::string line = cats.substr(pos, eol - pos);
        pos = eol + 1;
        if (line.empty()) continue;
        const std::size_t space = line.find(' ');
        if (space == std::string::npos) fail<IoError>("load_brown: cats.txt line '", line, "' is not 'file category'");
        const std::string id = line.substr(0, space);
        BrownDocument doc = parse_brown(id, read_whole_file((root / id).string(), "load_brown"));
        doc.category = line.substr(space + 1);
        docs.push_back(std::move(doc));
    }
    if (docs.empty()) fail<IoError>("load_brown: '", dir, "/cats.txt' lists no files");
    return docs;
}

// ---------------------------------------------------------------------------------------------
// A user's file

std::vector<std::string> split_text_documents(const std::string& text, const std::string& where) {
    decode_utf8(text, where.c_str());  // ValueError naming the byte
    std::vector<std::string> docs;
    std::string current;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) eol = text.size();
        std::string line = text.substr(pos, eol - pos);
        pos = eol + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) {
            if (!current.empty()) docs.push_back(std::move(current));
            current.clear();
            continue;
        }
        current += line + "\n";
    }
    if (!current.empty()) docs.push_back(std::move(current));
    if (docs.empty()) fail<ValueError>(where, " has no text (", text.size(), " bytes, all blank)");
    return docs;
}

std::vector<std::string> load_text_documents(const std::string& path) {
    return split_text_documents(read_whole_file(path, "load_text_documents"), "load_text_documents: '" + path + "'");
}

std::set<std::string> read_id_list(const std::string& path) {
    const std::string text = read_whole_file(path, "read_id_list");
    std::set<std::string> ids;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) eol = text.size();
        std::string line = text.substr(pos, eol - pos);
        pos = eol + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        ids.insert(line);
    }
    if (ids.empty()) fail<IoError>("read_id_list: '", path, "' lists no ids");
    return ids;
}

}  // namespace attnlab::text
