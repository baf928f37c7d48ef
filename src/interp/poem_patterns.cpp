// A regulated poem's form and its patterns of verse (attnlab/interp/poem_patterns.hpp).
#include "attnlab/interp/poem_patterns.hpp"

#include <map>
#include <utility>

namespace attnlab::interp {
namespace {

bool is_mark(const std::string& s) { return s == "，" || s == "。"; }

bool is_blank(const std::string& s) {
    for (char c : s) {
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return false;
    }
    return true;  // the empty text too
}

}  // namespace

PoemForm poem_form(const std::vector<std::string>& texts) {
    const std::size_t t = texts.size();
    PoemForm f{std::vector<std::size_t>(t, kNoLine), std::vector<std::size_t>(t, kNoLine), std::vector<bool>(t, false)};
    std::size_t line = 0, column = 0;
    for (std::size_t i = 0; i < t; ++i) {
        if (is_blank(texts[i])) continue;
        if (is_mark(texts[i]) && column == 0) continue;  // closes no line: belongs to none
        f.line[i] = line;
        f.column[i] = column++;
        if (is_mark(texts[i])) {
            f.mark[i] = true;
            ++line;
            column = 0;
        }
    }
    return f;
}

Tensor2 poem_pattern(PoemPattern pattern, const PoemForm& form) {
    const std::size_t t = form.line.size();
    // The token at (line, column), and each closed line's last character (the one before its mark).
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> at;
    std::map<std::size_t, std::size_t> last;  // line -> token index
    for (std::size_t i = 0; i < t; ++i) {
        if (form.line[i] == kNoLine) continue;
        at[{form.line[i], form.column[i]}] = i;
        if (form.mark[i]) last[form.line[i]] = at.at({form.line[i], form.column[i] - 1});
    }
    Tensor2 p = xt::zeros<float>({t, t});  // (T, T)
    for (std::size_t i = 0; i < t; ++i) {
        const std::size_t l = form.line[i], c = form.column[i];
        if (l == kNoLine || l % 2 == 0) continue;
        std::size_t key = kNoLine;
        if (pattern == PoemPattern::paired_line || pattern == PoemPattern::paired_next) {
            const auto k = at.find({l - 1, pattern == PoemPattern::paired_line ? c : c + 1});
            if (k != at.end()) key = k->second;
        } else if (l >= 3 && last.count(l) && last.count(l - 2)) {
            const std::size_t end = form.column[last.at(l)];
            const bool query = pattern == PoemPattern::rhyme ? c == end : end >= 1 && c == end - 1;
            if (query) key = last.at(l - 2);
        }
        if (key != kNoLine) p(i, key) = 1.0f;
    }
    return p;
}

}  // namespace attnlab::interp
