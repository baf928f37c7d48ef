// Provided input files (experiments/inputs.hpp): a path -> bytes table consulted before the disk.
#include "attnlab/experiments/inputs.hpp"

#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "attnlab/core/error.hpp"
#include "attnlab/experiments/registry.hpp"

namespace attnlab::experiments {
namespace {

struct Provided {
    std::mutex lock;
    std::map<std::string, std::vector<std::uint8_t>> files;
};
Provided& provided() {
    static Provided p;
    return p;
}

}  // namespace

void provide_input_file(const std::string& path, std::vector<std::uint8_t> bytes) {
    Provided& p = provided();
    std::lock_guard<std::mutex> guard(p.lock);
    p.files[path] = std::move(bytes);
}

void clear_input_files() {
    Provided& p = provided();
    std::lock_guard<std::mutex> guard(p.lock);
    p.files.clear();
}

std::vector<std::uint8_t> read_input_file(const std::string& path, const char* where) {
    {
        Provided& p = provided();
        std::lock_guard<std::mutex> guard(p.lock);
        const auto it = p.files.find(path);
        if (it != p.files.end()) return it->second;
    }
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
