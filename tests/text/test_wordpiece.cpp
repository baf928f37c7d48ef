#include "attnlab/text/wordpiece.hpp"

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/text/tokenizer.hpp"

namespace attnlab::text {
namespace {

// A character-level Chinese vocabulary in BERT's format, with a few WordPiece entries
// (tests/reference/fixtures/tokenizers/chinese_wordpiece/vocab.txt).
const std::string kDir = std::string(ATTNLAB_FIXTURE_DIR) + "/tokenizers/chinese_wordpiece";

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class ChineseWordPiece : public ::testing::Test {
protected:
    void SetUp() override {
        const std::string vocab = read(kDir + "/vocab.txt");
        ASSERT_FALSE(vocab.empty());
        for (std::size_t begin = 0, id = 0; begin < vocab.size(); ++id) {
            const std::size_t end = vocab.find('\n', begin);
            ids[vocab.substr(begin, end - begin)] = static_cast<std::int32_t>(id);
            begin = end + 1;
        }
    }
    std::vector<std::int32_t> ids_of(const std::vector<std::string>& tokens) {
        std::vector<std::int32_t> out;
        for (const std::string& t : tokens) out.push_back(ids.at(t));
        return out;
    }
    std::map<std::string, std::int32_t> ids;
    WordPieceTokenizer wp = WordPieceTokenizer::from_files(read(kDir + "/vocab.txt"));
};

TEST_F(ChineseWordPiece, EachChineseCharacterIsAToken) {
    EXPECT_EQ(wp.kind(), "wordpiece");
    EXPECT_EQ(wp.vocab_size(), ids.size());
    EXPECT_EQ(wp.encode("我爱北京天安门。"), ids_of({"我", "爱", "北", "京", "天", "安", "门", "。"}));
    // Characters the vocabulary lacks are each one [UNK]; full-width punctuation is split off.
    EXPECT_EQ(wp.encode("你好，世界！"), ids_of({"你", "好", "，", "[UNK]", "[UNK]", "！"}));
}

TEST_F(ChineseWordPiece, LatinWordsGoThroughWordPieceLowerCasedWithoutAccents) {
    EXPECT_EQ(wp.encode("我爱Hello"), ids_of({"我", "爱", "hello"}));
    EXPECT_EQ(wp.encode("unaffable"), ids_of({"un", "##aff", "##able"}));
    EXPECT_EQ(wp.encode("Café CAFES"), ids_of({"cafe", "cafe", "##s"}));
    EXPECT_EQ(wp.encode("GPT-22"), ids_of({"gpt", "-", "2", "##2"}));
    EXPECT_EQ(wp.encode("hello, world."), ids_of({"hello", ",", "world", "."}));
    EXPECT_EQ(wp.encode("helloz"), ids_of({"[UNK]"}));  // "##z" is no token: the whole word is unknown
    EXPECT_EQ(wp.encode(std::string(101, 'a')), ids_of({"[UNK]"}));
}

TEST_F(ChineseWordPiece, SpecialTokensStayWholeAndControlCharactersVanish) {
    EXPECT_EQ(wp.encode("[CLS]我[SEP]"), ids_of({"[CLS]", "我", "[SEP]"}));
    EXPECT_EQ(wp.encode("我\x01\t爱\xE2\x80\x8B"), ids_of({"我", "爱"}));  // U+0001, a tab, U+200B
    EXPECT_TRUE(wp.encode(" \n ").empty());
}

TEST_F(ChineseWordPiece, SpansNameTheBytesOfTheText) {
    const std::string text = "我爱 Hellos!";
    const std::vector<TokenSpan> spans = wp.encode_spans(text);
    ASSERT_EQ(spans.size(), 5u);
    const std::vector<std::pair<std::size_t, std::size_t>> expected = {{0, 3}, {3, 6}, {7, 12}, {12, 13}, {13, 14}};
    // hellos is "hello" + "##s": the pieces split the word's bytes.
    EXPECT_EQ(spans[2].id, ids.at("hello"));
    EXPECT_EQ(spans[3].id, ids.at("##s"));
    for (std::size_t i = 0; i < spans.size(); ++i) {
        EXPECT_EQ(spans[i].begin, expected[i].first) << i;
        EXPECT_EQ(spans[i].end, expected[i].second) << i;
    }
}

TEST_F(ChineseWordPiece, DecodeJoinsWithoutSpacesBetweenChineseCharacters) {
    EXPECT_EQ(wp.decode(ids_of({"我", "爱", "北", "京", "。"})), "我爱北京。");
    EXPECT_EQ(wp.decode(ids_of({"un", "##aff", "##able"})), "unaffable");
    EXPECT_EQ(wp.decode(ids_of({"hello", ",", "world", "!"})), "hello, world!");
    EXPECT_EQ(wp.decode(ids_of({"我", "爱", "hello", "world"})), "我爱hello world");
    EXPECT_EQ(wp.token_text(ids.at("##llo")), "##llo");
    EXPECT_THROW(wp.decode({static_cast<std::int32_t>(ids.size())}), ValueError);
}

TEST_F(ChineseWordPiece, TheConfigCanKeepCase) {
    const WordPieceTokenizer cased = WordPieceTokenizer::from_files(read(kDir + "/vocab.txt"), R"({"do_lower_case": false})");
    EXPECT_FALSE(cased.options().lower_case);
    EXPECT_FALSE(cased.options().strip_accents);
    EXPECT_EQ(cased.encode("Hello hello"), ids_of({"[UNK]", "hello"}));
    EXPECT_THROW(WordPieceTokenizer::from_files(read(kDir + "/vocab.txt"), R"({"do_lower_case": "no"})"), IoError);
    EXPECT_THROW(WordPieceTokenizer::from_files(read(kDir + "/vocab.txt"), "{"), IoError);
}

TEST_F(ChineseWordPiece, LoadsFromItsDirectoryAndRoundTripsThroughBytes) {
    const auto loaded = load_tokenizer_directory(kDir);
    EXPECT_EQ(loaded->kind(), "wordpiece");
    const auto again = tokenizer_from_bytes(loaded->to_bytes());
    const std::string text = "[CLS]我爱北京天安门, unaffable café!";
    EXPECT_EQ(again->encode(text), wp.encode(text));
    EXPECT_EQ(again->files(), loaded->files());
}

TEST(WordPiece, AVocabularyWithoutUnkIsRefused) {
    try {
        WordPieceTokenizer::from_files("[PAD]\n我\n");
        FAIL();
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("vocab.txt: has no [UNK] token"), std::string::npos) << e.what();
    }
    EXPECT_THROW(WordPieceTokenizer::from_files(""), IoError);
    EXPECT_THROW(WordPieceTokenizer::from_files("[UNK]\n\xFF\n"), IoError);
}

}  // namespace
}  // namespace attnlab::text
