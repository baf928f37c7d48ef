// attnlab/experiments/registry.hpp: every experiment of the article as one definition.
//
// What it is for: one entry per experiment — its name, the article section, the claim, its
// parameters (kind, default, range, help), the settings of its --quick form and the function
// that runs it. The CLI (`attnlab experiment <name>`: flags, --help, --quick, --csv, --json),
// the JavaScript API (lab.experiments(), lab.runExperiment()) and the README table
// (scripts/experiments_table.sh) all read this list, so a new experiment is one entry in
// src/experiments/registry.cpp plus its run file. Parameter defaults are read from the options
// struct of the experiment (experiments.hpp), so each default is written once.
// Not for: formatting results (the CLI prints, the page plots) or training logic (the run files).
//
//   const auto& e = attnlab::experiments::find_experiment("scaling");
//   auto values = attnlab::experiments::resolve_values(e, {{"steps", "40"}}, /*quick=*/false);
//   attnlab::experiments::Result r = e.run(values, {});
//   std::puts(r.conclusion.c_str());
//   std::puts(attnlab::experiments::result_to_json(r).c_str());
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/experiments/experiments.hpp"

namespace attnlab::experiments {

// What values a parameter takes. Lists are comma-separated in their text form ("1,2,4").
enum class ParameterKind { integer, number, text, integers, texts };
const char* parameter_kind_name(ParameterKind kind);  // "integer", "number", "text", "integers", "texts"

struct Parameter {
    std::string name;           // the CLI flag without "--" ("d-model"); JavaScript uses js_name(name) ("dModel")
    ParameterKind kind = ParameterKind::integer;
    std::string default_value;  // text form: "64", "0.003", "rope", "1,2,4"
    double min = 0.0;           // integer, number, integers: inclusive range of every value
    double max = 0.0;
    std::vector<std::string> choices;  // text, texts: the allowed values (empty: any)
    std::string help;
    // text: values offered beside any other (a page, which reads only the files it serves,
    // offers these as its choices; the CLI takes any value).
    std::vector<std::string> suggestions;
};

// The resolved parameters of one run, as text, read back typed. Every read names the parameter
// in its error; values were range-checked by resolve_values.
class Values {
public:
    Values() = default;
    explicit Values(std::map<std::string, std::string> values) : values_(std::move(values)) {}
    const std::string& text(const std::string& name) const;
    std::size_t size(const std::string& name) const;
    float number(const std::string& name) const;
    std::vector<std::size_t> sizes(const std::string& name) const;
    std::vector<std::string> texts(const std::string& name) const;
    const std::map<std::string, std::string>& all() const { return values_; }

private:
    std::map<std::string, std::string> values_;
};

using RunFunction = Result (*)(const Values& values, const ProgressFn& progress);
// The files a run with `values` reads (experiments/inputs.hpp), relative as its parameters name them.
using InputsFunction = std::vector<std::string> (*)(const Values& values);

struct Experiment {
    std::string name;     // "kv-heads"
    std::string section;  // "§3.3"
    std::string claim;    // the article's claim, one sentence
    std::string summary;  // what the experiment runs, one line
    std::vector<Parameter> parameters;
    // The --quick form: parameter values that make it run in a few seconds on one thread.
    std::vector<std::pair<std::string, std::string>> quick;
    RunFunction run = nullptr;
    // The files it reads (a shipped model, a held-out text), or null: it reads none. The page's
    // worker fetches exactly these before the run (lab.experimentInputs).
    InputsFunction inputs = nullptr;
    // The English templates of its conclusion and timing messages (Result::conclusion_message).
    MessageTemplates messages;
};

// Every experiment, in the order of the article's table.
const std::vector<Experiment>& experiments();
// The experiment `name` ('_' reads as '-'); ConfigError naming it and the valid names otherwise.
const Experiment& find_experiment(const std::string& name);

// "d-model" -> "dModel": the JavaScript name of a parameter.
std::string js_name(const std::string& name);

// The defaults, then the quick settings when `quick`, then `given` (keys are parameter names,
// or their js_name when `js_names`). ConfigError naming the experiment, the key and the valid
// names for an unknown key; naming the value and the allowed range or choices for a bad value.
Values resolve_values(const Experiment& experiment, const std::map<std::string, std::string>& given, bool quick,
                      bool js_names = false);

// Runs `experiment` with `values` and fills Result::command with the CLI command that repeats it.
Result run_experiment(const Experiment& experiment, const Values& values, const ProgressFn& progress = {});

// The files a run of `experiment` with `values` reads: empty for one that reads none.
std::vector<std::string> experiment_inputs(const Experiment& experiment, const Values& values);

// "attnlab experiment <name> --flag value ..." with every parameter's value.
std::string rerun_command(const Experiment& experiment, const Values& values);

// The result as JSON: {name, claim, command, config: [[key, value]], tables: [{name, columns,
// rows}], series: [{name, xLabel, yLabel, x, lines: [{name, y}]}], notes, conclusion,
// conclusionMessage, verdict ("held" | "partly" | "not_held" | "untested"), timing, timingMessage}.
// A message is {id, values: {name: text | {separator, parts: [message]}}}; timingMessage is null
// when there is no timing line. NaN is written as null. The CLI's --json and the JavaScript result
// share this form.
std::string result_to_json(const Result& result);
// The registry as JSON: [{name, section, claim, summary, parameters: [{name, flag, kind,
// default, min, max, choices, help}], quick: {jsName: value}, messages: {id: englishTemplate}}],
// defaults typed (numbers, strings, arrays).
std::string experiments_to_json();

}  // namespace attnlab::experiments
