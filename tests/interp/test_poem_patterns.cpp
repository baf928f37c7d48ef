// A regulated poem's form and patterns (attnlab/interp/poem_patterns.hpp) on hand-made poems
// whose every key is known.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/interp/poem_patterns.hpp"

namespace attnlab {
namespace {

using interp::kNoLine;
using interp::poem_form;
using interp::poem_pattern;
using Keys = std::set<std::pair<std::size_t, std::size_t>>;  // (query, key)

// Two couplets of three-character lines, a line break between them, begin and end tokens ("").
//  0 ""   1 白 2 日 3 依 4 ，   5 黄 6 河 7 入 8 。   9 "\n"
// 10 欲  11 穷 12 千 13 ，  14 更 15 上 16 一 17 。  18 ""
const std::vector<std::string> kPoem = {"", "白", "日", "依", "，", "黄", "河", "入", "。", "\n",
                                        "欲", "穷", "千", "，", "更", "上", "一", "。", ""};

Keys ones(const Tensor2& p) {
    Keys k;
    for (std::size_t i = 0; i < p.shape(0); ++i)
        for (std::size_t j = 0; j < p.shape(1); ++j) {
            if (p(i, j) == 1.0f) k.insert({i, j});
            else EXPECT_EQ(p(i, j), 0.0f) << i << ", " << j;
        }
    return k;
}

Keys keys_of(PoemPattern pattern, const std::vector<std::string>& texts) {
    const Tensor2 p = poem_pattern(pattern, poem_form(texts));
    EXPECT_EQ(p.shape(0), texts.size());
    EXPECT_EQ(p.shape(1), texts.size());
    return ones(p);
}

TEST(PoemForm, LinesAndColumnsWithTheMarkAsTheLastColumn) {
    const interp::PoemForm f = poem_form(kPoem);
    const std::vector<std::size_t> line = {kNoLine, 0, 0, 0, 0, 1, 1, 1, 1, kNoLine, 2, 2, 2, 2, 3, 3, 3, 3, kNoLine};
    const std::vector<std::size_t> column = {kNoLine, 0, 1, 2, 3, 0, 1, 2, 3, kNoLine, 0, 1, 2, 3, 0, 1, 2, 3, kNoLine};
    EXPECT_EQ(f.line, line);
    EXPECT_EQ(f.column, column);
    for (std::size_t i = 0; i < kPoem.size(); ++i) EXPECT_EQ(f.mark[i], kPoem[i] == "，" || kPoem[i] == "。") << i;
}

TEST(PoemForm, AMarkWithNoCharacterBeforeItAndBlanksBelongToNoLine) {
    const interp::PoemForm f = poem_form({"，", " ", "山", "。", "。", "水"});
    const std::vector<std::size_t> line = {kNoLine, kNoLine, 0, 0, kNoLine, 1};
    const std::vector<std::size_t> column = {kNoLine, kNoLine, 0, 1, kNoLine, 0};
    EXPECT_EQ(f.line, line);
    EXPECT_EQ(f.column, column);
    EXPECT_EQ(f.mark, (std::vector<bool>{false, false, false, true, false, false}));
}

TEST(PoemPatterns, EveryKeyOfAHandMadePoem) {
    EXPECT_EQ(keys_of(PoemPattern::paired_line, kPoem),
              (Keys{{5, 1}, {6, 2}, {7, 3}, {8, 4}, {14, 10}, {15, 11}, {16, 12}, {17, 13}}));
    EXPECT_EQ(keys_of(PoemPattern::paired_next, kPoem), (Keys{{5, 2}, {6, 3}, {7, 4}, {14, 11}, {15, 12}, {16, 13}}));
    EXPECT_EQ(keys_of(PoemPattern::rhyme, kPoem), (Keys{{16, 7}}));
    EXPECT_EQ(keys_of(PoemPattern::rhyme_next, kPoem), (Keys{{15, 7}}));
}

TEST(PoemPatterns, AnUnclosedLastLineHasPairsButNoRhyme) {
    const std::vector<std::string> open(kPoem.begin(), kPoem.begin() + 17);  // up to 一, no 。
    EXPECT_EQ(keys_of(PoemPattern::paired_line, open), (Keys{{5, 1}, {6, 2}, {7, 3}, {8, 4}, {14, 10}, {15, 11}, {16, 12}}));
    EXPECT_TRUE(keys_of(PoemPattern::rhyme, open).empty());
    EXPECT_TRUE(keys_of(PoemPattern::rhyme_next, open).empty());
}

TEST(PoemPatterns, LinesOfDifferentLengthsUseEachLinesOwnLastCharacter) {
    // 0 "" 1 甲 2 乙 3 ， 4 丙 5 。 6 丁 7 戊 8 己 9 ， 10 庚 11 辛 12 壬 13 癸 14 。
    const std::vector<std::string> t = {"", "甲", "乙", "，", "丙", "。", "丁", "戊", "己", "，", "庚", "辛", "壬", "癸", "。"};
    EXPECT_EQ(keys_of(PoemPattern::rhyme, t), (Keys{{13, 4}}));
    EXPECT_EQ(keys_of(PoemPattern::rhyme_next, t), (Keys{{12, 4}}));
    // 丙's line is shorter than its first line: its mark pairs with 乙; 癸 pairs with
    // the first line's mark, and the second line's 。 has no key.
    EXPECT_EQ(keys_of(PoemPattern::paired_line, t), (Keys{{4, 1}, {5, 2}, {10, 6}, {11, 7}, {12, 8}, {13, 9}}));
    EXPECT_EQ(keys_of(PoemPattern::paired_next, t), (Keys{{4, 2}, {5, 3}, {10, 7}, {11, 8}, {12, 9}}));
}

TEST(PoemPatterns, NoTokensOrNoLinesGiveEmptyMasks) {
    EXPECT_EQ(poem_pattern(PoemPattern::rhyme, poem_form({})).size(), 0u);
    EXPECT_TRUE(keys_of(PoemPattern::paired_line, {"", "\n", ""}).empty());
}

}  // namespace
}  // namespace attnlab
