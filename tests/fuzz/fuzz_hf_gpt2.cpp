// libFuzzer target: the GPT-2 loader (attnlab/io/hf_gpt2.hpp) on arbitrary bytes, with and without
// a config.json.
//
// Holds for every input: load_hf_gpt2 either throws an attnlab::Error or returns a model that
// exports and loads back. An input starting with '{' is a config.json text up to its first NUL
// byte and the checkpoint after it; any other input is a checkpoint alone. A config whose sizes the
// shapes do not back is refused before the model is allocated (the sizes come from the shapes).
// Seeds: tests/fuzz/corpus/hf_gpt2/ (tiny GPT-2s in both layouts, F32/F16/BF16, and near-misses).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/io/hf_gpt2.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::uint8_t* nul = std::find(data, data + size, std::uint8_t{0});
    const bool has_config = size > 0 && data[0] == '{' && nul != data + size;
    const std::string config = has_config ? std::string(data, nul) : std::string();
    const std::vector<std::uint8_t> bytes(has_config ? nul + 1 : data, data + size);
    try {
        const attnlab::DecoderLM lm = attnlab::io::load_hf_gpt2(bytes, has_config ? &config : nullptr);
        const attnlab::io::HfGpt2Export out = attnlab::io::export_hf_gpt2(lm);
        attnlab::io::load_hf_gpt2(out.safetensors, &out.config_json);
    } catch (const attnlab::Error&) {
    }
    return 0;
}
