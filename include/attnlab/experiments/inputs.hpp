// attnlab/experiments/inputs.hpp: the files an experiment reads (shipped models, held-out text).
//
// What it is for: an experiment that studies a shipped model (heads-real, importance --model)
// reads its checkpoint and a held-out text by path. Natively the path is a file on disk; in the
// WebAssembly module there is no disk, so the page's worker (or a Node test) fetches the bytes
// and provides them under the same path first (lab.provideExperimentFile(path, bytes)). A
// provided file wins over the disk, so a native test may provide one too.
// Not for: anything but the inputs of experiments (models are opened with Model::load).
//
//   attnlab::experiments::provide_input_file("models/tang.safetensors", bytes);
//   std::vector<std::uint8_t> b = attnlab::experiments::read_input_file("models/tang.safetensors", "heads-real");
//   attnlab::experiments::clear_input_files();
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::experiments {

// The table of core/input_files.hpp (one for every reader of provided files; text/corpora.hpp
// reads it too). Keeps `bytes` as the file at `path` (replacing one provided before).
void provide_input_file(const std::string& path, std::vector<std::uint8_t> bytes);
// Forgets every provided file.
void clear_input_files();
// The provided file at `path`, else the file on disk. IoError naming `where`, the path and,
// in the WebAssembly module, that it was not provided.
std::vector<std::uint8_t> read_input_file(const std::string& path, const char* where);
std::string read_input_text(const std::string& path, const char* where);

}  // namespace attnlab::experiments
