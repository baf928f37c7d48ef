// An experiment's input files (experiments/inputs.hpp): the provided table (core/input_files.hpp), then the disk.
#include "attnlab/experiments/inputs.hpp"

#include <fstream>
#include <iterator>
#include <optional>
#include <utility>

#include "attnlab/core/error.hpp"
#include "attnlab/core/input_files.hpp"
#include "attnlab/experiments/registry.hpp"

namespace attnlab::experiments {

void provide_input_file(const std::string& path, std::vector<std::uint8_t> bytes) {
    attnlab::provide_input_file(path, std::move(bytes));
}

void clear_input_files() { attnlab::clear_input_files(); }

std::vector<std::uint8_t> read_input_file(const std::string& path, const char* where) {
    if (std::optional<std::vector<std::uint8_t>> given = provided_input_file(path)) return std::move(*given);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
#ifdef __EMSCRIPTEN__
        fail<IoError>(where, ": the input file '", path, "' was not provided (lab.provideExperimentFile(path, bytes) first)");
#else
        fail<IoError>(where, ": cannot read the input file '", path,
                      "' (run from the repository root, or name its folder with --models / --data)");
#endif
    }
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string read_input_text(const std::string& path, const char* where) {
    const std::vector<std::uint8_t> bytes = read_input_file(path, where);
    return std::string(bytes.begin(), bytes.end());
}

std::vector<std::string> experiment_inputs(const Experiment& e, const Values& values) {
    return e.inputs ? e.inputs(values) : std::vector<std::string>{};
}

}  // namespace attnlab::experiments
