// attnlab/text/wordpiece.hpp: BERT's WordPiece tokenizer from a vocab.txt (Devlin et al. 2019;
// Wu et al. 2016), the tokenizer of Chinese GPT-2 checkpoints such as
// uer/gpt2-chinese-cluecorpussmall.
//
// What it is for: reading the character-level Chinese vocabularies of BERT-style models, and
// WordPiece for the Latin words among them. As Hugging Face's BertTokenizer
// (tokenization_bert.py, BasicTokenizer then WordpieceTokenizer) with its defaults:
//   1. the vocabulary's special tokens ([UNK], [SEP], [PAD], [CLS], [MASK], when present)
//      written in the text stay whole;
//   2. clean: NUL, U+FFFD and control characters (category C*, but \t \n \r) are dropped,
//      whitespace becomes a space;
//   3. every CJK ideograph becomes a word of its own;
//   4. split on whitespace; with do_lower_case (default true) each word is lower-cased and its
//      accents stripped (NFD, nonspacing marks dropped); each punctuation character becomes a
//      word of its own;
//   5. WordPiece: the longest prefix of the word in the vocabulary, then the longest "##"-prefixed
//      continuation, and so on; a word with a part no token covers, or longer than 100
//      characters, is one [UNK].
// Files: vocab.txt (one token per line, the line number its id), optionally
// tokenizer_config.json (do_lower_case, strip_accents, tokenize_chinese_chars). [UNK] must be in
// the vocabulary.
// Where it differs from BertTokenizer: no NFC normalisation first (text is taken as given), the
// final sigma is lower-cased like any sigma, and decode() puts no space next to a CJK character
// or CJK/full-width punctuation (BertTokenizer's decode writes "我 爱 你"); otherwise decode joins
// tokens with spaces, glues "##" pieces to the one before and removes the space before
// . , ! ? and English contractions, as clean_up_tokenization does.
//
//   auto wp = attnlab::text::WordPieceTokenizer::from_files(vocab_txt);
//   wp.encode("我爱unaffable");   // {id(我), id(爱), id(un), id(##aff), id(##able)}
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnlab/text/tokenizer.hpp"

namespace attnlab::text {

struct WordPieceOptions {
    bool lower_case = true;               // do_lower_case
    bool strip_accents = true;            // strip_accents (None in BertTokenizer: follows lower_case)
    bool tokenize_chinese_chars = true;   // tokenize_chinese_chars
    std::size_t max_chars_per_word = 100; // max_input_chars_per_word
};

class WordPieceTokenizer final : public Tokenizer {
public:
    // vocab.txt, and tokenizer_config.json's text or "" for the defaults. IoError naming the
    // file for malformed contents.
    static WordPieceTokenizer from_files(const std::string& vocab_txt, const std::string& config_json = "");

    std::string_view kind() const override { return "wordpiece"; }
    std::size_t vocab_size() const override { return tokens_.size(); }
    std::vector<TokenSpan> encode_spans(std::string_view text) const override;
    std::string decode(const std::vector<std::int32_t>& ids) const override;
    // The vocabulary's line for id ("##able" for a continuation).
    std::string token_text(std::int32_t id) const override;
    TokenizerFiles files() const override;  // vocab.txt, and tokenizer_config.json when given

    const WordPieceOptions& options() const { return options_; }
    std::int32_t unknown_id() const { return unk_; }

private:
    WordPieceTokenizer() = default;
    struct Char {
        char32_t value;
        std::size_t begin, end;  // bytes of the text it came from
    };
    // Steps 2-5 on one stretch of text without special tokens, appended to out.
    void encode_plain(const std::vector<Char>& chars, std::vector<TokenSpan>& out) const;
    // Step 5 on one word.
    void wordpiece(const std::vector<Char>& word, std::vector<TokenSpan>& out) const;

    std::vector<std::string> tokens_;                      // id -> line
    std::unordered_map<std::string, std::int32_t> ids_;    // line -> id (a repeated line: its last id)
    std::vector<std::string> specials_;                    // special tokens present, longest first
    std::int32_t unk_ = -1;
    WordPieceOptions options_;
    std::string vocab_txt_, config_json_;
};

}  // namespace attnlab::text
