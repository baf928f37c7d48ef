// The docs' lists of a choice's values are the choice's table (core/choice.hpp): README.md's
// option table and its `--flag a|b|c` lists, and web/README.md's table of forward options, name
// exactly the values the engine accepts, in the table's order. A new value makes this test name
// the line to update.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/attention/attention_options.hpp"
#include "attnlab/model/config.hpp"

namespace attnlab {
namespace {

std::string read_doc(const std::string& relative) {
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/" + relative);
    EXPECT_TRUE(in) << "cannot read " << relative;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Every value name of a choice-typed field, by the field's CLI flag and by its JavaScript name.
struct ChoiceFields {
    std::map<std::string, std::vector<std::string>> by_flag, by_js;
};

template <class Field, class T>
void note(ChoiceFields& out, const Field& field, const T&) {
    if constexpr (is_choice_v<T>) {
        if (field.cli) out.by_flag[field.cli] = choice_name_list<T>();
        if (field.js) out.by_js[field.js] = choice_name_list<T>();
    }
}

ChoiceFields choice_fields() {
    ChoiceFields out;
    const ModelConfig config;
    config.for_each_field([&](const ModelConfigField& f, const auto& value) { note(out, f, value); });
    const AttentionOptions options;
    for_each_attention_option(options, [&](const AttentionOptionField& f, const auto& value) { note(out, f, value); });
    return out;
}

// The words of `cell` quoted by `open`...`close` (backticks, or '...' inside backticks), in order.
std::vector<std::string> quoted(const std::string& cell, const std::regex& word) {
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(cell.begin(), cell.end(), word); it != std::sregex_iterator(); ++it) {
        out.push_back((*it)[1]);
    }
    return out;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

TEST(ChoiceDocs, TheReadmeOptionTableListsEveryValueOfEachChoiceFlag) {
    const ChoiceFields fields = choice_fields();
    const std::string readme = read_doc("README.md");
    // | `--variant` · `variant` | `full` (default), `linear`, `block_sparse` | ...
    const std::regex row(R"(\n\| `--([a-z-]+)`[^|\n]*\| ([^|\n]*) \|)");
    std::size_t checked = 0;
    for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row); it != std::sregex_iterator(); ++it) {
        const auto found = fields.by_flag.find((*it)[1]);
        if (found == fields.by_flag.end()) continue;
        EXPECT_EQ(joined(quoted((*it)[2], std::regex("`([a-z0-9_]+)`"))), joined(found->second))
            << "README.md's row of --" << (*it)[1];
        ++checked;
    }
    EXPECT_GE(checked, 4u) << "README.md's option table (--variant, --normalizer, --precision, ...) was not found";
}

TEST(ChoiceDocs, TheReadmeFlagListsNameEveryValue) {
    const ChoiceFields fields = choice_fields();
    const std::string readme = read_doc("README.md");
    // `--pe none|sinusoidal|learned|rope|time`
    const std::regex list(R"(`--([a-z-]+) ([a-z0-9_]+(?:\|[a-z0-9_]+)+)`)");
    std::size_t checked = 0;
    for (auto it = std::sregex_iterator(readme.begin(), readme.end(), list); it != std::sregex_iterator(); ++it) {
        const auto found = fields.by_flag.find((*it)[1]);
        if (found == fields.by_flag.end()) continue;
        std::string names = (*it)[2];
        for (char& c : names) c = c == '|' ? ',' : c;
        EXPECT_EQ(std::regex_replace(names, std::regex(","), ", "), joined(found->second))
            << "README.md's list `--" << (*it)[1] << " ...`";
        ++checked;
    }
    EXPECT_GE(checked, 3u) << "README.md's `--pe a|b|...` lists were not found";
}

TEST(ChoiceDocs, TheWebReadmeForwardOptionsListEveryValue) {
    const ChoiceFields fields = choice_fields();
    const std::string readme = read_doc("web/README.md");
    // | `normalizer` | `'softmax'` (default) / `'sigmoid'` / `'relu'` | ...
    const std::regex row(R"(\n\| `([A-Za-z]+)` \| ((?:`'[a-z0-9_]+'`[^|\n]*)) \|)");
    std::size_t checked = 0;
    for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row); it != std::sregex_iterator(); ++it) {
        const auto found = fields.by_js.find((*it)[1]);
        const std::string key = (*it)[1];
        if (found == fields.by_js.end() || key == "positional") continue;  // a layer takes 3 of the 5 encodings
        const std::vector<std::string> names = quoted((*it)[2], std::regex("`'([a-z0-9_]+)'`"));
        if (names.size() < 2) continue;  // a Model option's default, not a list
        EXPECT_EQ(joined(names), joined(found->second)) << "web/README.md's row of " << key;
        ++checked;
    }
    EXPECT_GE(checked, 3u) << "web/README.md's forward options (variant, normalizer, precision, ...) were not found";
}

}  // namespace
}  // namespace attnlab
