#include "checkpoint_file.hpp"

#include <fstream>
#include <iterator>
#include <algorithm>
#include <optional>
#include <set>

#include "attnlab/io/safetensors.hpp"
#include "model_flags.hpp"
#include "pretrained.hpp"

namespace attnlab::cli {
void write_checkpoint(const Model& model, const Args& args, const std::string& path) {
    io::SafeTensors st = io::SafeTensors::parse(model.save());
    for (const char* key : task_flag_names()) {
        if (!args.get(key).empty()) st.metadata()[std::string("task.") + key] = args.get(key);
    }
    st.write_file(path);
}

LoadedCheckpoint read_checkpoint(const Args& args, bool task_free, const std::string& config_path) {
    const std::string& path = args.get("model");
    if (path.empty()) fail<ConfigError>("attnlab ", "--model is required (a checkpoint from attnlab train --save)");
    const std::vector<std::uint8_t> bytes = read_file_bytes(path, "checkpoint");
    if (is_hf_gpt2_file(bytes)) {
        if (!task_free) {
            fail<ConfigError>("attnlab: '", path, "' is a GPT-2 checkpoint, trained on no task of attnlab's; "
                              "use attnlab logits or generate");
        }
        return LoadedCheckpoint{load_hf_gpt2_model(bytes, config_path), nullptr};
    }
    if (!config_path.empty()) {
        fail<ConfigError>("attnlab: --config is for GPT-2 checkpoints; '", path, "' is an attnlab checkpoint, whose config is inside it");
    }
    Model model = Model::load(bytes);
    const io::SafeTensors st = io::SafeTensors::parse(bytes);
    auto stored = [&](const char* key) -> std::string {
        const auto it = st.metadata().find(std::string("task.") + key);
        return it == st.metadata().end() ? std::string() : it->second;
    };
    auto pick = [&](const char* key) { return args.given(key) ? args.get(key) : stored(key); };
    // A model trained on a corpus (attnlab train --corpus) has no generated task; it carries its tokenizer.
    if (!stored("corpus").empty()) {
        if (!task_free) {
            fail<ConfigError>("attnlab: '", path, "' was trained on the corpus ", stored("corpus"),
                              ", not on a generated task");
        }
        return LoadedCheckpoint{std::move(model), nullptr};
    }
    const TaskOptions options = task_options_of(pick);
    std::string name = pick("task");
    if (name.empty()) name = args.get("task");
    return LoadedCheckpoint{std::move(model), make_task(name, options)};
}

std::vector<std::int32_t> encode_text(const Task& task, const std::string& text) {
    if (task.name() != "char_lm") {
        fail<ConfigError>("--text needs a character-level model (task char_lm), this one was trained on ", task.name(),
                          "; use --prompt with token ids");
    }
    const std::set<unsigned char> alphabet(char_lm_corpus().begin(), char_lm_corpus().end());
    const std::vector<unsigned char> symbols(alphabet.begin(), alphabet.end());
    std::vector<std::int32_t> ids;
    for (unsigned char ch : text) {
        const auto it = std::lower_bound(symbols.begin(), symbols.end(), ch);
        if (it == symbols.end() || *it != ch) {
            fail<ConfigError>("--text: character '", static_cast<char>(ch), "' is not in the model's alphabet");
        }
        ids.push_back(static_cast<std::int32_t>(it - symbols.begin()));
    }
    return ids;
}

}  // namespace attnlab::cli
