#include "attnlab/text/unicode.hpp"

#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab::text {
namespace {

std::string refusal(std::string_view text) {
    try {
        decode_utf8(text, "test");
    } catch (const ValueError& e) {
        return e.what();
    }
    return "";
}

TEST(Utf8, DecodesCodePointsWithTheirBytes) {
    const auto cps = decode_utf8("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80", "test");  // a é 中 😀
    ASSERT_EQ(cps.size(), 4u);
    const char32_t values[] = {U'a', U'\u00E9', U'\u4E2D', U'\U0001F600'};
    const std::size_t ends[] = {1, 3, 6, 10};
    std::size_t begin = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(cps[i].value, values[i]);
        EXPECT_EQ(cps[i].begin, begin);
        EXPECT_EQ(cps[i].end, ends[i]);
        begin = ends[i];
    }
}

TEST(Utf8, RefusesInvalidSequencesNamingTheByte) {
    EXPECT_NE(refusal("ab\xFF").find("not valid UTF-8 at byte 2 (byte value 255)"), std::string::npos);
    EXPECT_NE(refusal("\xC0\x80").find("at byte 0"), std::string::npos);          // overlong NUL
    EXPECT_NE(refusal("x\xED\xA0\x80").find("at byte 1"), std::string::npos);     // a surrogate
    EXPECT_NE(refusal("\xE4\xB8").find("at byte 0"), std::string::npos);          // truncated
    EXPECT_NE(refusal("\xF4\x90\x80\x80").find("at byte 0"), std::string::npos);  // above U+10FFFF
    EXPECT_EQ(refusal("plain"), "");
}

TEST(Utf8, ReplacesEachMaximalInvalidSubpartLikeTextDecoder) {
    EXPECT_EQ(valid_utf8("a\xF0\x9F\x98" "b"), "a\xEF\xBF\xBD" "b");       // one prefix of 😀: one U+FFFD
    EXPECT_EQ(valid_utf8("\xE0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");         // E0 80 is no prefix: two
    EXPECT_EQ(valid_utf8("ok \xE4\xB8\xAD"), "ok \xE4\xB8\xAD");
    EXPECT_TRUE(is_valid_utf8("\xE4\xB8\xAD"));
    EXPECT_FALSE(is_valid_utf8("\xE4\xB8"));
    std::string encoded;
    for (char32_t cp : {U'A', U'\u00E9', U'\u4E2D', U'\U0001F600'}) append_utf8(encoded, cp);
    EXPECT_EQ(encoded, "A\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
}

TEST(UnicodeClasses, FollowJavaScriptForGpt2sPattern) {
    EXPECT_TRUE(is_letter(U'a'));
    EXPECT_TRUE(is_letter(U'\u4E2D'));   // 中
    EXPECT_TRUE(is_letter(U'\u00AA'));   // ª (Lo)
    EXPECT_FALSE(is_letter(U'1'));
    EXPECT_FALSE(is_letter(U'\u0301'));  // a combining mark is not a letter
    EXPECT_TRUE(is_number(U'\u0663'));   // Arabic-Indic three
    EXPECT_TRUE(is_number(U'\u2167'));   // Roman numeral eight (Nl)
    EXPECT_TRUE(is_js_space(U'\u3000'));
    EXPECT_TRUE(is_js_space(U'\uFEFF'));   // JavaScript's \s includes the BOM
    EXPECT_FALSE(is_js_space(U'\u0085'));  // ... but not NEL, unlike Python's
    EXPECT_FALSE(is_js_space(U'\u200B'));  // nor the zero-width space
}

TEST(UnicodeClasses, FollowBertsBasicTokenizer) {
    EXPECT_TRUE(is_bert_punctuation(U'$'));  // ASCII symbols count, though not Unicode P*
    EXPECT_TRUE(is_bert_punctuation(U'\uFF0C'));  // ，
    EXPECT_TRUE(is_bert_punctuation(U'\u3002'));  // 。
    EXPECT_FALSE(is_bert_punctuation(U'a'));
    EXPECT_TRUE(is_bert_control(U'\u0001'));
    EXPECT_TRUE(is_bert_control(U'\u200B'));  // Cf
    EXPECT_FALSE(is_bert_control(U'\t'));
    EXPECT_TRUE(is_bert_whitespace(U'\u00A0'));
    EXPECT_TRUE(is_cjk_ideograph(U'\u7231'));   // 爱
    EXPECT_FALSE(is_cjk_ideograph(U'\u3042'));  // あ: kana are not
    EXPECT_FALSE(is_cjk_ideograph(U'\uFF0C'));
}

TEST(UnicodeMaps, LowerCaseAndStripAccents) {
    std::u32string out;
    for (char32_t cp : {U'A', U'\u0100', U'\u03A3', U'\u0130', U'a'}) append_lower(out, cp);
    EXPECT_EQ(out, std::u32string(U"a\u0101\u03C3i\u0307a"));
    out.clear();
    for (char32_t cp : {U'\u00E9', U'\u0301', U'\u00F1', U'x', U'\uD55C'}) append_stripped(out, cp);  // é ́ ñ x 한
    EXPECT_EQ(out, std::u32string(U"enx\u1112\u1161\u11AB"));
}

}  // namespace
}  // namespace attnlab::text
