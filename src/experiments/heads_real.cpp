// §3.2: "heads learn different patterns", on the shipped text models. Every head of `tang` and
// `brown` is scored on a fixed held-out text by the five head detectors (interp/detectors.hpp)
// and by patterns of the text itself (real_text.hpp): for poems the same column of the paired
// line (parallelism) and the previous rhyme position; for English the share a word of tag A
// puts on the nearest earlier word of tag B. Scores pool every query row of every sequence
// (the detectors' definition, with the rows of all sequences in one mean). A head's label is
// its best score when that reaches the threshold; the evidence of a label is the rows where the
// head puts the most weight on one key of its pattern.
#include <algorithm>
#include <map>

#include "attnlab/core/error.hpp"
#include "attnlab/interp/detectors.hpp"
#include "common.hpp"
#include "entries.hpp"
#include "real_text.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kHeadsRealClaim =
    "§3.2: the heads of a trained model learn different patterns (one the previous word, one the first token, "
    "one the rhyme); here the heads of the shipped tang and brown models on held-out text";
constexpr const char* kUnlabelled = "unlabelled";

const MessageTemplates& heads_real_messages() {
    static const MessageTemplates m = {
        {"conclusion",
         "{verdict}: a head is labelled by its best score when that is at least {threshold} (the mean share of "
         "its weight on the pattern's keys); {models}"},
        {"held", "the claim held: the heads of every model fall into two or more kinds"},
        {"partly", "the claim held for some models only: in the others at most one kind of head shows"},
        {"not_held", "the claim did NOT hold here: no model has heads of two kinds"},
        {"model", "{model}: {kinds} kinds among {heads} heads ({counts})"},
        {"count", "{count} {label}"},
    };
    return m;
}

// A row where a head puts `weight` on key `key` of its pattern, for query `query` of sequence `seq`.
struct Example {
    double weight;
    std::size_t seq, query, key;
};

// One head's pooled score against one pattern and its strongest rows.
struct Tally {
    double sum = 0.0;
    std::size_t rows = 0;
    std::vector<Example> top;
    std::optional<double> score() const { return rows ? std::optional<double>(sum / static_cast<double>(rows)) : std::nullopt; }
};

// Evidence rows see at least this many keys: a query near the start has few to choose from
// (row 1 sees two), so its whole weight on one says little.
constexpr std::size_t kEvidenceMinKeys = 5;

// Adds the rows of one head's weights (T, T) against pattern (T, T) to `tally`, keeping the
// `keep` rows of largest weight on one pattern key among those that see kEvidenceMinKeys keys
// or more (earlier rows first on a tie).
void tally_rows(Tally& tally, const float* weights, const Tensor2& pattern, std::size_t seq, std::size_t keep) {
    const std::size_t t = pattern.shape(0);
    for (std::size_t i = 1; i < t; ++i) {  // row 0: causal attention gives key 0 all its weight
        double on = 0.0, all = 0.0, best = -1.0;
        std::size_t best_key = 0;
        for (std::size_t j = 0; j <= i; ++j) {
            const double w = weights[i * t + j];
            all += w;
            if (pattern(i, j) == 0.0f) continue;
            on += w;
            if (w > best) best = w, best_key = j;
        }
        if (best < 0.0 || !(all > 0.0)) continue;
        tally.sum += on / all;
        ++tally.rows;
        if (i + 1 < kEvidenceMinKeys) continue;
        const Example e{best / all, seq, i, best_key};
        auto pos = std::find_if(tally.top.begin(), tally.top.end(), [&](const Example& x) { return e.weight > x.weight; });
        if (static_cast<std::size_t>(pos - tally.top.begin()) < keep) tally.top.insert(pos, e);
        if (tally.top.size() > keep) tally.top.pop_back();
    }
}

// "…白[日]依山尽，黄河入海[流]…": the text from the key to the query, both in brackets; a long
// span keeps the key's neighbours and the query's last eight.
std::string example_context(const text::Tokenizer& tok, const std::vector<std::int32_t>& ids, const Example& e) {
    auto piece = [&](std::size_t from, std::size_t to) {
        std::string s;
        for (std::size_t k = from; k < to; ++k) {
            const std::string label = detail::real_token_label(tok, ids[k]);
            s += k == e.key || k == e.query ? "[" + label + "]" : label;
        }
        return s;
    };
    const std::size_t begin = e.key > 0 ? e.key - 1 : 0, end = std::min(ids.size(), e.query + 2);
    if (e.query - e.key <= 14) return piece(begin, end);
    return piece(begin, e.key + 3) + " … " + piece(e.query - 8, end);
}

struct ModelHeads {
    std::string name;
    std::size_t heads = 0;
    std::map<std::string, std::size_t> counts;  // label -> heads
};

// Scores every head of one shipped model; adds its score table and its evidence rows.
ModelHeads score_model(const detail::RealText& text, const HeadsRealOptions& o, Result& r, Table& counts,
                       Table& evidence) {
    const DecoderLM& lm = text.model.decoder();
    const std::size_t layers = lm.config().num_layers, heads = lm.config().num_heads;
    std::vector<std::string> names;
    for (const auto& v : choice_values<HeadPattern>()) names.push_back(std::string(v.name));
    for (auto& n : names) std::replace(n.begin(), n.end(), '_', ' ');
    const std::vector<detail::RealPattern> extra = detail::real_patterns(text.name);
    for (const auto& p : extra) names.push_back(p.name);
    const std::size_t np = names.size();
    std::vector<Tally> tallies(layers * heads * np);
    for (std::size_t s = 0; s < text.sequences.size(); ++s) {
        const detail::RealSequence& seq = text.sequences[s];
        std::vector<Tensor2> patterns;
        for (const auto& v : choice_values<HeadPattern>()) patterns.push_back(interp::detection_pattern(v.value, seq.ids));
        for (const auto& p : extra) patterns.push_back(p.keys(seq));
        Index2 ids = Index2::from_shape({1, seq.ids.size()});
        std::copy(seq.ids.begin(), seq.ids.end(), ids.data());
        const Tensor4 maps = lm.attention_maps(ids);  // (L, H, T, T)
        const std::size_t t = seq.ids.size();
        for (std::size_t h = 0; h < layers * heads; ++h) {
            for (std::size_t p = 0; p < np; ++p) tally_rows(tallies[h * np + p], maps.data() + h * t * t, patterns[p], s, o.examples);
        }
    }
    Table table{detail::format("%s heads", text.name.c_str()), {"head"}, {}};
    for (const auto& n : names) table.columns.push_back(n);
    table.columns.push_back("label");
    ModelHeads out{text.name, layers * heads, {}};
    for (std::size_t h = 0; h < layers * heads; ++h) {
        std::vector<std::string> row{detail::format("%zu.%zu", h / heads, h % heads)};
        std::optional<std::size_t> best;
        for (std::size_t p = 0; p < np; ++p) {
            const auto score = tallies[h * np + p].score();
            row.push_back(score ? detail::number(*score, 3) : "-");
            if (score && *score >= o.threshold && (!best || *score > *tallies[h * np + *best].score())) best = p;
        }
        const std::string label = best ? names[*best] : kUnlabelled;
        row.push_back(label);
        table.rows.push_back(row);
        ++out.counts[label];
        if (!best) continue;
        for (const Example& e : tallies[h * np + *best].top) {
            const auto& ids = text.sequences[e.seq].ids;
            const text::Tokenizer& tok = *text.model.tokenizer();
            evidence.rows.push_back({text.name, row[0], label, detail::real_token_label(tok, ids[e.query]),
                                     detail::real_token_label(tok, ids[e.key]), detail::number(e.weight, 3),
                                     example_context(tok, ids, e)});
        }
    }
    for (const auto& n : names) {
        if (out.counts.count(n)) counts.rows.push_back({text.name, n, std::to_string(out.counts[n])});
    }
    if (out.counts.count(kUnlabelled)) counts.rows.push_back({text.name, kUnlabelled, std::to_string(out.counts[kUnlabelled])});
    r.tables.push_back(table);
    return out;
}

}  // namespace

Result run_heads_real(const HeadsRealOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_heads_real";
    if (o.models.empty()) fail<ConfigError>(where, ": models must not be empty");
    if (!(o.threshold > 0.0f && o.threshold <= 1.0f)) fail<ConfigError>(where, ": threshold must be in (0, 1], got ", o.threshold);
    Result r;
    r.name = "heads-real";
    r.claim = kHeadsRealClaim;
    r.config = {{"scores", "TransformerLens' head detector (\"mul\"), every query row but the first of every sequence "
                           "pooled; pattern rows without a key left out"},
                {"label", detail::format("the best score if at least %.2f, else unlabelled", static_cast<double>(o.threshold))}};
    Table counts{"counts", {"model", "label", "heads"}, {}};
    Table evidence{"samples: evidence", {"model", "head", "label", "query", "key", "weight", "context"}, {}};
    std::vector<ModelHeads> done;
    for (std::size_t m = 0; m < o.models.size(); ++m) {
        const std::string& name = o.models[m];
        const detail::RealText text = detail::load_real_text(o.models_dir + "/" + name + ".safetensors", o.data_dir,
                                                             name == "tang" ? o.poems : o.windows, where, name);
        const ModelConfig& c = text.model.config();
        r.config.push_back({name, detail::format("%s/%s.safetensors: %zu layers x %zu heads, d_model %zu; %s", o.models_dir.c_str(),
                                                 name.c_str(), c.num_layers, c.num_heads, c.d_model, text.source.c_str())});
        done.push_back(score_model(text, o, r, counts, evidence));
        if (progress) progress({name, m, o.models.size(), 1, 1, 0.0f});
    }
    r.tables.push_back(counts);
    r.tables.push_back(evidence);

    std::vector<Message> per_model;
    std::size_t varied = 0;
    for (const ModelHeads& m : done) {
        std::vector<Message> parts;
        std::size_t kinds = 0;
        for (const auto& row : counts.rows) {
            if (row[0] != m.name) continue;
            parts.push_back({"count", {{"count", row[2]}, {"label", row[1]}}});
            kinds += row[1] != kUnlabelled;
        }
        varied += kinds >= 2;
        per_model.push_back({"model", {{"model", m.name}, {"kinds", std::to_string(kinds)}, {"heads", std::to_string(m.heads)},
                                       {"counts", {parts, ", "}}}});
    }
    const char* verdict = varied == done.size() ? "held" : varied > 0 ? "partly" : "not_held";
    r.verdict = varied == done.size() ? Verdict::held : varied > 0 ? Verdict::partly : Verdict::not_held;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", Message{verdict, {}}},
                       {"threshold", detail::format("%.2f", static_cast<double>(o.threshold))},
                       {"models", {per_model, "; "}}}},
                     heads_real_messages());
    return r;
}

namespace {
const detail::ParameterTable<HeadsRealOptions>& heads_real_parameters() {
    using O = HeadsRealOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("models", &O::models_dir, {}, "folder of the shipped models (<name>.safetensors)")
        .text("data", &O::data_dir, {}, "folder of the held-out text: splits/ and node_modules/ (scripts/fetch_data.sh)")
        .texts("shipped", &O::models, detail::real_model_names(), "shipped models to read, comma-separated")
        .integer("poems", &O::poems, 1, 21, "tang: held-out poems")
        .integer("windows", &O::windows, 1, 16, "brown: held-out windows of the context length")
        .number("threshold", &O::threshold, 0.01, 1.0, "least score a head's label needs")
        .integer("examples", &O::examples, 1, 10, "evidence rows per labelled head");
    return table;
}
}  // namespace

Experiment detail::heads_real_entry() {
    Experiment e;
    e.name = "heads-real";
    e.section = "§3.2";
    e.claim = kHeadsRealClaim;
    e.summary = "shipped tang and brown models: every head's detector scores on held-out text, heads of each kind, evidence";
    e.parameters = heads_real_parameters().parameters();
    e.quick = {{"poems", "6"}, {"windows", "2"}};
    e.messages = heads_real_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_heads_real(heads_real_parameters().read(v), progress); };
    e.inputs = [](const Values& v) {
        const HeadsRealOptions o = heads_real_parameters().read(v);
        std::vector<std::string> files;
        for (const std::string& m : o.models) {
            for (std::string& f : detail::real_text_files(m, o.models_dir + "/" + m + ".safetensors", o.data_dir)) {
                files.push_back(std::move(f));
            }
        }
        return files;
    };
    return e;
}

}  // namespace attnlab::experiments
