#include "attnlab/text/script.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "attnlab/core/error.hpp"
#include "attnlab/text/unicode.hpp"

namespace attnlab::text {

const char* script_name(Script s) { return s == Script::simplified ? "simplified" : "traditional"; }

Script parse_script(std::string_view name) {
    if (name == "simplified") return Script::simplified;
    if (name == "traditional") return Script::traditional;
    fail<ConfigError>("parse_script: unknown script '", name, "' (valid: simplified, traditional)");
}

namespace {
// The single code point of `field`, or IoError naming the line.
char32_t one_character(std::string_view field, const char* where, std::size_t line) {
    if (!is_valid_utf8(field)) fail<IoError>(where, ": line ", line, " is not valid UTF-8");
    const std::vector<CodePoint> cps = decode_utf8(field, where);
    if (cps.size() != 1) fail<IoError>(where, ": line ", line, ": expected one character, got '", field, "'");
    return cps[0].value;
}

std::string map_text(std::string_view text, const std::unordered_map<char32_t, char32_t>& table, const char* where) {
    std::string out;
    out.reserve(text.size());
    for (const CodePoint& cp : decode_utf8(text, where)) {
        const auto it = table.find(cp.value);
        append_utf8(out, it == table.end() ? cp.value : it->second);
    }
    return out;
}
}  // namespace

ScriptConverter ScriptConverter::from_text(std::string_view text, const char* where) {
    ScriptConverter c;
    std::size_t line_no = 0;
    for (std::size_t pos = 0; pos < text.size();) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++line_no;
        if (line.empty() || line[0] == '#') continue;
        const std::size_t a = line.find(' '), b = line.find(' ', a == std::string_view::npos ? a : a + 1);
        if (a == std::string_view::npos || b == std::string_view::npos) {
            fail<IoError>(where, ": line ", line_no, ": expected 't2s FROM TO' or 's2t FROM TO', got '", line, "'");
        }
        const std::string_view kind = line.substr(0, a);
        const char32_t from = one_character(line.substr(a + 1, b - a - 1), where, line_no);
        const char32_t to = one_character(line.substr(b + 1), where, line_no);
        if (kind == "t2s") c.t2s_[from] = to;
        else if (kind == "s2t") c.s2t_[from] = to;
        else fail<IoError>(where, ": line ", line_no, ": unknown direction '", kind, "' (t2s or s2t)");
    }
    return c;
}

char32_t ScriptConverter::to_simplified(char32_t c) const {
    const auto it = t2s_.find(c);
    return it == t2s_.end() ? c : it->second;
}
char32_t ScriptConverter::to_traditional(char32_t c) const {
    const auto it = s2t_.find(c);
    return it == s2t_.end() ? c : it->second;
}
std::string ScriptConverter::to_simplified(std::string_view text) const {
    return map_text(text, t2s_, "ScriptConverter::to_simplified");
}
std::string ScriptConverter::to_traditional(std::string_view text) const {
    return map_text(text, s2t_, "ScriptConverter::to_traditional");
}
std::string ScriptConverter::to_script(std::string_view text, Script target) const {
    return target == Script::simplified ? to_simplified(text) : to_traditional(text);
}

Script ScriptConverter::detect(std::string_view text) const {
    std::size_t traditional = 0, simplified = 0;
    for (const CodePoint& cp : decode_utf8(text, "ScriptConverter::detect")) {
        if (to_simplified(cp.value) != cp.value) ++traditional;
        if (to_traditional(cp.value) != cp.value) ++simplified;
    }
    return traditional > simplified ? Script::traditional : Script::simplified;
}

ScriptConverter ScriptConverter::restricted_to(const std::set<char32_t>& simplified) const {
    ScriptConverter c;
    for (const auto& [t, s] : t2s_)
        if (simplified.count(s)) c.t2s_[t] = s;
    for (const auto& [s, t] : s2t_)
        if (simplified.count(s)) c.s2t_[s] = t;
    return c;
}

std::string ScriptConverter::text() const {
    std::string out;
    const auto write = [&](const char* kind, const std::unordered_map<char32_t, char32_t>& table) {
        const std::map<char32_t, char32_t> sorted(table.begin(), table.end());
        for (const auto& [from, to] : sorted) {
            out += kind;
            out += ' ';
            append_utf8(out, from);
            out += ' ';
            append_utf8(out, to);
            out += '\n';
        }
    };
    write("t2s", t2s_);
    write("s2t", s2t_);
    return out;
}

}  // namespace attnlab::text
