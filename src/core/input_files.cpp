// Provided input files (core/input_files.hpp): a path -> bytes table, guarded by a mutex.
#include "attnlab/core/input_files.hpp"

#include <map>
#include <mutex>

namespace attnlab {
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

std::optional<std::vector<std::uint8_t>> provided_input_file(const std::string& path) {
    Provided& p = provided();
    std::lock_guard<std::mutex> guard(p.lock);
    const auto it = p.files.find(path);
    if (it == p.files.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> provided_input_names(const std::string& dir) {
    const std::string prefix = dir + "/";
    Provided& p = provided();
    std::lock_guard<std::mutex> guard(p.lock);
    std::vector<std::string> names;
    for (auto it = p.files.lower_bound(prefix); it != p.files.end() && it->first.rfind(prefix, 0) == 0; ++it) {
        const std::string name = it->first.substr(prefix.size());
        if (!name.empty() && name.find('/') == std::string::npos) names.push_back(name);
    }
    return names;
}

}  // namespace attnlab
