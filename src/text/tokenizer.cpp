#include "attnlab/text/tokenizer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/text/byte_bpe.hpp"
#include "attnlab/text/char_vocab.hpp"
#include "attnlab/text/unicode.hpp"
#include "attnlab/text/wordpiece.hpp"

namespace attnlab::text {

namespace {

constexpr const char* kFormat = "attnlab-tokenizer";
constexpr int kVersion = 1;
// A tokenizer's files are vocabularies: GPT-2's are 1.5 MB together. Anything far larger is
// refused before it is read.
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{256} << 20;

std::unique_ptr<Tokenizer> make_byte_bpe(const TokenizerFiles& files) {
    return std::make_unique<ByteBpeTokenizer>(ByteBpeTokenizer::from_files(files.at("vocab.json"), files.at("merges.txt")));
}

std::unique_ptr<Tokenizer> make_wordpiece(const TokenizerFiles& files) {
    const auto config = files.find("tokenizer_config.json");
    return std::make_unique<WordPieceTokenizer>(
        WordPieceTokenizer::from_files(files.at("vocab.txt"), config == files.end() ? std::string() : config->second));
}

std::unique_ptr<Tokenizer> make_char(const TokenizerFiles& files) {
    const auto script = files.find("script.txt");
    return std::make_unique<CharTokenizer>(
        CharTokenizer::from_files(files.at("chars.json"), script == files.end() ? std::string() : script->second));
}

std::string read_text_file(const std::filesystem::path& path) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxFileBytes) {
        fail<IoError>("load_tokenizer_directory: '", path.string(), "' has ", size, " bytes, beyond the limit of ",
                      kMaxFileBytes, " for a tokenizer file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) fail<IoError>("load_tokenizer_directory: cannot open '", path.string(), "' (", std::strerror(errno), ")");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail<IoError>("load_tokenizer_directory: error while reading '", path.string(), "'");
    return text;
}

std::string kind_names() {
    std::string names;
    for (const TokenizerKind& k : tokenizer_kinds()) names += (names.empty() ? "" : ", ") + std::string(k.name);
    return names;
}

}  // namespace

std::vector<std::int32_t> Tokenizer::encode(std::string_view text) const {
    std::vector<std::int32_t> ids;
    for (const TokenSpan& s : encode_spans(text)) ids.push_back(s.id);
    return ids;
}

std::string Tokenizer::decode_like(const std::vector<std::int32_t>& ids, std::string_view) const {
    return decode(ids);
}

void Tokenizer::check_id(std::int32_t id, const char* where) const {
    if (id < 0 || static_cast<std::size_t>(id) >= vocab_size()) {
        fail<ValueError>(where, ": token id ", id, " is outside the vocabulary of ", vocab_size(), " tokens");
    }
}

std::vector<std::uint8_t> Tokenizer::to_bytes() const {
    nlohmann::json files = nlohmann::json::object();
    for (const auto& [name, text] : this->files()) files[name] = text;
    const nlohmann::json doc = {{"format", kFormat}, {"version", kVersion}, {"kind", std::string(kind())}, {"files", files}};
    const std::string text = doc.dump();
    return std::vector<std::uint8_t>(text.begin(), text.end());
}

// The kinds attnlab knows, in the order a directory is tried. A new kind is one more entry.
const std::vector<TokenizerKind>& tokenizer_kinds() {
    static const std::vector<TokenizerKind> kinds = {
        {"byte_bpe", "GPT-2's byte-level BPE (vocab.json + merges.txt, or encoder.json + vocab.bpe)",
         {{"vocab.json", "merges.txt"}, {"encoder.json", "vocab.bpe"}}, {}, &make_byte_bpe},
        {"wordpiece", "BERT's WordPiece with character-level CJK (vocab.txt [+ tokenizer_config.json])",
         {{"vocab.txt"}}, {"tokenizer_config.json"}, &make_wordpiece},
        {"char", "one character a token, most frequent first, with script conversion (chars.json [+ script.txt])",
         {{"chars.json"}}, {"script.txt"}, &make_char},
    };
    return kinds;
}

const TokenizerKind& tokenizer_kind(std::string_view name) {
    for (const TokenizerKind& k : tokenizer_kinds()) {
        if (name == k.name) return k;
    }
    fail<ConfigError>("tokenizer_kind: unknown tokenizer kind '", name, "' (valid: ", kind_names(), ")");
}

std::unique_ptr<Tokenizer> tokenizer_from_files(std::string_view kind, const TokenizerFiles& files) {
    const TokenizerKind& k = tokenizer_kind(kind);
    for (const std::string& name : k.layouts.front()) {
        if (files.count(name) == 0) fail<IoError>("tokenizer_from_files: a ", k.name, " tokenizer needs '", name, "'");
    }
    for (const auto& [name, text] : files) {
        (void)text;
        const auto& required = k.layouts.front();
        if (std::find(required.begin(), required.end(), name) == required.end() &&
            std::find(k.optional.begin(), k.optional.end(), name) == k.optional.end()) {
            fail<IoError>("tokenizer_from_files: a ", k.name, " tokenizer has no file '", name, "'");
        }
    }
    return k.create(files);
}

namespace {
// "vocab.json + merges.txt (byte_bpe); ...": what each kind needs.
std::string expected_layouts() {
    std::string wanted;
    for (const TokenizerKind& kind : tokenizer_kinds()) {
        for (const std::vector<std::string>& layout : kind.layouts) {
            std::string names;
            for (const std::string& n : layout) names += (names.empty() ? "" : " + ") + n;
            wanted += (wanted.empty() ? "" : "; ") + names + " (" + kind.name + ")";
        }
    }
    return wanted;
}
}  // namespace

namespace {
// The first kind with a layout whose files are all in `named`, and that layout; null if none.
const TokenizerKind* matching_kind(const TokenizerFiles& named, const std::vector<std::string>** layout_out) {
    for (const TokenizerKind& kind : tokenizer_kinds()) {
        for (const std::vector<std::string>& layout : kind.layouts) {
            bool complete = true;
            for (const std::string& name : layout) complete = complete && named.count(name) != 0;
            if (!complete) continue;
            *layout_out = &layout;
            return &kind;
        }
    }
    return nullptr;
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "no files" : out;
}
}  // namespace

std::unique_ptr<Tokenizer> tokenizer_from_named_files(const TokenizerFiles& named) {
    const std::vector<std::string>* layout = nullptr;
    const TokenizerKind* kind = matching_kind(named, &layout);
    if (kind == nullptr) {
        std::vector<std::string> present;
        for (const auto& entry : named) present.push_back(entry.first);
        fail<IoError>("tokenizer_from_named_files: no tokenizer in the files given (", joined(present), "); expected ",
                      expected_layouts());
    }
    TokenizerFiles files;
    for (std::size_t i = 0; i < layout->size(); ++i) files[kind->layouts.front()[i]] = named.at((*layout)[i]);
    for (const std::string& name : kind->optional) {
        if (named.count(name)) files[name] = named.at(name);
    }
    return kind->create(files);
}

std::unique_ptr<Tokenizer> load_tokenizer_directory(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) fail<IoError>("load_tokenizer_directory: '", dir, "' is not a directory");
    std::vector<std::string> present;
    for (const auto& entry : fs::directory_iterator(dir, ec)) present.push_back(entry.path().filename().string());
    std::sort(present.begin(), present.end());
    // The files some kind reads, by their names there.
    TokenizerFiles named;
    for (const TokenizerKind& kind : tokenizer_kinds()) {
        std::vector<std::string> names = kind.optional;
        for (const auto& layout : kind.layouts) names.insert(names.end(), layout.begin(), layout.end());
        for (const std::string& name : names) {
            if (named.count(name) == 0 && fs::is_regular_file(fs::path(dir) / name, ec)) {
                named[name] = read_text_file(fs::path(dir) / name);
            }
        }
    }
    const std::vector<std::string>* layout = nullptr;
    if (matching_kind(named, &layout) == nullptr) {
        fail<IoError>("load_tokenizer_directory: '", dir, "' holds no tokenizer: it has ", joined(present), "; expected ",
                      expected_layouts());
    }
    try {
        return tokenizer_from_named_files(named);
    } catch (const IoError& e) {
        fail<IoError>("load_tokenizer_directory: '", dir, "': ", e.what());
    }
}

std::unique_ptr<Tokenizer> tokenizer_from_bytes(const std::uint8_t* data, std::size_t size) {
    constexpr const char* where = "tokenizer_from_bytes";
    if (data == nullptr && size != 0) fail<IoError>(where, ": null data with size ", size);
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(data, data + size);
    } catch (const nlohmann::json::exception& e) {
        fail<IoError>(where, ": not a serialised tokenizer (", e.what(), ")");
    }
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat) {
        fail<IoError>(where, ": not a serialised tokenizer (\"format\" must be \"", kFormat, "\")");
    }
    if (!doc.contains("version") || doc["version"] != kVersion) {
        fail<IoError>(where, ": tokenizer version ", doc.contains("version") ? doc["version"].dump() : "missing",
                      " is not ", kVersion);
    }
    if (!doc.contains("kind") || !doc["kind"].is_string()) fail<IoError>(where, ": \"kind\" must be a string");
    if (!doc.contains("files") || !doc["files"].is_object()) fail<IoError>(where, ": \"files\" must be an object");
    TokenizerFiles files;
    for (const auto& [name, text] : doc["files"].items()) {
        if (!text.is_string()) fail<IoError>(where, ": file '", name, "' must be a string");
        files[name] = text.get<std::string>();
    }
    const std::string kind = doc["kind"].get<std::string>();
    try {
        return tokenizer_from_files(kind, files);
    } catch (const ConfigError& e) {
        fail<IoError>(where, ": ", e.what());
    }
}

}  // namespace attnlab::text
