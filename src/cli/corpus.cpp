#include "corpus.hpp"

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/io/checkpoint.hpp"
#include "attnlab/io/safetensors.hpp"

namespace attnlab::cli {

void add_corpus_flags(Args& args) {
    args.add("corpus", "", "train a language model on real text: tang (regulated Tang poems), brown (the Brown "
                           "corpus) or a UTF-8 text file (documents split at blank lines); replaces --task");
    args.add("data", "data", "folder of the corpora (scripts/fetch_data.sh fills data/node_modules and data/derived; "
                             "the held-out splits are data/splits/)");
    args.add("chars", "4000", "char tokens: characters in the vocabulary (besides <unk>, <bos>, <eos>)");
    args.add("merges", "2048", "bpe tokens: byte-level BPE merges learned from the training text");
    args.add("tokens", "", "--corpus FILE: char (one character a token, the default) or bpe");
    args.add("script", "simplified", "tang: train on simplified or traditional characters");
    args.add_switch("save-f16", "store the saved model's parameters in fp16 (its held-out loss is then the fp16 model's)");
    args.add("stats", "", "--corpus: write the held-out loss and the run's facts as JSON to this file");
}

bool corpus_given(const Args& args) { return !args.get("corpus").empty(); }

CorpusSpec corpus_spec(const Args& args) {
    CorpusSpec s;
    s.corpus = args.get("corpus");
    s.data_dir = args.get("data");
    s.chars = args.get_size("chars");
    s.merges = args.get_size("merges");
    s.tokens = args.get("tokens");
    s.script = text::parse_script(args.get("script"));
    if (args.given("task")) fail<ConfigError>("attnlab train: give --task or --corpus, not both");
    return s;
}

std::size_t corpus_length(const Args& args) { return args.get("length").empty() ? 64 : args.get_size("length"); }

TextModelReport save_and_evaluate(const Model& model, const CorpusSpec& spec, const TextCorpus& corpus,
                                  std::size_t seq_len, const Args& args, const std::string& path) {
    io::SafeTensors st = io::SafeTensors::parse(model.save());
    for (const auto& [key, value] : spec.to_metadata()) st.metadata()[std::string(io::kTaskMetadataPrefix) + key] = value;
    st.metadata()[std::string(io::kTaskMetadataPrefix) + "length"] = std::to_string(seq_len);
    std::vector<std::uint8_t> bytes = st.serialize();
    if (args.get_switch("save-f16")) bytes = io::checkpoint_in_f16(bytes);
    if (!path.empty()) {
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        if (!out) fail<IoError>("attnlab train: cannot write '", path, "'");
        std::printf("saved %s (%zu bytes)\n", path.c_str(), bytes.size());
    }
    Model saved = Model::load(bytes);
    TextModelReport r;
    r.eval = evaluate_text(saved, corpus.heldout, seq_len, corpus.pad);
    r.bits_per_unit = corpus.bits_per_unit(r.eval);
    std::printf("held-out: %zu documents, %zu targets: loss %.4f nats/token, %.4f bits/token, %.4f bits per %s\n",
                corpus.heldout.size(), r.eval.targets, r.eval.mean_nats(), r.eval.bits_per_token(), r.bits_per_unit,
                corpus.unit.c_str());
    return r;
}

void write_stats(const Args& args, const TextCorpus& corpus, const Model& model, const TextModelReport& r,
                 std::size_t steps, double seconds) {
    if (args.get("stats").empty()) return;
    nlohmann::ordered_json j;
    j["corpus"] = corpus.name;
    j["tokenizer"] = std::string(corpus.tokenizer->kind());
    j["vocab_size"] = corpus.tokenizer->vocab_size();
    if (corpus.name == "tang") j["script"] = args.get("script");
    j["context"] = corpus_length(args);
    j["parameters"] = model.num_parameters();
    j["train_documents"] = corpus.train.size();
    j["heldout_documents"] = corpus.heldout.size();
    j["heldout_targets"] = r.eval.targets;
    j["heldout_loss_nats_per_token"] = r.eval.mean_nats();
    j["heldout_bits_per_token"] = r.eval.bits_per_token();
    j["heldout_unit"] = corpus.unit;
    j["heldout_units"] = corpus.heldout_units;
    j["heldout_bits_per_unit"] = r.bits_per_unit;
    if (corpus.tokenizer->kind() == std::string("char")) j["heldout_vocabulary_coverage"] = corpus.vocabulary_coverage;
    j["fp16"] = args.get_switch("save-f16");
    j["steps"] = steps;
    j["seconds"] = seconds;
    std::ofstream out(args.get("stats"));
    out << j.dump(2) << "\n";
    if (!out) fail<IoError>("attnlab train: cannot write --stats '", args.get("stats"), "'");
}

StoredCorpus stored_corpus(const std::vector<std::uint8_t>& checkpoint, const std::string& data_dir) {
    const io::SafeTensors st = io::SafeTensors::parse(checkpoint);
    std::map<std::string, std::string> task;
    const std::string prefix = io::kTaskMetadataPrefix;
    for (const auto& [key, value] : st.metadata()) {
        if (key.rfind(prefix, 0) == 0) task[key.substr(prefix.size())] = value;
    }
    StoredCorpus s;
    if (!task.count("corpus")) return s;
    s.present = true;
    s.spec = CorpusSpec::from_metadata(task, data_dir);
    s.seq_len = task.count("length") ? std::stoul(task.at("length")) : 64;
    return s;
}

int eval_text_model(Model& model, const StoredCorpus& stored, const std::string& path) {
    const TextCorpus corpus = make_text_corpus(stored.spec, model.shared_tokenizer());
    const TextEval e = evaluate_text(model, corpus.heldout, stored.seq_len, corpus.pad);
    std::printf("%s on corpus %s (held out: %zu documents, %zu targets): loss %.4f nats/token, %.4f bits/token, "
                "%.4f bits per %s\n",
                path.c_str(), corpus.name.c_str(), corpus.heldout.size(), e.targets, e.mean_nats(), e.bits_per_token(),
                corpus.bits_per_unit(e), corpus.unit.c_str());
    return 0;
}

}  // namespace attnlab::cli
