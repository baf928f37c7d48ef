// src/cli/args.hpp: flag parsing for the attnlab command-line tool.
//
// Each subcommand declares its flags (name, default, help) once; parse() fills the values and
// throws attnlab::ConfigError with a one-line message for an unknown flag, a missing value or a
// value of the wrong type. --help prints the generated usage.
//
//   Args args("demo", "Print every stage of one attention call.");
//   args.add("d-model", "8", "model width C");
//   args.parse(argc, argv, 2);
//   std::size_t c = args.get_size("d-model");
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnlab::cli {

class Args {
public:
    Args(std::string command, std::string summary);
    // A flag taking a value: --name VALUE (or --name=VALUE).
    void add(const std::string& name, const std::string& default_value, const std::string& help);
    // A boolean switch: --name sets it to true.
    void add_switch(const std::string& name, const std::string& help);
    // Parses argv[first..argc). Returns false if --help was given (usage already printed).
    bool parse(int argc, char** argv, int first);

    std::string usage() const;
    const std::string& get(const std::string& name) const;
    bool get_switch(const std::string& name) const;
    std::size_t get_size(const std::string& name) const;   // non-negative integer
    long long get_int(const std::string& name) const;
    double get_double(const std::string& name) const;
    // A number that fits in a float (NaN and infinities pass through for the engine to judge;
    // a finite value beyond the float range is refused, as converting it would be undefined).
    float get_float(const std::string& name) const;
    bool given(const std::string& name) const;

private:
    struct Flag {
        std::string name, value, help, default_value;
        bool is_switch = false, given = false;
    };
    const Flag& find(const std::string& name) const;
    Flag* lookup(const std::string& name);
    std::string command_, summary_;
    std::vector<Flag> flags_;
};

}  // namespace attnlab::cli
