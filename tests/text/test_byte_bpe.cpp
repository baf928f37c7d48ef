#include "attnlab/text/byte_bpe.hpp"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/text/unicode.hpp"

namespace attnlab::text {
namespace {

// A vocabulary of the 256 byte symbols (ids 0..255 in byte order) plus the merges' results,
// in merges.txt's format.
struct TinyBpe {
    std::string vocab_json, merges_txt;
};
TinyBpe tiny_bpe(const std::vector<std::pair<std::string, std::string>>& merges, bool skip_byte = false,
                 std::uint8_t skipped = 0) {
    nlohmann::json vocab = nlohmann::json::object();
    int id = 0;
    for (int b = 0; b < 256; ++b) {
        if (skip_byte && b == skipped) continue;
        vocab[byte_symbol(static_cast<std::uint8_t>(b))] = id++;
    }
    std::string merges_txt = "#version: 0.2\n";
    for (const auto& [a, b] : merges) {
        if (!vocab.contains(a + b)) vocab[a + b] = id++;
        merges_txt += a + " " + b + "\n";
    }
    return {vocab.dump(), merges_txt};
}

ByteBpeTokenizer hello_bpe() {
    const TinyBpe t = tiny_bpe({{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"\xC4\xA0", "w"}, {"o", "r"}});
    return ByteBpeTokenizer::from_files(t.vocab_json, t.merges_txt);
}

std::vector<std::string> pieces_of(const std::string& text) {
    std::vector<std::string> out;
    for (const TextPiece& p : gpt2_pieces(text)) out.push_back(text.substr(p.begin, p.end - p.begin));
    return out;
}

using Pieces = std::vector<std::string>;

TEST(ByteBpe, ByteSymbolsAreGpt2sBytesToUnicode) {
    EXPECT_EQ(byte_symbol(' '), "\xC4\xA0");   // Ġ U+0120
    EXPECT_EQ(byte_symbol('a'), "a");
    EXPECT_EQ(byte_symbol(0), "\xC4\x80");     // Ā U+0100
    EXPECT_EQ(byte_symbol(0x7F), "\xC4\xA1");  // ġ U+0121
    EXPECT_EQ(byte_symbol(0xAD), "\xC5\x83");  // Ń U+0143, the last one
    EXPECT_EQ(byte_symbol(0xE9), "\xC3\xA9");  // é stands for itself
}

TEST(ByteBpe, PiecesFollowGpt2sPattern) {
    EXPECT_EQ(pieces_of("Hello world"), (Pieces{"Hello", " world"}));
    EXPECT_EQ(pieces_of("it's I'm we'll they're don't"),
              (Pieces{"it", "'s", " I", "'m", " we", "'ll", " they", "'re", " don", "'t"}));
    EXPECT_EQ(pieces_of("a   b"), (Pieces{"a", "  ", " b"}));  // the run leaves its last space to the word
    EXPECT_EQ(pieces_of("x\n\ny"), (Pieces{"x", "\n", "\n", "y"}));
    EXPECT_EQ(pieces_of("end  "), (Pieces{"end", "  "}));
    EXPECT_EQ(pieces_of("in 2023, 42!"), (Pieces{"in", " 2023", ",", " 42", "!"}));
    EXPECT_EQ(pieces_of("\t\tx"), (Pieces{"\t", "\t", "x"}));  // only a space joins the word
    EXPECT_EQ(pieces_of(" 'x 'S"), (Pieces{" '", "x", " '", "S"}));  // contractions are lower-case
    EXPECT_EQ(pieces_of("\xE4\xBD\xA0\xE5\xA5\xBD\xE3\x80\x82"), (Pieces{"\xE4\xBD\xA0\xE5\xA5\xBD", "\xE3\x80\x82"}));
    EXPECT_EQ(pieces_of("ok \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!"), (Pieces{"ok", " \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!"}));
    EXPECT_TRUE(gpt2_pieces("").empty());
}

TEST(ByteBpe, MergesTheLowestRankedPairEverywhereFirst) {
    const ByteBpeTokenizer bpe = hello_bpe();
    const auto id = [&](const std::string& token) {
        for (std::size_t i = 0; i < bpe.vocab_size(); ++i) {
            if (bpe.token_string(static_cast<std::int32_t>(i)) == token) return static_cast<std::int32_t>(i);
        }
        return -1;
    };
    // h e l l o h e: (h, e) merges twice, then (l, l), (he, ll), (hell, o).
    EXPECT_EQ(bpe.encode("hellohe"), (std::vector<std::int32_t>{id("hello"), id("he")}));
    EXPECT_EQ(bpe.encode(" world"), (std::vector<std::int32_t>{id("\xC4\xA0w"), id("or"), id("l"), id("d")}));
    EXPECT_EQ(bpe.merge_count(), 6u);
    EXPECT_EQ(bpe.vocab_size(), 256u + 6u);
}

TEST(ByteBpe, HasNoDocumentTokensAndDecodesLikeAnyPromptAsDecode) {
    const ByteBpeTokenizer bpe = hello_bpe();
    const Tokenizer& t = bpe;
    EXPECT_FALSE(t.begin_id().has_value());  // GPT-2's <|endoftext|> is the checkpoint's choice, not the files'
    EXPECT_FALSE(t.end_id().has_value());
    const std::vector<std::int32_t> ids = t.encode("hello world");
    EXPECT_EQ(t.decode_like(ids, "\xE9\x9B\xB2"), t.decode(ids));
}

TEST(ByteBpe, SpansCoverTheTextAndDecodeRoundTrips) {
    const ByteBpeTokenizer bpe = hello_bpe();
    std::mt19937 rng(7);
    const std::vector<std::string> alphabet = {"h", "e", "l", "o", " ", "  ", "\n", "\t", "'s", "9", "\xE4\xB8\xAD",
                                               "\xF0\x9F\x98\x80", "\xC3\xA9", "!", "\xE2\x80\x8D"};
    for (int round = 0; round < 200; ++round) {
        std::string text;
        for (int k = 0, n = static_cast<int>(rng() % 12); k < n; ++k) text += alphabet[rng() % alphabet.size()];
        const std::vector<TokenSpan> spans = bpe.encode_spans(text);
        std::size_t at = 0;
        std::string joined;
        std::vector<std::int32_t> ids;
        for (const TokenSpan& s : spans) {
            ASSERT_EQ(s.begin, at) << text;
            ASSERT_GT(s.end, s.begin);
            EXPECT_EQ(bpe.token_text(s.id), text.substr(s.begin, s.end - s.begin));
            joined += bpe.token_text(s.id);
            ids.push_back(s.id);
            at = s.end;
        }
        EXPECT_EQ(at, text.size());
        EXPECT_EQ(joined, text);
        EXPECT_EQ(bpe.decode(ids), text);
    }
}

TEST(ByteBpe, APartOfACharacterDecodesToTheReplacementCharacter) {
    const ByteBpeTokenizer bpe = hello_bpe();
    const std::vector<std::int32_t> ids = bpe.encode("\xE4\xB8\xAD");  // 中: three byte tokens
    ASSERT_EQ(ids.size(), 3u);
    EXPECT_EQ(bpe.token_text(ids[0]), "\xE4");
    EXPECT_EQ(bpe.decode({ids[0], ids[1]}), "\xEF\xBF\xBD");
    EXPECT_EQ(bpe.decode(ids), "\xE4\xB8\xAD");
}

TEST(ByteBpe, BadInputIsANamedError) {
    const ByteBpeTokenizer bpe = hello_bpe();
    try {
        bpe.encode("ok\xC3");
        FAIL();
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("not valid UTF-8 at byte 2"), std::string::npos) << e.what();
    }
    try {
        bpe.decode({5, 262});
        FAIL();
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("token id 262 is outside the vocabulary of 262 tokens"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(bpe.token_text(-1), ValueError);
}

std::string load_error(const std::string& vocab, const std::string& merges) {
    try {
        ByteBpeTokenizer::from_files(vocab, merges);
    } catch (const IoError& e) {
        return e.what();
    }
    return "";
}

TEST(ByteBpe, MalformedFilesAreNamedWithTheLine) {
    const TinyBpe t = tiny_bpe({{"h", "e"}});
    EXPECT_NE(load_error("[1, 2]", t.merges_txt).find("vocab.json: must be a JSON object"), std::string::npos);
    EXPECT_NE(load_error("{\"a\": 0,", t.merges_txt).find("vocab.json: not valid JSON"), std::string::npos);
    EXPECT_NE(load_error("{\"a\": 0, \"b\": 0}", "").find("id 0 belongs to two tokens"), std::string::npos);
    EXPECT_NE(load_error("{\"a\": -1}", "").find("non-negative 32-bit integer"), std::string::npos);
    EXPECT_NE(load_error(t.vocab_json, "#version: 0.2\nh e\nh e l\n").find("merges.txt: line 3 must hold two symbols"),
              std::string::npos);
    EXPECT_NE(load_error(t.vocab_json, "h e\nq z\n").find("line 2 (\"q z\"): \"qz\" is not a token"), std::string::npos);
    EXPECT_NE(load_error(t.vocab_json, "h \xFF\n").find("merges.txt: is not valid UTF-8"), std::string::npos);
    // A "#version" line is skipped, Windows line ends and blank lines are accepted.
    EXPECT_EQ(load_error(t.vocab_json, "#version: 0.2\r\nh e\r\n\r\n"), "");
}

TEST(ByteBpe, ATextWithAByteTheVocabularyLacksIsRefusedNamingIt) {
    const TinyBpe t = tiny_bpe({}, /*skip_byte=*/true, 'q');
    const ByteBpeTokenizer bpe = ByteBpeTokenizer::from_files(t.vocab_json, t.merges_txt);
    EXPECT_EQ(bpe.encode("ab").size(), 2u);
    try {
        bpe.encode("aq");
        FAIL();
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("no token for byte 113 (symbol \"q\") at byte 1"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace attnlab::text
