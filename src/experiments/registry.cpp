// The registry (experiments/registry.hpp): the list of experiments, parameter resolution, the
// re-run command and the JSON forms shared by the CLI and the JavaScript API.
#include "attnlab/experiments/registry.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/isa.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');) {
        if (!part.empty()) parts.push_back(part);
    }
    return parts;
}

std::string join(const std::vector<std::string>& values, const char* separator) {
    std::string s;
    for (const auto& v : values) s += (s.empty() ? "" : separator) + v;
    return s;
}

// One number of `text`, checked against the parameter's range; ConfigError naming both.
double parse_number(const std::string& where, const Parameter& p, const std::string& item, bool integer) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    const bool whole = !item.empty() && end == item.c_str() + item.size() && std::isfinite(v);
    if (!whole || (integer && v != std::floor(v))) {
        fail<ConfigError>(where, ": ", p.name, " must be ", integer ? "an integer" : "a number",
                          p.kind == ParameterKind::integers ? " list (comma-separated)" : "", ", got '", item, "'");
    }
    if (v < p.min || v > p.max) {
        fail<ConfigError>(where, ": ", p.name, " must be in [", p.min, ", ", p.max, "], got ", item);
    }
    return v;
}

// Checks `text` against the parameter's kind, range and choices; returns it normalised.
std::string check_value(const std::string& where, const Parameter& p, const std::string& text) {
    switch (p.kind) {
        case ParameterKind::integer:
        case ParameterKind::number:
            parse_number(where, p, text, p.kind == ParameterKind::integer);
            return text;
        case ParameterKind::integers: {
            const auto items = split_list(text);
            if (items.empty()) fail<ConfigError>(where, ": ", p.name, " must not be empty");
            for (const auto& item : items) parse_number(where, p, item, true);
            return join(items, ",");
        }
        case ParameterKind::text:
        case ParameterKind::texts: {
            const auto items = p.kind == ParameterKind::text ? std::vector<std::string>{text} : split_list(text);
            if (items.empty() || items[0].empty()) fail<ConfigError>(where, ": ", p.name, " must not be empty");
            for (const auto& item : items) {
                if (p.choices.empty()) continue;
                bool known = false;
                for (const auto& c : p.choices) known = known || c == item;
                if (!known) {
                    fail<ConfigError>(where, ": ", p.name, " has no value '", item, "' (valid: ", join(p.choices, ", "),
                                      ")");
                }
            }
            return join(items, ",");
        }
    }
    return text;
}

const std::string& lookup(const std::map<std::string, std::string>& values, const std::string& name) {
    const auto it = values.find(name);
    if (it == values.end()) fail<ConfigError>("experiment values: no parameter '", name, "'");
    return it->second;
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// A parameter's text value as a typed JSON value.
nlohmann::json typed(const Parameter& p, const std::string& text) {
    switch (p.kind) {
        case ParameterKind::integer: return std::stoll(text);
        case ParameterKind::number: return std::stod(text);
        case ParameterKind::text: return text;
        case ParameterKind::integers: {
            nlohmann::json a = nlohmann::json::array();
            for (const auto& item : split_list(text)) a.push_back(std::stoll(item));
            return a;
        }
        case ParameterKind::texts: return split_list(text);
    }
    return text;
}

nlohmann::json message_json(const Message& m) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [name, v] : m.values) {
        if (!v.is_list) {
            values[name] = v.text;
            continue;
        }
        nlohmann::json parts = nlohmann::json::array();
        for (const Message& part : v.parts) parts.push_back(message_json(part));
        values[name] = {{"separator", v.separator}, {"parts", parts}};
    }
    return {{"id", m.id}, {"values", values}};
}

}  // namespace

const char* parameter_kind_name(ParameterKind kind) {
    switch (kind) {
        case ParameterKind::integer: return "integer";
        case ParameterKind::number: return "number";
        case ParameterKind::text: return "text";
        case ParameterKind::integers: return "integers";
        case ParameterKind::texts: return "texts";
    }
    return "?";
}

const std::string& Values::text(const std::string& name) const { return lookup(values_, name); }
std::size_t Values::size(const std::string& name) const { return std::stoull(text(name)); }
float Values::number(const std::string& name) const { return std::stof(text(name)); }
std::vector<std::size_t> Values::sizes(const std::string& name) const {
    std::vector<std::size_t> out;
    for (const auto& item : split_list(text(name))) out.push_back(std::stoull(item));
    return out;
}
std::vector<std::string> Values::texts(const std::string& name) const { return split_list(text(name)); }

const std::vector<Experiment>& experiments() {
    // The order the CLI, the page and the README's table list them in; a new experiment is one line
    // here. Each lists the shared templates of its notes after its own.
    static const std::vector<Experiment> all = [] {
        std::vector<Experiment> list = {
            detail::scaling_entry(),  detail::heads_entry(),      detail::cost_entry(), detail::lstm_entry(),
            detail::positional_entry(), detail::permutation_entry(), detail::mask_entry(), detail::fp16_entry(),
            detail::norm_entry(),     detail::kv_heads_entry(),   detail::variants_entry(), detail::normalizer_entry(),
            detail::tie_qk_entry(),   detail::importance_entry(), detail::series_entry(),
            detail::heads_real_entry(),
            detail::induction_entry(),
        };
        const MessageTemplates& common = detail::common_messages();
        for (Experiment& e : list) e.messages.insert(e.messages.end(), common.begin(), common.end());
        return list;
    }();
    return all;
}

const Experiment& find_experiment(const std::string& name) {
    std::string dashed = name;
    for (char& c : dashed) c = c == '_' ? '-' : c;
    std::vector<std::string> names;
    for (const auto& e : experiments()) {
        if (e.name == dashed) return e;
        names.push_back(e.name);
    }
    fail<ConfigError>("experiment: unknown experiment '", name, "' (valid: ", join(names, ", "), ")");
}

std::string js_name(const std::string& name) {
    std::string out;
    bool upper = false;
    for (char c : name) {
        if (c == '-') {
            upper = true;
            continue;
        }
        out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return out;
}

Values resolve_values(const Experiment& e, const std::map<std::string, std::string>& given, bool quick, bool js_names) {
    const std::string where = "experiment " + e.name;
    std::map<std::string, std::string> values;
    for (const auto& p : e.parameters) values[p.name] = p.default_value;
    auto find = [&](const std::string& key, bool js) -> const Parameter* {
        for (const auto& p : e.parameters) {
            if ((js ? js_name(p.name) : p.name) == key) return &p;
        }
        return nullptr;
    };
    if (quick) {
        for (const auto& [name, value] : e.quick) values[find(name, false)->name] = value;
    }
    for (const auto& [key, value] : given) {
        const Parameter* p = find(key, js_names);
        if (!p) {
            std::vector<std::string> valid;
            for (const auto& q : e.parameters) valid.push_back(js_names ? js_name(q.name) : q.name);
            fail<ConfigError>(where, ": unknown option '", key, "' (valid: ", join(valid, ", "), ")");
        }
        values[p->name] = value;
    }
    for (const auto& p : e.parameters) values[p.name] = check_value(where, p, values[p.name]);
    return Values(std::move(values));
}

std::string rerun_command(const Experiment& e, const Values& values) {
    std::string s = "attnlab experiment " + e.name;
    for (const auto& p : e.parameters) {
        std::string value = values.text(p.name);
        if (value.find_first_of(" \"'") != std::string::npos) value = "'" + value + "'";
        s += " --" + p.name + " " + value;
    }
    // The WebAssembly kernels compute the same numbers on every machine, natively as in the
    // page, so a run on them names them and its thread count: a training batch of more than 512
    // rows runs as micro-batches on one lane per thread (src/model/token/micro_batches.hpp), and
    // its gradient sums round differently on another thread count. Any other instruction set is this CPU's own (its last bits differ
    // from another's, docs/testing.md) and the command leaves both choices to the CPU.
    if (kernels::active_isa() == kernels::kWasmIsa) {
        s += std::string(" --isa ") + kernels::kWasmIsa + " --threads " + std::to_string(num_threads());
    }
    return s;
}

Result run_experiment(const Experiment& e, const Values& values, const ProgressFn& progress) {
    Result r = e.run(values, progress);
    r.name = e.name;
    r.command = rerun_command(e, values);
    return r;
}

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::untested: return "untested";
        case Verdict::held: return "held";
        case Verdict::partly: return "partly";
        case Verdict::not_held: return "not_held";
    }
    return "untested";
}

std::string result_to_json(const Result& r) {
    nlohmann::json j;
    j["name"] = r.name;
    j["claim"] = r.claim;
    j["command"] = r.command;
    j["config"] = nlohmann::json::array();
    for (const auto& [key, value] : r.config) j["config"].push_back({key, value});
    j["tables"] = nlohmann::json::array();
    for (const auto& t : r.tables) j["tables"].push_back({{"name", t.name}, {"columns", t.columns}, {"rows", t.rows}});
    j["series"] = nlohmann::json::array();
    for (const auto& s : r.series) {
        nlohmann::json lines = nlohmann::json::array();
        for (const auto& line : s.lines) {
            nlohmann::json y = nlohmann::json::array();
            for (double v : line.y) y.push_back(number_or_null(v));
            lines.push_back({{"name", line.name}, {"y", y}});
        }
        nlohmann::json x = nlohmann::json::array();
        for (double v : s.x) x.push_back(number_or_null(v));
        j["series"].push_back({{"name", s.name}, {"xLabel", s.x_label}, {"yLabel", s.y_label}, {"x", x}, {"lines", lines}});
    }
    j["notes"] = r.notes;
    j["phrases"] = nlohmann::json::array();
    for (const auto& [text, message] : r.phrases) {
        j["phrases"].push_back({{"text", text}, {"message", message_json(message)}});
    }
    j["conclusion"] = r.conclusion;
    j["conclusionMessage"] = message_json(r.conclusion_message);
    j["verdict"] = verdict_name(r.verdict);
    j["timing"] = r.timing;
    j["timingMessage"] = r.timing_message.id.empty() ? nlohmann::json(nullptr) : message_json(r.timing_message);
    return j.dump();
}

std::string experiments_to_json() {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& e : experiments()) {
        nlohmann::json params = nlohmann::json::array();
        for (const auto& p : e.parameters) {
            nlohmann::json q{{"name", js_name(p.name)}, {"flag", "--" + p.name}, {"kind", parameter_kind_name(p.kind)},
                             {"default", typed(p, p.default_value)}, {"help", p.help}};
            if (p.kind == ParameterKind::text || p.kind == ParameterKind::texts) {
                q["choices"] = p.choices;
                if (!p.suggestions.empty()) q["suggestions"] = p.suggestions;
            } else {
                q["min"] = p.min;
                q["max"] = p.max;
            }
            params.push_back(q);
        }
        nlohmann::json quick = nlohmann::json::object();
        for (const auto& [name, value] : e.quick) {
            for (const auto& p : e.parameters) {
                if (p.name == name) quick[js_name(name)] = typed(p, value);
            }
        }
        nlohmann::json messages = nlohmann::json::object();
        for (const auto& [id, text] : e.messages) messages[id] = text;
        all.push_back({{"name", e.name}, {"section", e.section}, {"claim", e.claim}, {"summary", e.summary},
                       {"parameters", params}, {"quick", quick}, {"messages", messages}});
    }
    return all.dump();
}

}  // namespace attnlab::experiments
