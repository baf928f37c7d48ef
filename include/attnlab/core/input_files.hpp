// attnlab/core/input_files.hpp: files given by path in memory, read before the disk.
//
// What it is for: code that reads inputs by path (an experiment's shipped model and held-out text,
// a named corpus's npm files) runs in the WebAssembly module too, which has no disk: the page's
// worker or a Node script reads the bytes and provides them under the same path first
// (lab.provideExperimentFile(path, bytes)). A provided file wins over the disk, so a native test
// may provide one too. experiments/inputs.hpp and text/corpora.hpp read through this table.
// Not for: models opened by the reader (Model::load takes bytes).
//
//   attnlab::provide_input_file("data/splits/tang_heldout.txt", bytes);
//   const std::vector<std::uint8_t>* b = attnlab::provided_input_file("data/splits/tang_heldout.txt");
//   attnlab::provided_input_names("data/splits");   // {"tang_heldout.txt"}
//   attnlab::clear_input_files();
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnlab {

// Keeps `bytes` as the file at `path` (replacing one provided before).
void provide_input_file(const std::string& path, std::vector<std::uint8_t> bytes);
// Forgets every provided file.
void clear_input_files();
// A copy of the provided file at `path`, or nothing when none was provided under that path.
std::optional<std::vector<std::uint8_t>> provided_input_file(const std::string& path);
// The names of the files provided directly in folder `dir` (paths "dir/name", "dir" given
// without a trailing '/'), sorted.
std::vector<std::string> provided_input_names(const std::string& dir);

}  // namespace attnlab
