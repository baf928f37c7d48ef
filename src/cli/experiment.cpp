// `attnlab experiment <name>`: runs one of the article's claims. Everything about an experiment
// (its flags, defaults, ranges, --quick settings) comes from its registry entry
// (experiments/registry.hpp); this file only parses flags, prints the result and writes its
// curves (--csv) and the whole result (--json).
//
//   attnlab experiment                      the list
//   attnlab experiment --names              the names, one a line (scripts)
//   attnlab experiment --metadata           every entry's metadata as JSON (lab.experiments()'s form)
//   attnlab experiment scaling --help       its flags with their defaults and ranges
//   attnlab experiment scaling --quick --csv curves.csv --json result.json
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <unistd.h>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/experiments/registry.hpp"
#include "commands.hpp"
#include "engine_flags.hpp"

namespace attnlab::cli {
namespace {

namespace ex = attnlab::experiments;

// The flags the CLI adds to every experiment's parameters.
const char* const kCliFlags[] = {"quick", "csv", "json", "quiet"};

void print_list() {
    std::cout << "usage: attnlab experiment <name> [flags]   (attnlab experiment <name> --help for its flags)\n\n"
                 "experiments:\n";
    for (const auto& e : ex::experiments()) {
        std::printf("  %-12s %-10s %s\n", e.name.c_str(), e.section.c_str(), e.summary.c_str());
    }
    std::cout << "\nEvery experiment takes --quick (its few-second form), --csv FILE, --json FILE, --threads N, --isa NAME,\n"
                 "--quiet.\n";
}

std::string range_text(const ex::Parameter& p) {
    const bool integer = p.kind == ex::ParameterKind::integer || p.kind == ex::ParameterKind::integers;
    auto num = [integer](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, integer ? "%.0f" : "%g", v);
        return std::string(buf);
    };
    switch (p.kind) {
        case ex::ParameterKind::integer:
        case ex::ParameterKind::number: return " [" + num(p.min) + ", " + num(p.max) + "]";
        case ex::ParameterKind::integers: return " (list, each in [" + num(p.min) + ", " + num(p.max) + "])";
        case ex::ParameterKind::text:
        case ex::ParameterKind::texts: {
            if (p.choices.empty()) return "";
            std::string s;
            for (const auto& c : p.choices) s += (s.empty() ? "" : ", ") + c;
            return std::string(p.kind == ex::ParameterKind::texts ? " (list of: " : " (one of: ") + s + ")";
        }
    }
    return "";
}

// Progress on stderr: a rewritten line on a terminal, a line per quarter of each run otherwise.
ex::ProgressFn progress_printer(bool quiet) {
    if (quiet) return {};
    const bool tty = isatty(fileno(stderr));
    return [tty](const ex::Progress& p) {
        const bool quarter = p.step == p.total || (p.total >= 4 && p.step % (p.total / 4) == 0);
        if (tty ? (p.step % 5 == 0 || p.step == p.total) : quarter) {
            std::fprintf(stderr, tty ? "\r  [%zu/%zu] %-22s step %5zu/%zu  loss %.4f   " : "  [%zu/%zu] %s step %zu/%zu loss %.4f\n",
                         p.run_index + 1, p.num_runs, p.run.c_str(), p.step, p.total, static_cast<double>(p.loss));
            if (tty && p.step == p.total) std::fprintf(stderr, "\n");
        }
    };
}

void print_table(const ex::Table& t) {
    std::vector<std::size_t> width(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
    for (const auto& row : t.rows) {
        for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s = "  ";
        for (std::size_t c = 0; c < cells.size(); ++c) {
            s += cells[c];
            if (c + 1 < cells.size()) s += std::string(width[c] - cells[c].size() + 2, ' ');
        }
        std::printf("%s\n", s.c_str());
    };
    std::printf("\n%s\n", t.name.c_str());
    line(t.columns);
    std::size_t total = 0;
    for (std::size_t w : width) total += w + 2;
    std::printf("  %s\n", std::string(total - 2, '-').c_str());
    for (const auto& row : t.rows) line(row);
}

void write_csv(const ex::Result& r, const std::string& path) {
    for (std::size_t i = 0; i < r.series.size(); ++i) {
        const ex::Series& s = r.series[i];
        std::string file = path;
        if (r.series.size() > 1) {
            const std::size_t dot = path.find_last_of('.');
            file = dot == std::string::npos ? path + "_" + s.name : path.substr(0, dot) + "_" + s.name + path.substr(dot);
        }
        std::ofstream out(file);
        if (!out) fail<IoError>("attnlab experiment: cannot write --csv file '", file, "'");
        out << s.x_label;
        for (const auto& line : s.lines) out << ",\"" << line.name << '"';
        out << '\n';
        for (std::size_t j = 0; j < s.x.size(); ++j) {
            out << s.x[j];
            for (const auto& line : s.lines) out << ',' << line.y[j];
            out << '\n';
        }
        std::printf("wrote %s (%s: %s)\n", file.c_str(), s.name.c_str(), s.y_label.c_str());
    }
}

void print_result(const ex::Result& r) {
    std::printf("\nconfig:\n");
    for (const auto& [key, value] : r.config) std::printf("  %-18s %s\n", key.c_str(), value.c_str());
    for (const auto& t : r.tables) print_table(t);
    if (!r.notes.empty()) {
        std::printf("\nnotes:\n");
        for (const auto& n : r.notes) std::printf("  - %s\n", n.c_str());
    }
    std::printf("\nconclusion: %s\n", r.conclusion.c_str());
    if (!r.timing.empty()) std::printf("timing (differs run to run): %s\n", r.timing.c_str());
}

}  // namespace

int run_experiment(int argc, char** argv) {
    if (argc < 3 || !std::strcmp(argv[2], "--help") || !std::strcmp(argv[2], "-h") || !std::strcmp(argv[2], "list")) {
        print_list();
        return argc < 3 ? 2 : 0;
    }
    if (!std::strcmp(argv[2], "--names")) {
        for (const auto& e : ex::experiments()) std::printf("%s\n", e.name.c_str());
        return 0;
    }
    if (!std::strcmp(argv[2], "--metadata")) {
        std::printf("%s\n", ex::experiments_to_json().c_str());
        return 0;
    }
    const ex::Experiment& e = ex::find_experiment(argv[2]);
    Args args("experiment " + e.name, e.section + " " + e.summary + ".\nClaim: " + e.claim);
    for (const auto& p : e.parameters) args.add(p.name, p.default_value, p.help + range_text(p));
    std::string quick_help = "the few-second form:";
    for (const auto& [name, value] : e.quick) quick_help += " --" + name + " " + value;
    quick_help += " (flags given still win)";
    args.add_switch(kCliFlags[0], quick_help);
    args.add(kCliFlags[1], "", "write the curves here as CSV (one file per series when there are several)");
    args.add(kCliFlags[2], "", "write the whole result here as JSON (the form the JavaScript API returns)");
    args.add_switch(kCliFlags[3], "no progress on stderr");
    add_engine_flags(args);
    if (!args.parse(argc, argv, 3)) return 0;
    apply_engine_flags(args);

    std::map<std::string, std::string> given;
    for (const auto& p : e.parameters) {
        if (args.given(p.name)) given[p.name] = args.get(p.name);
    }
    const ex::Values values = ex::resolve_values(e, given, args.get_switch("quick"));
    std::printf("claim: %s\nre-run: %s\n", e.claim.c_str(), ex::rerun_command(e, values).c_str());
    std::fflush(stdout);  // before the progress lines on stderr
    const ex::Result r = ex::run_experiment(e, values, progress_printer(args.get_switch("quiet")));
    print_result(r);
    if (!args.get("csv").empty()) write_csv(r, args.get("csv"));
    if (!args.get("json").empty()) {
        std::ofstream out(args.get("json"));
        if (!out) fail<IoError>("attnlab experiment: cannot write --json file '", args.get("json"), "'");
        out << ex::result_to_json(r) << '\n';
        std::printf("wrote %s\n", args.get("json").c_str());
    }
    return 0;
}

}  // namespace attnlab::cli
