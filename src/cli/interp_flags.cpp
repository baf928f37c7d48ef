#include "interp_flags.hpp"

#include <fstream>
#include <sstream>

#include "attnlab/core/error.hpp"
#include "attnlab/interp/run.hpp"
#include "attnlab/io/safetensors.hpp"
#include "checkpoint_file.hpp"
#include "model_flags.hpp"
#include "pretrained.hpp"
#include "text_flags.hpp"

namespace attnlab::cli {

void add_subject_flags(Args& args) {
    args.add("model", "", "decoder checkpoint: attnlab's, or a GPT-2 model.safetensors");
    args.add("config", "", "config.json of a GPT-2 checkpoint (without it the sizes come from the shapes)");
    args.add("tokenizer", "", "directory of a tokenizer's files, for --text (else the checkpoint's own)");
}

Subject load_subject(const Args& args, const char* where) {
    const std::string& path = args.get("model");
    if (path.empty()) fail<ConfigError>(where, ": --model FILE is required");
    const std::vector<std::uint8_t> bytes = read_file_bytes(path, "checkpoint");
    Subject s{is_hf_gpt2_file(bytes) ? load_hf_gpt2_model(bytes, args.get("config")) : Model::load(bytes), nullptr};
    if (!s.model.is_decoder() || s.model.is_lstm()) {
        fail<ConfigError>(where, ": --model holds no Transformer decoder (the tools read a causal language model's heads)");
    }
    if (!is_hf_gpt2_file(bytes)) {
        if (!args.get("config").empty()) {
            fail<ConfigError>(where, ": --config is for GPT-2 checkpoints; '", path, "' is an attnlab checkpoint, whose config is inside it");
        }
        const io::SafeTensors st = io::SafeTensors::parse(bytes);
        const auto task = st.metadata().find("task.task");
        if (task != st.metadata().end() && task->second == "char_lm") s.task = make_task("char_lm");
    }
    apply_tokenizer_flag(args, s.model);
    return s;
}

std::vector<std::int32_t> sequence_from(const Args& args, const Subject& subject, const std::string& text_flag,
                                        const std::string& tokens_flag, const char* where) {
    if (args.given(text_flag) == args.given(tokens_flag)) {
        fail<ConfigError>(where, ": give the sequence as --", tokens_flag, " 1,2,3 or as --", text_flag, " TEXT (exactly one)");
    }
    std::vector<std::int32_t> ids;
    if (args.given(tokens_flag)) {
        ids = parse_token_ids(args.get(tokens_flag), where);
    } else if (subject.tokenizer()) {
        ids = subject.tokenizer()->encode(args.get(text_flag));
    } else if (subject.task) {
        ids = encode_text(*subject.task, args.get(text_flag));
    } else {
        fail<ConfigError>(where, ": --", text_flag, " needs --tokenizer DIR (the model carries no tokenizer)");
    }
    if (ids.empty()) fail<ConfigError>(where, ": the text \"", args.get(text_flag), "\" has no tokens");
    interp::check_tokens(subject.decoder(), ids, where);
    return ids;
}

std::string token_label(const Subject& subject, std::int32_t id) {
    const text::Tokenizer* tokenizer = subject.tokenizer();
    if (!tokenizer || static_cast<std::size_t>(id) >= tokenizer->vocab_size()) return "";
    return nlohmann::json(tokenizer->decode({id})).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::pair<std::size_t, std::size_t>> parse_heads(const std::string& list, const DecoderLM& model,
                                                             const char* where) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        const std::size_t dot = item.find('.');
        std::size_t layer = 0, head = 0, used_l = 0, used_h = 0;
        bool ok = dot != std::string::npos && dot > 0 && dot + 1 < item.size() && item[0] != '-' && item[dot + 1] != '-';
        if (ok) {
            try {
                layer = std::stoul(item.substr(0, dot), &used_l);
                head = std::stoul(item.substr(dot + 1), &used_h);
            } catch (const std::exception&) {
                ok = false;
            }
        }
        if (!ok || used_l != dot || used_h != item.size() - dot - 1) {
            fail<ConfigError>(where, ": heads are layer.head pairs separated by commas (e.g. 0.1,1.3), got '", item, "'");
        }
        interp::check_head(model, layer, head, where);
        out.emplace_back(layer, head);
    }
    if (out.empty()) fail<ConfigError>(where, ": name at least one head as layer.head (e.g. 0.1)");
    return out;
}

std::int32_t token_flag(const Args& args, const std::string& name, const DecoderLM& model, const char* where) {
    const std::string& text = args.get(name);
    std::size_t used = 0;
    long long id = -1;
    try {
        id = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || id < 0) fail<ConfigError>(where, ": --", name, " is one token id, got '", text, "'");
    const std::size_t v = model.config().vocab_size;
    if (static_cast<unsigned long long>(id) >= v) fail<ValueError>(where, ": --", name, " ", id, " is outside the vocabulary 0..", v - 1);
    return static_cast<std::int32_t>(id);
}

void write_json_file(const nlohmann::json& json, const std::string& path, const char* where) {
    std::ofstream file(path);
    if (!(file << json.dump() << "\n")) fail<IoError>(where, ": cannot write '", path, "'");
}

}  // namespace attnlab::cli
