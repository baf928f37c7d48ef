// The JavaScript `Tokenizer` class (tokenizer.hpp): text <-> ids with attnlab's tokenizers.
#include "tokenizer.hpp"

#include <string>
#include <vector>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/text/tokenizer.hpp"
#include "attnlab/text/unicode.hpp"
#include "convert.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

std::string text_from_js(const val& text, const char* where) {
    if (!text.isString()) fail<ConfigError>(where, ": the text must be a string, got ", text.typeOf().as<std::string>());
    return text.as<std::string>();
}

// A file's contents: a string, or its UTF-8 bytes.
std::string file_from_js(const val& v, const char* where, const std::string& name) {
    if (v.isString()) return v.as<std::string>();
    const std::vector<std::uint8_t> bytes = bytes_from_js(v, where, ("file '" + name + "'").c_str());
    return std::string(bytes.begin(), bytes.end());
}

// For each byte offset b of UTF-8 text (and its end): the UTF-16 offset of the character b is
// in (first) and of the one after it unless b starts a character (second). A byte-level token
// may start or end inside a character; its span then takes the whole character.
struct Utf16Offsets {
    std::vector<std::size_t> down, up;
};
Utf16Offsets utf16_offsets(const std::string& text) {
    Utf16Offsets at{std::vector<std::size_t>(text.size() + 1), std::vector<std::size_t>(text.size() + 1)};
    std::size_t units = 0;
    for (const text::CodePoint& cp : text::decode_utf8(text, "Tokenizer")) {
        const std::size_t next = units + (cp.value >= 0x10000 ? 2 : 1);
        for (std::size_t b = cp.begin; b < cp.end; ++b) {
            at.down[b] = units;
            at.up[b] = b == cp.begin ? units : next;
        }
        units = next;
    }
    at.down[text.size()] = at.up[text.size()] = units;
    return at;
}

}  // namespace

val encode_to_js(const text::Tokenizer& tokenizer, const val& text, const char* where) {
    const std::vector<std::int32_t> ids = tokenizer.encode(text_from_js(text, where));
    return int32_array_to_js(ids.data(), ids.size());
}

val tokens_to_js(const text::Tokenizer& tokenizer, const val& text, const char* where) {
    const std::string utf8 = text_from_js(text, where);
    const std::vector<text::TokenSpan> spans = tokenizer.encode_spans(utf8);
    const Utf16Offsets at = utf16_offsets(utf8);
    val out = val::array();
    for (const text::TokenSpan& s : spans) {
        val token = val::object();
        token.set("id", s.id);
        token.set("text", text::valid_utf8(tokenizer.token_text(s.id)));
        token.set("start", at.down[s.begin]);
        token.set("end", at.up[s.end]);
        out.call<void>("push", token);
    }
    return out;
}

val decode_to_js(const text::Tokenizer& tokenizer, const val& ids, const char* where) {
    bool batched = false;
    const Index2 tokens = tokens_from_js(ids, where, "ids", &batched);
    if (batched && tokens.shape(0) != 1) fail<ShapeError>(where, ": ids must be one sequence, got ", tokens.shape(0), " rows");
    return val(tokenizer.decode(std::vector<std::int32_t>(tokens.begin(), tokens.end())));
}

TokenizerBinding TokenizerBinding::from_files(val files) {
    return guarded("Tokenizer.fromFiles", [&] {
        constexpr const char* where = "Tokenizer.fromFiles";
        if (files.isUndefined() || files.isNull() || files.typeOf().as<std::string>() != "object" || files.isArray()) {
            fail<ConfigError>(where, ": pass the tokenizer's files as { name: contents }, e.g. { 'vocab.json': ..., "
                              "'merges.txt': ... }");
        }
        text::TokenizerFiles named;
        const val keys = val::global("Object").call<val>("keys", files);
        for (std::size_t i = 0, n = keys["length"].as<std::size_t>(); i < n; ++i) {
            const std::string name = keys[i].as<std::string>();
            named[name] = file_from_js(files[name], where, name);
        }
        return TokenizerBinding(text::tokenizer_from_named_files(named));
    }, files);
}

TokenizerBinding TokenizerBinding::from_bytes(val bytes) {
    return guarded("Tokenizer.fromBytes", [&] {
        const std::vector<std::uint8_t> data = bytes_from_js(bytes, "Tokenizer.fromBytes", "the serialised tokenizer");
        return TokenizerBinding(text::tokenizer_from_bytes(data));
    }, bytes);
}

val TokenizerBinding::kind() const {
    return guarded("Tokenizer.kind", [&] { return val(std::string(tokenizer_->kind())); });
}
val TokenizerBinding::vocab_size() const {
    return guarded("Tokenizer.vocabSize", [&] { return val(tokenizer_->vocab_size()); });
}
val TokenizerBinding::encode(val text) const {
    return guarded("Tokenizer.encode", [&] { return encode_to_js(*tokenizer_, text, "Tokenizer.encode"); }, text);
}
val TokenizerBinding::tokens(val text) const {
    return guarded("Tokenizer.tokens", [&] { return tokens_to_js(*tokenizer_, text, "Tokenizer.tokens"); }, text);
}
val TokenizerBinding::decode(val ids) const {
    return guarded("Tokenizer.decode", [&] { return decode_to_js(*tokenizer_, ids, "Tokenizer.decode"); }, ids);
}
val TokenizerBinding::decode_like(val ids, val like) const {
    return guarded("Tokenizer.decodeLike", [&] {
        constexpr const char* where = "Tokenizer.decodeLike";
        const std::string prompt = text_from_js(like, where);
        bool batched = false;
        const Index2 tokens = tokens_from_js(ids, where, "ids", &batched);
        if (batched && tokens.shape(0) != 1) fail<ShapeError>(where, ": ids must be one sequence, got ", tokens.shape(0), " rows");
        return val(tokenizer_->decode_like(std::vector<std::int32_t>(tokens.begin(), tokens.end()), prompt));
    }, ids, like);
}
val TokenizerBinding::begin_id() const {
    const auto begin = tokenizer_->begin_id();
    return begin ? val(*begin) : val::null();
}
val TokenizerBinding::end_id() const {
    const auto end = tokenizer_->end_id();
    return end ? val(*end) : val::null();
}
val TokenizerBinding::token_text(val id) const {
    return guarded("Tokenizer.tokenText", [&] {
        if (!id.isNumber()) fail<ConfigError>("Tokenizer.tokenText: the id must be a number");
        const double v = id.as<double>();
        if (v != static_cast<double>(static_cast<std::int32_t>(v))) {
            fail<ValueError>("Tokenizer.tokenText: the id must be an integer in int32 range, got ", v);
        }
        return val(text::valid_utf8(tokenizer_->token_text(static_cast<std::int32_t>(v))));
    }, id);
}
val TokenizerBinding::to_bytes() const {
    return guarded("Tokenizer.toBytes", [&] {
        const std::vector<std::uint8_t> bytes = tokenizer_->to_bytes();
        return uint8_array_to_js(bytes.data(), bytes.size());
    });
}

EMSCRIPTEN_BINDINGS(attnlab_tokenizer) {
    using T = TokenizerBinding;
    emscripten::class_<T>("Tokenizer")
        .class_function("fromFiles", &T::from_files)
        .class_function("fromBytes", &T::from_bytes)
        .function("kind", &T::kind)
        .function("vocabSize", &T::vocab_size)
        .function("encode", &T::encode)
        .function("tokens", &T::tokens)
        .function("decode", &T::decode)
        .function("decodeLike", &T::decode_like)
        .function("beginId", &T::begin_id)
        .function("endId", &T::end_id)
        .function("tokenText", &T::token_text)
        .function("toBytes", &T::to_bytes);
}

}  // namespace attnlab::web
