#include "attnlab/text/script.hpp"

#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab::text {
namespace {

// A few of OpenCC's entries, in the exported text form.
const char* kTable =
    "# a comment\n"
    "t2s 雲 云\nt2s 隱 隐\nt2s 層 层\nt2s 闕 阙\nt2s 風 风\n"
    "s2t 云 雲\ns2t 隐 隱\ns2t 层 層\ns2t 阙 闕\ns2t 风 風\n";

TEST(ScriptConverter, ConvertsEachCharacterBothWays) {
    const ScriptConverter c = ScriptConverter::from_text(kTable, "table");
    EXPECT_EQ(c.to_simplified("雲日隱層闕"), "云日隐层阙");
    EXPECT_EQ(c.to_traditional("云日隐层阙"), "雲日隱層闕");
    EXPECT_EQ(c.to_script("風", Script::simplified), "风");
    EXPECT_EQ(c.to_simplified("明月，"), "明月，");  // no entry: unchanged
    EXPECT_EQ(c.size(), 10u);
}

TEST(ScriptConverter, DetectsTheScriptByTheCharactersThatDiffer) {
    const ScriptConverter c = ScriptConverter::from_text(kTable, "table");
    EXPECT_EQ(c.detect("雲日隱層闕"), Script::traditional);
    EXPECT_EQ(c.detect("云日隐层阙"), Script::simplified);
    EXPECT_EQ(c.detect("明月"), Script::simplified);  // neither: the default
}

TEST(ScriptConverter, RestrictionKeepsEntriesWhoseSimplifiedSideIsKept) {
    const ScriptConverter c = ScriptConverter::from_text(kTable, "table").restricted_to({U'云', U'风'});
    EXPECT_EQ(c.size(), 4u);
    EXPECT_EQ(c.to_simplified("雲隱"), "云隱");
    EXPECT_EQ(ScriptConverter::from_text(c.text(), "again").text(), c.text());
}

TEST(ScriptConverter, MalformedLinesNameTheLine) {
    for (const char* bad : {"t2s 雲\n", "x2y 雲 云\n", "t2s 雲雲 云\n"}) {
        try {
            ScriptConverter::from_text(bad, "opencc_chars.txt");
            FAIL() << "accepted " << bad;
        } catch (const IoError& e) {
            EXPECT_NE(std::string(e.what()).find("opencc_chars.txt: line 1"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(parse_script("cantonese"), ConfigError);
}

}  // namespace
}  // namespace attnlab::text
