// The text forms of config fields (model/field_text.hpp): the checkpoint metadata's, shared by
// the CLI's flags. Choices are templates in the header.
#include "attnlab/model/field_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {
[[noreturn]] void bad_value(const char* where, const char* key, const char* expected, const std::string& text) {
    fail<ConfigError>(where, ": ", key, " must be ", expected, ", got '", text, "'");
}
}  // namespace

std::string format_field(std::size_t value) { return std::to_string(value); }
std::string format_field(bool value) { return value ? "true" : "false"; }
std::string format_field(float value) {
    std::ostringstream out;
    out.precision(9);
    out << value;
    return out.str();
}
std::string format_field(double value) {
    std::ostringstream out;
    out.precision(17);
    out << value;
    return out.str();
}
std::string format_field(const ScaleOptions& value) {
    if (!value.enabled) return "off";
    return value.factor ? format_field(*value.factor) : "auto";
}
std::string format_field(const std::optional<float>& value) { return value ? format_field(*value) : "none"; }
std::string format_field(const std::vector<std::size_t>& value) {
    std::string out;
    for (std::size_t v : value) out += (out.empty() ? "" : ",") + std::to_string(v);
    return out;
}

void parse_field(const char* where, const char* key, const std::string& text, std::size_t& out) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || text[0] == '+' || *end != '\0' || errno == ERANGE ||
        static_cast<std::size_t>(n) != n) {  // beyond a 32-bit size_t (WebAssembly)
        bad_value(where, key, "a non-negative integer", text);
    }
    out = static_cast<std::size_t>(n);
}
void parse_field(const char* where, const char* key, const std::string& text, bool& out) {
    if (text != "true" && text != "false") bad_value(where, key, "'true' or 'false'", text);
    out = text == "true";
}
void parse_field(const char* where, const char* key, const std::string& text, float& out) {
    char* end = nullptr;
    errno = 0;
    const float x = std::strtof(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x)) bad_value(where, key, "a finite number", text);
    out = x;
}
void parse_field(const char* where, const char* key, const std::string& text, double& out) {
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x)) bad_value(where, key, "a finite number", text);
    out = x;
}
void parse_field(const char* where, const char* key, const std::string& text, ScaleOptions& out) {
    ScaleOptions s;
    if (text == "off") {
        s.enabled = false;
    } else if (text != "auto") {
        float x = 0.0f;
        parse_field(where, key, text, x);
        s.factor = x;
    }
    out = s;
}
void parse_field(const char* where, const char* key, const std::string& text, std::optional<float>& out) {
    if (text == "none") {
        out.reset();
        return;
    }
    float x = 0.0f;
    parse_field(where, key, text, x);
    out = x;
}
void parse_field(const char* where, const char* key, const std::string& text, std::vector<std::size_t>& out) {
    std::vector<std::size_t> values;
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        if (comma + 1 == text.size()) bad_value(where, key, "a comma-separated list of non-negative integers", text);
        parse_field(where, key, text.substr(start, comma - start), values.emplace_back());
        start = comma + 1;
    }
    out = std::move(values);
}

}  // namespace attnlab
