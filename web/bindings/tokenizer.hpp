// web/bindings/tokenizer.hpp: the JavaScript `Tokenizer` object (tokenizer.cpp).
//
// What it is for: one attnlab::text::Tokenizer (text/tokenizer.hpp) in shared ownership, so a
// Model and the Tokenizer handles JavaScript holds of it can be deleted in any order.
//
//   const tok = lab.Tokenizer.fromFiles({ 'vocab.json': bytes, 'merges.txt': bytes });  // or encoder.json + vocab.bpe, vocab.txt
//   tok.encode('Hello world');               // Int32Array [15496, 995]
//   tok.tokens('Hello world');               // [{ id: 15496, text: 'Hello', start: 0, end: 5 }, ...]
//   tok.decode([15496, 995]);                // 'Hello world'
//   const same = lab.Tokenizer.fromBytes(tok.toBytes());
//   tok.delete(); same.delete();
#pragma once

#include <memory>

#include <emscripten/val.h>

#include "attnlab/text/tokenizer.hpp"

namespace attnlab::web {

class TokenizerBinding {
public:
    explicit TokenizerBinding(std::shared_ptr<const text::Tokenizer> tokenizer) : tokenizer_(std::move(tokenizer)) {}

    // files: { [name]: string | Uint8Array | ArrayBuffer }, named as in a tokenizer directory.
    static TokenizerBinding from_files(emscripten::val files);
    static TokenizerBinding from_bytes(emscripten::val bytes);

    emscripten::val kind() const;
    emscripten::val vocab_size() const;
    emscripten::val encode(emscripten::val text) const;
    // [{ id, text, start, end }]: start and end index the JavaScript string (UTF-16 code units);
    // a token holding part of a character (byte-level BPE) spans the whole character.
    emscripten::val tokens(emscripten::val text) const;
    emscripten::val decode(emscripten::val ids) const;
    // ids -> text in the script `like` is written in (a character tokenizer that carries a script
    // table); every other tokenizer decodes as decode() does.
    emscripten::val decode_like(emscripten::val ids, emscripten::val like) const;
    // The id a document starts with, the token a model of this tokenizer was trained to read
    // first (a character tokenizer's <bos>), or null: byte-level BPE and WordPiece add none.
    emscripten::val begin_id() const;
    emscripten::val end_id() const;
    emscripten::val token_text(emscripten::val id) const;
    emscripten::val to_bytes() const;

    const std::shared_ptr<const text::Tokenizer>& shared() const { return tokenizer_; }

private:
    std::shared_ptr<const text::Tokenizer> tokenizer_;
};

// The ids of a JavaScript string (encode), its tokens with UTF-16 spans (tokens), the text of
// ids (decode): shared by Tokenizer and Model.
emscripten::val encode_to_js(const text::Tokenizer& tokenizer, const emscripten::val& text, const char* where);
emscripten::val tokens_to_js(const text::Tokenizer& tokenizer, const emscripten::val& text, const char* where);
emscripten::val decode_to_js(const text::Tokenizer& tokenizer, const emscripten::val& ids, const char* where);

}  // namespace attnlab::web
