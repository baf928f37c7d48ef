#include "pretrained.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "attnlab/core/error.hpp"
#include "attnlab/io/hf_gpt2.hpp"
#include "attnlab/io/safetensors.hpp"

namespace attnlab::cli {

std::vector<std::uint8_t> read_file_bytes(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail<IoError>("cannot open ", what, " '", path, "'");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool is_hf_gpt2_file(const std::vector<std::uint8_t>& bytes) {
    try {
        return io::is_hf_gpt2(io::parse_safetensors_header(bytes.data(), bytes.size(), bytes.size()));
    } catch (const Error&) {
        // A damaged file: judged by its header's text, so that a truncated GPT-2 checkpoint gets
        // the GPT-2 loader's message rather than the attnlab one's.
        if (bytes.size() < 8) return false;
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(
            bytes.size() - 8, std::min<std::uint64_t>(io::SafeTensors::max_header_size, [&] {
                std::uint64_t v = 0;
                for (int i = 7; i >= 0; --i) v = (v << 8) | bytes[static_cast<std::size_t>(i)];
                return v;
            }())));
        const std::string header(reinterpret_cast<const char*>(bytes.data()) + 8, n);
        return header.find("\"format\":\"attnlab\"") == std::string::npos &&
               (header.find("\"wte.weight\"") != std::string::npos ||
                header.find("\"transformer.wte.weight\"") != std::string::npos);
    }
}

std::string& loader_notes() {
    static std::string notes;
    return notes;
}

Model load_hf_gpt2_model(const std::vector<std::uint8_t>& bytes, const std::string& config_path) {
    std::string config;
    if (!config_path.empty()) {
        const std::vector<std::uint8_t> text = read_file_bytes(config_path, "config");
        config.assign(text.begin(), text.end());
    }
    std::vector<std::string> notes;
    DecoderLM lm = io::load_hf_gpt2(bytes, config_path.empty() ? nullptr : &config, &notes);
    for (const std::string& note : notes) {
        std::string& said = loader_notes();
        said += (said.empty() ? "" : "; ") + note;
    }
    return Model(AnyModel(std::move(lm)));
}

Model load_model_file(const std::string& path, const std::string& config_path, const char* where) {
    if (path.empty()) fail<ConfigError>(where, ": --model FILE is required");
    const std::vector<std::uint8_t> bytes = read_file_bytes(path, "checkpoint");
    if (is_hf_gpt2_file(bytes)) return load_hf_gpt2_model(bytes, config_path);
    if (!config_path.empty()) {
        fail<ConfigError>(where, ": --config is for GPT-2 checkpoints; '", path, "' is an attnlab checkpoint, whose config is inside it");
    }
    return Model::load(bytes);
}

void require_prompt_fits(const Model& model, std::size_t n, const char* where) {
    const ModelConfig& c = model.config();
    if (c.positional == PositionalKind::learned && n > c.max_len) {
        fail<ConfigError>(where, ": the prompt has ", n, " tokens, more than the model's ", c.max_len,
                          " positions (n_positions)");
    }
}

}  // namespace attnlab::cli
