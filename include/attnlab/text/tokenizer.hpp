// attnlab/text/tokenizer.hpp: text <-> token ids, for models that read and write text.
//
// What it is for: one interface over the tokenizers attnlab knows (their kinds are listed in
// tokenizer_kinds()): GPT-2's byte-level BPE from any vocab + merges pair (text/byte_bpe.hpp)
// and BERT's WordPiece from a vocab.txt (text/wordpiece.hpp, the tokenizer of Chinese GPT-2
// checkpoints). A tokenizer is immutable once made: it encodes text into ids (with the bytes of
// the text each id covers, for showing token boundaries), decodes ids into text, and gives the
// text of one token. It loads from a directory of its usual files, and serialises to bytes that
// a checkpoint carries (Model::save stores them, Model::load restores them), so a model trained
// or opened with a tokenizer keeps it. Not for: training vocabularies, special-token templates
// ([CLS] ... [SEP], <|endoftext|>: encode adds none), or padding and batching.
//
//   auto tok = attnlab::text::load_tokenizer_directory("gpt2/");  // vocab.json + merges.txt
//   std::vector<std::int32_t> ids = tok->encode("Hello world");    // {15496, 995}
//   std::string text = tok->decode(ids);                           // "Hello world"
//   std::vector<std::uint8_t> bytes = tok->to_bytes();
//   auto same = attnlab::text::tokenizer_from_bytes(bytes);        // equal ids for every text
//
// Adding a kind: one class deriving from Tokenizer (its files() are what to_bytes() stores and
// what its directory holds), plus one entry in tokenizer_kinds() (src/text/tokenizer.cpp)
// naming its files and its factory. Loading a directory picks the first kind, in that list's
// order, whose files are all present.
//
// Errors: unreadable or malformed files are IoError naming the file and the line or key; text
// that is not valid UTF-8 and ids outside the vocabulary are ValueError naming the byte offset
// or the id and the vocabulary size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab::text {

// A tokenizer's files by name ("vocab.json" -> its text), as its directory holds them.
using TokenizerFiles = std::map<std::string, std::string>;

// One token of an encoded text and the bytes [begin, end) of the text it stands for. The spans
// of one encode() are in order and do not overlap; bytes a tokenizer drops (BERT's whitespace
// and control characters) belong to no span.
struct TokenSpan {
    std::int32_t id;
    std::size_t begin, end;
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // The kind's name, as in tokenizer_kinds(): "byte_bpe", "wordpiece", ...
    virtual std::string_view kind() const = 0;
    // V: ids are 0 .. V - 1.
    virtual std::size_t vocab_size() const = 0;
    // The ids of UTF-8 text with the bytes each covers (ValueError for invalid UTF-8).
    virtual std::vector<TokenSpan> encode_spans(std::string_view text) const = 0;
    // The ids alone.
    std::vector<std::int32_t> encode(std::string_view text) const;
    // The text of a sequence of ids, always valid UTF-8 (ValueError for an id outside 0 .. V - 1).
    virtual std::string decode(const std::vector<std::int32_t>& ids) const = 0;
    // What one token stands for, as bytes: a byte-level BPE token may hold part of a UTF-8
    // character (decode() of a whole sequence joins them). ValueError for an id outside 0 .. V - 1.
    virtual std::string token_text(std::int32_t id) const = 0;
    // The files that define this tokenizer, by their canonical names (its kind's layouts[0] and
    // optional files); tokenizer_from_files(kind(), files()) makes an equal one.
    virtual TokenizerFiles files() const = 0;

    // The ids that open and close a document, for a tokenizer whose models were trained with
    // them (the char vocabulary's <bos> and <eos>); encode() adds neither. None for GPT-2's and
    // BERT's files, whose special tokens a checkpoint's own template decides. A continuation of
    // a prompt starts from begin_id() + encode(prompt) and stops at end_id().
    virtual std::optional<std::int32_t> begin_id() const { return std::nullopt; }
    virtual std::optional<std::int32_t> end_id() const { return std::nullopt; }
    // decode() written in the script `like` (a prompt) is in: a tokenizer with a script
    // converter answers a traditional prompt in traditional characters; the others decode().
    virtual std::string decode_like(const std::vector<std::int32_t>& ids, std::string_view like) const;

    // A self-describing serialisation (UTF-8 JSON: {"format": "attnlab-tokenizer", "version": 1,
    // "kind": ..., "files": {...}}), read back by tokenizer_from_bytes.
    std::vector<std::uint8_t> to_bytes() const;

protected:
    // ValueError "<where>: token id <id> is outside the vocabulary of <V> tokens" unless 0 <= id < V.
    void check_id(std::int32_t id, const char* where) const;
};

// One kind of tokenizer: the names of its files in a directory and how to make it from them.
struct TokenizerKind {
    const char* name;     // "byte_bpe"
    const char* summary;  // one line, for messages and help texts
    // The files it needs, under each set of names a directory may use: layouts[0] holds the
    // canonical names, a later layout other names for the same files in the same order (GPT-2's
    // encoder.json + vocab.bpe for vocab.json + merges.txt).
    std::vector<std::vector<std::string>> layouts;
    // Files read when present (e.g. tokenizer_config.json).
    std::vector<std::string> optional;
    // Makes the tokenizer from its files, keyed by canonical name; IoError naming the file for
    // bad contents.
    std::unique_ptr<Tokenizer> (*create)(const TokenizerFiles& files);
};

// Every kind, in the order load_tokenizer_directory tries them.
const std::vector<TokenizerKind>& tokenizer_kinds();
// The kind called name, or ConfigError listing the kinds.
const TokenizerKind& tokenizer_kind(std::string_view name);

// A tokenizer of the named kind from its files by canonical name.
std::unique_ptr<Tokenizer> tokenizer_from_files(std::string_view kind, const TokenizerFiles& files);
// The tokenizer a set of files makes, keyed by their names in a directory (either name of
// GPT-2's pair; other files are ignored): the first kind one of whose layouts is all there.
// IoError naming the files given and what each kind needs, when none fits.
std::unique_ptr<Tokenizer> tokenizer_from_named_files(const TokenizerFiles& files);
// The same for the files of a directory. IoError naming the directory, the files it holds and what each kind
// needs, when none fits.
std::unique_ptr<Tokenizer> load_tokenizer_directory(const std::string& dir);
// Inverse of Tokenizer::to_bytes; IoError for anything else.
std::unique_ptr<Tokenizer> tokenizer_from_bytes(const std::uint8_t* data, std::size_t size);
inline std::unique_ptr<Tokenizer> tokenizer_from_bytes(const std::vector<std::uint8_t>& bytes) {
    return tokenizer_from_bytes(bytes.data(), bytes.size());
}

}  // namespace attnlab::text
