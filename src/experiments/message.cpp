// Messages (experiments.hpp): a conclusion or timing line as template id + values, rendered in
// English with the experiment's template table.
#include <algorithm>
#include <utility>

#include "attnlab/core/error.hpp"
#include "attnlab/experiments/experiments.hpp"

namespace attnlab::experiments {

MessageValue::MessageValue(std::string value) : text(std::move(value)) {}
MessageValue::MessageValue(const char* value) : text(value) {}
MessageValue::MessageValue(std::vector<Message> list, std::string joined_by)
    : parts(std::move(list)), separator(std::move(joined_by)), is_list(true) {}
MessageValue::MessageValue(Message phrase) : parts{std::move(phrase)}, is_list(true) {}

std::string render_message(const Message& m, const MessageTemplates& templates) {
    const auto entry = std::find_if(templates.begin(), templates.end(), [&](const auto& t) { return t.first == m.id; });
    if (entry == templates.end()) fail<Error>("render_message: no template '", m.id, "'");
    const std::string& text = entry->second;
    std::vector<bool> used(m.values.size(), false);
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] != '{') {
            out += text[i++];
            continue;
        }
        const std::size_t close = text.find('}', i);
        if (close == std::string::npos) fail<Error>("render_message: template '", m.id, "' has an unclosed '{'");
        const std::string name = text.substr(i + 1, close - i - 1);
        const auto value = std::find_if(m.values.begin(), m.values.end(), [&](const auto& v) { return v.first == name; });
        if (value == m.values.end()) fail<Error>("render_message: template '", m.id, "' needs a value '", name, "'");
        used[static_cast<std::size_t>(value - m.values.begin())] = true;
        const MessageValue& v = value->second;
        if (!v.is_list) {
            out += v.text;
        } else {
            for (std::size_t p = 0; p < v.parts.size(); ++p) {
                out += (p ? v.separator : "") + render_message(v.parts[p], templates);
            }
        }
        i = close + 1;
    }
    for (std::size_t k = 0; k < used.size(); ++k) {
        if (!used[k]) fail<Error>("render_message: template '", m.id, "' has no place for the value '", m.values[k].first, "'");
    }
    return out;
}

}  // namespace attnlab::experiments
