#include "args.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <iostream>

#include "attnlab/core/error.hpp"

namespace attnlab::cli {

Args::Args(std::string command, std::string summary) : command_(std::move(command)), summary_(std::move(summary)) {}

void Args::add(const std::string& name, const std::string& default_value, const std::string& help) {
    flags_.push_back(Flag{name, default_value, help, default_value, false, false});
}

void Args::add_switch(const std::string& name, const std::string& help) {
    flags_.push_back(Flag{name, "0", help, "", true, false});
}

Args::Flag* Args::lookup(const std::string& name) {
    for (auto& f : flags_) {
        if (f.name == name) return &f;
    }
    return nullptr;
}

const Args::Flag& Args::find(const std::string& name) const {
    for (const auto& f : flags_) {
        if (f.name == name) return f;
    }
    fail<ConfigError>("internal: flag --", name, " was never declared for '", command_, "'");
}

bool Args::parse(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::cout << usage();
            return false;
        }
        if (arg.rfind("--", 0) != 0) {
            fail<ConfigError>("attnlab ", command_, ": unexpected argument '", arg, "' (flags start with --; see --help)");
        }
        std::string name = arg.substr(2), value;
        bool has_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            has_value = true;
        }
        Flag* flag = lookup(name);
        if (!flag) fail<ConfigError>("attnlab ", command_, ": unknown flag --", name, " (see attnlab ", command_, " --help)");
        if (flag->is_switch) {
            if (has_value) fail<ConfigError>("attnlab ", command_, ": --", name, " takes no value");
            flag->value = "1";
        } else {
            if (!has_value) {
                if (i + 1 >= argc) fail<ConfigError>("attnlab ", command_, ": --", name, " needs a value");
                value = argv[++i];
            }
            flag->value = value;
        }
        flag->given = true;
    }
    return true;
}

std::string Args::usage() const {
    std::string out = "usage: attnlab " + command_ + " [flags]\n\n" + summary_ + "\n\nflags:\n";
    for (const auto& f : flags_) {
        std::string left = "  --" + f.name + (f.is_switch ? "" : " VALUE");
        if (left.size() < 24) left.resize(24, ' ');
        out += left + " " + f.help;
        if (!f.is_switch && !f.default_value.empty()) out += " (default: " + f.default_value + ")";
        out += "\n";
    }
    return out;
}

const std::string& Args::get(const std::string& name) const { return find(name).value; }
bool Args::get_switch(const std::string& name) const { return find(name).value == "1"; }
bool Args::given(const std::string& name) const { return find(name).given; }

long long Args::get_int(const std::string& name) const {
    const std::string& v = get(name);
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0') fail<ConfigError>("attnlab ", command_, ": --", name, " must be an integer, got '", v, "'");
    if (errno == ERANGE) {
        fail<ConfigError>("attnlab ", command_, ": --", name, " = ", v, " is outside the 64-bit integer range");
    }
    return x;
}

std::size_t Args::get_size(const std::string& name) const {
    const long long x = get_int(name);
    if (x < 0) fail<ConfigError>("attnlab ", command_, ": --", name, " must be non-negative, got ", x);
    return static_cast<std::size_t>(x);
}

double Args::get_double(const std::string& name) const {
    const std::string& v = get(name);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0') fail<ConfigError>("attnlab ", command_, ": --", name, " must be a number, got '", v, "'");
    return x;
}

float Args::get_float(const std::string& name) const {
    const double x = get_double(name);
    if (std::isfinite(x) && std::fabs(x) > static_cast<double>(std::numeric_limits<float>::max())) {
        fail<ConfigError>("attnlab ", command_, ": --", name, " = ", get(name), " is outside the float range (|x| <= ",
                          std::numeric_limits<float>::max(), ")");
    }
    return static_cast<float>(x);
}

}  // namespace attnlab::cli
