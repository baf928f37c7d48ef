#include "attnlab/text/char_vocab.hpp"

#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab::text {
namespace {

const char* kTable = "t2s 雲 云\nt2s 風 风\ns2t 云 雲\ns2t 风 風\n";

TEST(CharTokenizer, KeepsTheMostFrequentCharactersAfterTheSpecials) {
    const CharTokenizer t = CharTokenizer::build({"风云风\n", "云风"}, 2, nullptr);
    ASSERT_EQ(t.vocab_size(), 5u);
    EXPECT_EQ(t.token_text(0), "<unk>");
    EXPECT_EQ(t.token_text(CharTokenizer::kBos), "<bos>");
    EXPECT_EQ(t.token_text(CharTokenizer::kEos), "<eos>");
    EXPECT_EQ(t.token_text(3), "风");  // 3 times
    EXPECT_EQ(t.token_text(4), "云");  // 2 times; "\n" (once) is cut
    EXPECT_EQ(t.encode("风\n云"), (std::vector<std::int32_t>{3, CharTokenizer::kUnk, 4}));
    EXPECT_EQ(t.decode({CharTokenizer::kBos, 3, 0, 4, CharTokenizer::kEos}), "风\xEF\xBF\xBD云");
}

TEST(CharTokenizer, CountsGiveTheCoverageOfAVocabulary) {
    const CharCounts c = count_characters({"aab", "ac"});
    EXPECT_EQ(c.total, 5u);
    EXPECT_DOUBLE_EQ(c.coverage(1), 3.0 / 5.0);
    EXPECT_DOUBLE_EQ(c.coverage(2), 4.0 / 5.0);
    EXPECT_DOUBLE_EQ(c.coverage(10), 1.0);
}

TEST(CharTokenizer, EitherScriptGivesTheSameIdsAndDecodesInTheAskedScript) {
    const ScriptConverter conv = ScriptConverter::from_text(kTable, "table");
    const CharTokenizer t = CharTokenizer::build({"风云"}, 10, &conv);
    EXPECT_EQ(t.encode("風雲"), t.encode("风云"));
    const std::vector<std::int32_t> ids = t.encode("风云");
    EXPECT_EQ(t.decode(ids), "风云");
    EXPECT_EQ(t.decode_in(ids, Script::traditional), "風雲");
    const std::vector<TokenSpan> spans = t.encode_spans("風a");
    ASSERT_EQ(spans.size(), 2u);
    EXPECT_EQ(spans[0].end, 3u);  // the bytes of the text given, not of its conversion
    EXPECT_EQ(spans[1].id, CharTokenizer::kUnk);
}

TEST(CharTokenizer, SaysThroughTheInterfaceHowADocumentOpensClosesAndIsWrittenBack) {
    const ScriptConverter conv = ScriptConverter::from_text(kTable, "table");
    const auto with_table = tokenizer_from_bytes(CharTokenizer::build({"风云"}, 10, &conv).to_bytes());
    const Tokenizer& t = *with_table;
    EXPECT_EQ(t.begin_id(), CharTokenizer::kBos);
    EXPECT_EQ(t.end_id(), CharTokenizer::kEos);
    const std::vector<std::int32_t> ids = t.encode("风云");
    EXPECT_EQ(t.decode_like(ids, "風"), "風雲");  // a traditional prompt is answered in traditional
    EXPECT_EQ(t.decode_like(ids, "风"), "风云");
    const CharTokenizer plain = CharTokenizer::build({"风云"}, 10, nullptr);
    EXPECT_EQ(plain.decode_like(plain.encode("风云"), "風"), "风云");  // no table: as decode()
}

TEST(CharTokenizer, SerialisesWithItsScriptTable) {
    const ScriptConverter conv = ScriptConverter::from_text(kTable, "table");
    const CharTokenizer t = CharTokenizer::build({"风云\n "}, 10, &conv);
    const auto again = tokenizer_from_bytes(t.to_bytes());
    EXPECT_EQ(again->kind(), "char");
    EXPECT_EQ(again->encode("風雲\n "), t.encode("风云\n "));
    const auto& chars = dynamic_cast<const CharTokenizer&>(*again);
    EXPECT_EQ(chars.decode_in(t.encode("风"), Script::traditional), "風");
}

TEST(CharTokenizer, RefusesMalformedFilesAndSizes) {
    EXPECT_THROW(CharTokenizer::build({"a"}, 0, nullptr), ConfigError);
    EXPECT_THROW(CharTokenizer::from_files("{}", ""), IoError);
    EXPECT_THROW(CharTokenizer::from_files(R"(["<unk>","<bos>","<eos>","ab"])", ""), IoError);
    EXPECT_THROW(CharTokenizer::from_files(R"(["<unk>","<bos>","<eos>","a","a"])", ""), IoError);
    EXPECT_THROW(CharTokenizer::from_files(R"(["<unk>","<eos>","<bos>"])", ""), IoError);
    EXPECT_THROW(CharTokenizer::from_files(R"(["<unk>","<bos>","<eos>","a"])", "t2s a b\n"), IoError);
    EXPECT_THROW(CharTokenizer::build({"a"}, 1, nullptr).decode({4}), ValueError);
}

}  // namespace
}  // namespace attnlab::text
