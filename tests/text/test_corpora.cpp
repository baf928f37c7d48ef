#include "attnlab/text/corpora.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab::text {
namespace {

TEST(RegulatedVerse, KeepsFourOrEightLinesOfFiveOrSevenCharacters) {
    const auto quatrain = regulated_lines({"床前明月光，疑是地上霜。", "舉頭望明月，低頭思故鄉。"});
    ASSERT_TRUE(quatrain);
    EXPECT_EQ(quatrain->size(), 4u);
    EXPECT_EQ((*quatrain)[1], "疑是地上霜。");
    EXPECT_TRUE(regulated_lines({"一二三四五六七，一二三四五六七。一二三四五六七，一二三四五六七。"}));
}

TEST(RegulatedVerse, RefusesOtherFormsLengthsAndMarks) {
    EXPECT_FALSE(regulated_lines({"床前明月光，疑是地上霜。"}));                          // two lines
    EXPECT_FALSE(regulated_lines({"床前明月，疑是地上。", "舉頭望明，低頭思故。"}));      // four characters
    EXPECT_FALSE(regulated_lines({"床前明月光，疑是地上霜霜。", "舉頭望明月，低頭思故鄉。"}));  // uneven
    EXPECT_FALSE(regulated_lines({"床前明月光。疑是地上霜，", "舉頭望明月，低頭思故鄉。"}));  // 。 before ，
    EXPECT_FALSE(regulated_lines({"床前明□光，疑是地上霜。", "舉頭望明月，低頭思故鄉。"}));  // a lacuna
    EXPECT_FALSE(regulated_lines({"床前明月光，", "疑是地上霜。舉頭望明月，低頭思故鄉。"}));  // half a couplet
}

TEST(Brown, StripsTagsKeepsThemBesideTheWordsAndJoinsPunctuation) {
    const BrownDocument d = parse_brown("ca01",
                                        "\n\n\tThe/at jury/nn said/vbd ``/`` no/at ''/'' ,/, (/( it/pps )/) ./.\n\n"
                                        "\tIt/pps ran/vbd ./.\n");
    EXPECT_EQ(d.text, "The jury said \"no\", (it).\nIt ran.\n");
    ASSERT_EQ(d.words.size(), 14u);
    EXPECT_EQ(d.words[1].tag, "nn");
    EXPECT_EQ(d.text.substr(d.words[1].begin, d.words[1].end - d.words[1].begin), "jury");
    EXPECT_EQ(d.words[3].tag, "``");
    EXPECT_EQ(d.text.substr(d.words[12].begin, 3), "ran");
    EXPECT_THROW(parse_brown("cx01", "word-without-tag"), IoError);
}

TEST(UserText, DocumentsAreParagraphsAndBadFilesAreNamedErrors) {
    const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "attnlab_corpora";
    std::filesystem::create_directories(dir);
    const auto write = [&](const char* name, const std::string& text) {
        std::ofstream(dir / name, std::ios::binary) << text;
        return (dir / name).string();
    };
    EXPECT_EQ(load_text_documents(write("two.txt", "one\nline\n\n \ntwo\r\n")), (std::vector<std::string>{"one\nline\n", "two\n"}));
    EXPECT_THROW(load_text_documents(write("empty.txt", "\n\n")), ValueError);
    try {
        load_text_documents(write("latin1.txt", "caf\xE9\n"));
        FAIL() << "accepted Latin-1";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("byte 3"), std::string::npos) << e.what();
    }
    EXPECT_THROW(load_text_documents((dir / "missing.txt").string()), IoError);
    EXPECT_EQ(read_id_list(write("ids.txt", "# held out\nca01\n\ncb02\n")), (std::set<std::string>{"ca01", "cb02"}));
}

}  // namespace
}  // namespace attnlab::text
