// `attnlab export`: an attnlab decoder written in Hugging Face's GPT-2 layout (model.safetensors
// + config.json), for PyTorch / transformers to load as GPT2LMHeadModel.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/io/hf_gpt2.hpp"
#include "commands.hpp"
#include "pretrained.hpp"

namespace attnlab::cli {

int run_export(int argc, char** argv) {
    Args args("export", "Writes a decoder checkpoint in another format. hf-gpt2: DIR/model.safetensors + DIR/config.json in\n"
                        "Hugging Face's GPT-2 layout, for any decoder GPT-2 can express (learned positions, pre-LN, biases,\n"
                        "full causal softmax attention, GELU or ReLU); otherwise it says which setting prevents it.\n"
                        "With a tokenizer in the checkpoint, its files (vocab.json + merges.txt, or vocab.txt) go to DIR too.\n"
                        "example: attnlab export --model lm.safetensors --format hf-gpt2 --out lm-hf/");
    args.add("model", "", "decoder checkpoint written by attnlab train --save (or a GPT-2 model.safetensors)");
    args.add("config", "", "config.json, when --model is a GPT-2 checkpoint");
    args.add("format", "", "hf-gpt2");
    args.add("out", "", "directory to write (created if missing)");
    if (!args.parse(argc, argv, 2)) return 0;
    if (args.get("format") != "hf-gpt2") {
        fail<ConfigError>("attnlab export: --format must be hf-gpt2, got '", args.get("format"), "'");
    }
    if (args.get("out").empty()) fail<ConfigError>("attnlab export: --out DIR is required");
    Model model = load_model_file(args.get("model"), args.get("config"), "attnlab export");
    if (!model.is_decoder() || model.is_lstm()) {
        fail<ConfigError>("attnlab export: GPT-2 cannot express this model: kind ", std::string(model_kind_name(model.kind())),
                          ", architecture ", std::string(architecture_name(model.config().architecture)),
                          " (GPT-2 is a transformer decoder)");
    }
    const io::HfGpt2Export out = io::export_hf_gpt2(model.decoder());
    const std::filesystem::path dir(args.get("out"));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir)) fail<IoError>("attnlab export: cannot create the directory '", dir.string(), "'");
    const auto write = [&](const std::string& name, const char* data, std::size_t size) {
        std::ofstream file(dir / name, std::ios::binary);
        if (!file.write(data, static_cast<std::streamsize>(size))) {
            fail<IoError>("attnlab export: cannot write '", (dir / name).string(), "'");
        }
    };
    write("model.safetensors", reinterpret_cast<const char*>(out.safetensors.data()), out.safetensors.size());
    write("config.json", out.config_json.data(), out.config_json.size());
    std::size_t files = 2;
    if (const text::Tokenizer* tokenizer = model.tokenizer()) {
        for (const auto& [name, contents] : tokenizer->files()) {
            write(name, contents.data(), contents.size());
            ++files;
        }
    }
    std::printf("wrote %zu files to %s (GPT-2: %zu layers, %zu heads, n_embd %zu, vocab %zu)\n", files,
                dir.string().c_str(), model.config().num_layers, model.config().num_heads, model.config().d_model,
                model.config().vocab_size);
    return 0;
}

}  // namespace attnlab::cli
