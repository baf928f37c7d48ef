// libFuzzer target: the checkpoint loaders (attnlab/io/checkpoint.hpp, facade/any_model.hpp) on arbitrary bytes.
//
// Holds for every input: load_checkpoint and checkpoint_config either throw an attnlab::Error
// (IoError for the image, ConfigError folded into IoError for the stored config) or return a
// model, and a loaded model saves to an image that loads again. A checkpoint whose config asks
// for a model far larger than the tensors it stores is refused before the model is allocated.
// Seeds: tests/fuzz/corpus/checkpoint/ (an encoder and a decoder, and near-misses).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <variant>
#include <vector>

#include "attnlab/facade/any_model.hpp"
#include "attnlab/io/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::vector<std::uint8_t> bytes(data, data + size);
    try {
        attnlab::io::checkpoint_config(bytes);
    } catch (const attnlab::Error&) {
    }
    try {
        attnlab::AnyModel model = attnlab::load_checkpoint(bytes);
        const std::vector<std::uint8_t> saved =
            std::visit([](const auto& m) { return attnlab::io::save_checkpoint(m); }, model);
        attnlab::load_checkpoint(saved);
    } catch (const attnlab::Error&) {
    }
    return 0;
}
