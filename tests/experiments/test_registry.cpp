// The registry (experiments/registry.hpp): every experiment is listed once with parameters that
// resolve, bad names and values are refused with the valid ones, and each --quick form's
// conclusion agrees with the numbers of its own tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/experiments/registry.hpp"
#include "experiments/result_cells.hpp"

namespace ex = attnlab::experiments;
using namespace attnlab::experiments::testing;

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The verdict is set and says what the conclusion's opening phrase says: a claim that held has
// no "did NOT" in its conclusion, one that did not hold has, and an untested one neither holds
// nor fails.
// Its conclusion and timing are messages of its own template table (expect_messages_render).
void expect_verdict_matches_wording(const ex::Result& r) {
    expect_messages_render(r);
    const bool says_not = contains(r.conclusion, "did NOT");
    switch (r.verdict) {
        case ex::Verdict::held:
            EXPECT_FALSE(says_not || starts_with(r.conclusion, "half") || contains(r.conclusion, "held in part") ||
                         contains(r.conclusion, "not shown by this run"))
                << r.name << ": " << r.conclusion;
            break;
        case ex::Verdict::partly:
            EXPECT_TRUE(contains(r.conclusion, "held")) << r.name << ": " << r.conclusion;
            break;
        case ex::Verdict::not_held:
            EXPECT_TRUE(says_not) << r.name << ": " << r.conclusion;
            break;
        case ex::Verdict::untested:
            EXPECT_FALSE(says_not || contains(r.conclusion, "claim held")) << r.name << ": " << r.conclusion;
            break;
    }
}

ex::Result run_quick(const std::string& name) {
    const ex::Experiment& e = ex::find_experiment(name);
    return ex::run_experiment(e, ex::resolve_values(e, {}, true));
}

}  // namespace

TEST(ExperimentRegistry, ListsEveryExperimentOnceWithParametersThatResolve) {
    std::set<std::string> names;
    for (const auto& e : ex::experiments()) {
        EXPECT_TRUE(names.insert(e.name).second) << e.name;
        EXPECT_FALSE(e.section.empty() || e.claim.empty() || e.summary.empty()) << e.name;
        EXPECT_NE(e.run, nullptr) << e.name;
        // Defaults and quick settings pass their own ranges.
        EXPECT_NO_THROW(ex::resolve_values(e, {}, false)) << e.name;
        EXPECT_NO_THROW(ex::resolve_values(e, {}, true)) << e.name;
    }
    for (const char* name : {"scaling", "heads", "cost", "lstm", "positional", "permutation", "mask", "norm", "kv-heads",
                             "importance", "fp16", "variants", "normalizer", "tie-qk", "series"}) {
        EXPECT_EQ(names.count(name), 1u) << name;
    }
    EXPECT_EQ(&ex::find_experiment("kv_heads"), &ex::find_experiment("kv-heads"));
    EXPECT_EQ(ex::js_name("gen-examples"), "genExamples");
}

TEST(ExperimentRegistry, RefusesUnknownNamesAndBadValuesNamingTheValidOnes) {
    try {
        ex::find_experiment("scalling");
        FAIL() << "no error";
    } catch (const attnlab::ConfigError& err) {
        EXPECT_TRUE(contains(err.what(), "'scalling'") && contains(err.what(), "scaling, heads")) << err.what();
    }
    const ex::Experiment& e = ex::find_experiment("scaling");
    try {
        ex::resolve_values(e, {{"stepz", "3"}}, false);
        FAIL() << "no error";
    } catch (const attnlab::ConfigError& err) {
        EXPECT_TRUE(contains(err.what(), "'stepz'") && contains(err.what(), "steps")) << err.what();
    }
    try {
        ex::resolve_values(e, {{"dModel", "64"}, {"logEvery", "x"}}, false, true);
        FAIL() << "no error";
    } catch (const attnlab::ConfigError& err) {
        EXPECT_TRUE(contains(err.what(), "log-every must be an integer") && contains(err.what(), "'x'")) << err.what();
    }
    EXPECT_THROW(ex::resolve_values(e, {{"steps", "0"}}, false), attnlab::ConfigError);  // below its range
    EXPECT_THROW(ex::resolve_values(e, {{"task", "poetry"}}, false), attnlab::ConfigError);
    EXPECT_THROW(ex::resolve_values(ex::find_experiment("heads"), {{"heads", "1,,-2"}}, false), attnlab::ConfigError);
    const ex::Values v = ex::resolve_values(e, {{"dModel", "64"}}, true, true);
    EXPECT_EQ(v.size("d-model"), 64u);  // given wins over quick
    EXPECT_EQ(v.size("steps"), 100u);   // quick
}

TEST(ExperimentRegistry, JsonHasTheResultAndTheRegistry) {
    const ex::Result r = run_quick("permutation");
    const auto j = nlohmann::json::parse(ex::result_to_json(r));
    EXPECT_EQ(j["name"], "permutation");
    EXPECT_EQ(j["conclusion"], r.conclusion);
    EXPECT_EQ(j["verdict"], "held");
    EXPECT_EQ(std::string(ex::verdict_name(ex::Verdict::not_held)), "not_held");
    EXPECT_TRUE(starts_with(j["command"].get<std::string>(), "attnlab experiment permutation --length 16"));
    EXPECT_EQ(j["tables"][0]["rows"].size(), 4u);
    const auto all = nlohmann::json::parse(ex::experiments_to_json());
    ASSERT_EQ(all.size(), ex::experiments().size());
    EXPECT_EQ(all[0]["parameters"][0]["name"], "task");
    EXPECT_TRUE(all[0]["quick"].contains("dModel"));
    // The conclusion as template id + values, and every entry's English templates.
    EXPECT_EQ(j["conclusionMessage"]["id"], "held");
    const auto& parts = j["conclusionMessage"]["values"]["encodings"];
    EXPECT_EQ(parts["separator"], "; ");
    ASSERT_EQ(parts["parts"].size(), 4u);
    EXPECT_EQ(parts["parts"][0]["id"], "equivariant");
    EXPECT_EQ(parts["parts"][0]["values"]["pe"], "none");
    EXPECT_TRUE(j["timingMessage"].is_null());
    // importance --model offers the shipped models (a page reads only those), and takes any file.
    for (const auto& e : all) {
        if (e["name"] != "importance") continue;
        const auto p = std::find_if(e["parameters"].begin(), e["parameters"].end(), [](const auto& q) { return q["name"] == "model"; });
        ASSERT_NE(p, e["parameters"].end());
        EXPECT_EQ((*p)["suggestions"], (std::vector<std::string>{"none", "models/tang.safetensors", "models/brown.safetensors"}));
        EXPECT_TRUE((*p)["choices"].empty());
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        const ex::Experiment& e = ex::experiments()[i];
        EXPECT_FALSE(e.messages.empty()) << e.name;
        for (const auto& [id, text] : e.messages) EXPECT_EQ(all[i]["messages"][id], text) << e.name << " " << id;
    }
}

// ---- each --quick form: its conclusion agrees with its tables ------------------------------

TEST(QuickExperiment, ScalingVerdictMatchesItsNumbers) {
    const ex::Result r = run_quick("scaling");
    expect_verdict_matches_wording(r);
    const bool behind = value(r, "final", "unscaled", "held-out loss") > value(r, "final", "scaled", "held-out loss") + 0.1;
    const ex::Table& g = table(r, "softmax_gradient");
    const bool vanishing = std::stod(g.rows.back()[2]) < 0.5 * std::stod(g.rows.back()[1]);
    EXPECT_EQ(starts_with(r.conclusion, "the claim held:"), behind && vanishing) << r.conclusion;
    EXPECT_EQ(r.verdict, behind && vanishing ? ex::Verdict::held : behind ? ex::Verdict::partly : ex::Verdict::not_held);
    // The gradient norm shrinks as d_k grows without scaling and stays put with it.
    EXPECT_LT(std::stod(g.rows.back()[2]), std::stod(g.rows.front()[2]));
    EXPECT_TRUE(contains(r.conclusion, g.rows.back()[2].substr(0, 5))) << r.conclusion;
}

TEST(QuickExperiment, HeadsNamesTheBestHeadCountOfEachWidth) {
    const ex::Result r = run_quick("heads");
    expect_verdict_matches_wording(r);
    const ex::Table& t = table(r, "final");
    const std::size_t loss = column_index(t, "held-out loss");
    for (const std::string width : {"128", "64"}) {
        std::string best;
        double best_loss = 1e9;
        for (const auto& row : t.rows) {
            if (row[0] == width && std::stod(row[loss]) < best_loss) {
                best_loss = std::stod(row[loss]);
                best = row[1];
            }
        }
        EXPECT_TRUE(contains(r.conclusion, "at d_model " + width + " best h=" + best + " ")) << r.conclusion;
    }
    EXPECT_TRUE(starts_with(r.conclusion, "d_model 512 with h = 8 was not run")) << r.conclusion;
    EXPECT_EQ(r.verdict, ex::Verdict::untested);
    // A run that did not test the claim says, on its timing line (the conclusion stays the same
    // from run to run), what the full run costs here and how to start it.
    EXPECT_EQ(r.timing_message.id, "timing_full");
    EXPECT_TRUE(contains(r.timing, "the full run (d_model 512, 64, 150 steps per head count) takes about ")) << r.timing;
    EXPECT_TRUE(contains(r.timing, "the same command without --quick")) << r.timing;
    EXPECT_FALSE(contains(r.conclusion, " s here")) << r.conclusion;
}

TEST(QuickExperiment, CostCountsTheSameWorkForEveryHeadCount) {
    const ex::Result r = run_quick("cost");
    expect_verdict_matches_wording(r);
    const ex::Table& t = table(r, "cost");
    const std::size_t shapes = column_index(t, "forward MFLOP"), fwd = column_index(t, "counted forward MFLOP"),
                      bwd = column_index(t, "counted backward MFLOP");
    bool same_fwd = true, same_bwd = true;
    for (const auto& row : t.rows) {
        same_fwd = same_fwd && row[fwd] == t.rows[0][fwd];
        same_bwd = same_bwd && row[bwd] == t.rows[0][bwd];
        // The engine's count of the forward is the formula's: nothing padded, nothing skipped.
        EXPECT_EQ(row[fwd], row[shapes]) << "h=" << row[0];
    }
    EXPECT_TRUE(same_fwd);
    EXPECT_EQ(starts_with(r.conclusion, "the claim held for the work:"), same_fwd && same_bwd) << r.conclusion;
    EXPECT_EQ(r.verdict, same_bwd ? ex::Verdict::held : ex::Verdict::partly);
    EXPECT_TRUE(contains(r.conclusion, t.rows[0][fwd] + " MFLOP forward")) << r.conclusion;
    // 128 x 64 x 2 sequences: projections 4·B·T·C² = 8.39 M multiply-adds, scores + context 2·B·T²·C = 2.10 M.
    EXPECT_EQ(t.rows[0][shapes], "20.972");
    EXPECT_FALSE(r.timing.empty());
}

TEST(QuickExperiment, LstmVerdictMatchesTheAccuracyAtTheLargestDistance) {
    const ex::Result r = run_quick("lstm");
    expect_verdict_matches_wording(r);
    const ex::Table& t = table(r, "recall");
    const auto& last = t.rows.back();
    const auto& first = t.rows.front();
    const double lstm = std::stod(last[column_index(t, "LSTM accuracy")]), tf = std::stod(last[column_index(t, "Transformer accuracy")]);
    EXPECT_TRUE(contains(r.conclusion, "k=" + last[0] + " LSTM " + last[2] + ", Transformer " + last[3])) << r.conclusion;
    // The quick form shows the claim: the LSTM learns the recall at the shortest distance and
    // loses it with distance, while the Transformer recalls every distance.
    EXPECT_GT(std::stod(first[column_index(t, "LSTM accuracy")]), 80.0) << r.conclusion;
    EXPECT_GT(tf, lstm + 20.0) << r.conclusion;
    for (const auto& row : t.rows) EXPECT_GT(std::stod(row[column_index(t, "Transformer accuracy")]), 50.0) << row[0];
    EXPECT_EQ(r.verdict, ex::Verdict::held) << r.conclusion;
    EXPECT_TRUE(starts_with(r.conclusion, "the claim held (")) << r.conclusion;
    // Its timing line says why the per-step times come out as they do, whichever is faster.
    EXPECT_TRUE(contains(r.timing, "needs the one before")) << r.timing;
}

TEST(QuickExperiment, SeriesVerdictMatchesTheSpreadOverSeedsAndIsDeterministic) {
    const ex::Result r = run_quick("series");
    expect_verdict_matches_wording(r);
    const ex::Table& t = table(r, "forecast");
    const std::size_t std_col = column_index(t, "MSE std over seeds"), mean_col = column_index(t, "mean MSE");
    ASSERT_EQ(t.rows.size(), 4u);  // two Transformers, the LSTM, the seasonal naive baseline
    const double sinusoidal = std::stod(t.rows[0][std_col]), timed = std::stod(t.rows[1][std_col]),
                 lstm = std::stod(t.rows[2][std_col]);
    // The table rounds to 5 decimals; the verdict compares the unrounded spreads.
    const double naive = std::stod(t.rows[3][mean_col]);
    const bool shown = std::stod(t.rows[2][mean_col]) < naive &&
                       (std::stod(t.rows[0][mean_col]) < naive || std::stod(t.rows[1][mean_col]) < naive);
    if (shown && std::abs(lstm - sinusoidal) > 1e-5 && std::abs(lstm - timed) > 1e-5) {
        EXPECT_EQ(starts_with(r.conclusion, "the claim held"), lstm < sinusoidal && lstm < timed) << r.conclusion;
    }
    // Models that did not beat the baseline did not learn the series: their spread shows nothing.
    EXPECT_EQ(r.verdict == ex::Verdict::untested, !shown) << r.conclusion;
    EXPECT_TRUE(contains(r.conclusion, "LSTM " + t.rows[2][std_col] + ", Transformer (sinusoidal) " + t.rows[0][std_col]))
        << r.conclusion;
    EXPECT_TRUE(contains(r.conclusion, "seasonal naive " + t.rows[3][mean_col])) << r.conclusion;
    for (std::size_t m = 0; m < 3; ++m) {
        EXPECT_EQ(t.rows[m][column_index(t, "beats baseline")],
                  std::stod(t.rows[m][mean_col]) < std::stod(t.rows[3][mean_col]) ? "yes" : "no");
    }
    const ex::Result again = run_quick("series");
    EXPECT_EQ(again.conclusion, r.conclusion);
    EXPECT_EQ(table(again, "forecast").rows[2][mean_col], t.rows[2][mean_col]);
}

TEST(QuickExperiment, PositionalVerdictsMatchItsNumbers) {
    const ex::Result r = run_quick("positional");
    expect_verdict_matches_wording(r);
    const bool equivariant = value(r, "final", "none", "permutation gap") < 1e-4;
    EXPECT_TRUE(equivariant);
    EXPECT_TRUE(contains(r.conclusion, "without positions: permutation-equivariant")) << r.conclusion;
    const double rope = value(r, "final", "rope", "accuracy @32"), learned = value(r, "final", "learned", "accuracy @32");
    EXPECT_EQ(contains(r.conclusion, "at 2L rope beats learned (held)"), rope > learned + 10.0) << r.conclusion;
    // The quick form shows the claim: every encoding with positions is far ahead of none at the
    // training length (the article's sinusoidal one included), and the verdict weighs each.
    const double none = value(r, "final", "none", "accuracy @train length");
    for (const std::string pe : {"sinusoidal", "learned", "rope"}) {
        const double at_train = value(r, "final", pe, "accuracy @train length");
        EXPECT_GT(at_train, none + 20.0) << pe << ": " << r.conclusion;
        EXPECT_EQ(contains(r.conclusion, pe + " was NOT ahead of no positions"), at_train <= none + 20.0) << r.conclusion;
    }
    const double sinusoidal = value(r, "final", "sinusoidal", "accuracy @32");
    EXPECT_EQ(contains(r.conclusion, "at 2L rope beats sinusoidal (held)"), rope > sinusoidal + 10.0) << r.conclusion;
    EXPECT_EQ(r.verdict == ex::Verdict::held, !contains(r.conclusion, "did NOT")) << r.conclusion;
}

TEST(QuickExperiment, PermutationEquivariantOnlyWithoutPositions) {
    const ex::Result r = run_quick("permutation");
    expect_verdict_matches_wording(r);
    for (const auto& row : table(r, "permutation").rows) EXPECT_EQ(row.back(), row[0] == "none" ? "yes" : "no") << row[0];
    EXPECT_TRUE(starts_with(r.conclusion, "the claim held: none equivariant")) << r.conclusion;
    EXPECT_EQ(r.verdict, ex::Verdict::held);
}

TEST(QuickExperiment, MaskVerdictMatchesItsNumbers) {
    const ex::Result r = run_quick("mask");
    expect_verdict_matches_wording(r);
    const double masked_gen = value(r, "final", "causal mask", "generated accuracy");
    const double unmasked_gen = value(r, "final", "no mask", "generated accuracy");
    const bool collapsed = value(r, "final", "no mask", "last train loss") < value(r, "final", "causal mask", "last train loss");
    const bool held = collapsed && unmasked_gen + 30.0 < masked_gen && masked_gen >= 80.0;
    EXPECT_EQ(starts_with(r.conclusion, "the claim held:"), held) << r.conclusion;
}

TEST(QuickExperiment, NormReportsEveryArmAndAPlainComparison) {
    const ex::Result r = run_quick("norm");
    expect_verdict_matches_wording(r);
    const ex::Table& t = table(r, "final");
    ASSERT_EQ(t.rows.size(), 4u);
    for (const auto& row : t.rows) {
        EXPECT_FALSE(row[column_index(t, "final train loss")].empty());
        EXPECT_FALSE(row[column_index(t, "divergence step")].empty());
        EXPECT_TRUE(contains(r.conclusion, row[0] + ": ")) << row[0];
    }
    const double pre_cold = value(r, "final", "pre-LN, no warm-up", "held-out loss");
    const double post_warm = value(r, "final", "post-LN, warm-up", "held-out loss");
    if (std::isfinite(pre_cold) && std::isfinite(post_warm)) {
        const char* expected = pre_cold + 0.05 < post_warm   ? "Pre-LN without warm-up ended ahead"
                               : pre_cold > post_warm + 0.05 ? "Pre-LN without warm-up ended BEHIND"
                                                             : "Pre-LN without warm-up ended level";
        EXPECT_TRUE(contains(r.conclusion, expected)) << r.conclusion;
    }
}

TEST(QuickExperiment, KvHeadsVerdictMatchesItsAccuracies) {
    const ex::Result r = run_quick("kv-heads");
    expect_verdict_matches_wording(r);
    const double mha = value(r, "final", "4", "held-out accuracy"), mqa = value(r, "final", "1", "held-out accuracy");
    EXPECT_EQ(starts_with(r.conclusion, "the claim held"), mqa + 5.0 >= mha) << r.conclusion;
    EXPECT_EQ(r.verdict, mqa + 5.0 >= mha ? ex::Verdict::held : ex::Verdict::not_held);
}

TEST(QuickExperiment, ImportanceVerdictMatchesItsCorrelations) {
    const ex::Result r = run_quick("importance");
    expect_verdict_matches_wording(r);
    const double w = value(r, "importance", "weight", "mean Spearman vs ablation");
    const double wv = value(r, "importance", "weight x ||v W_O||", "mean Spearman vs ablation");
    EXPECT_GT(value(r, "importance", "weight", "queries"), 0.0);
    EXPECT_EQ(starts_with(r.conclusion, "the claim held:"), w < 0.95 && wv >= w) << r.conclusion;
}

TEST(QuickExperiment, Fp16VerdictMatchesTheStepsItBroke) {
    const ex::Result r = run_quick("fp16");
    expect_verdict_matches_wording(r);
    const std::string half = text(r, "final", "fp16, fp16 softmax", "broke at step");
    const std::string fixed = text(r, "final", "fp16, fp32 softmax", "broke at step");
    const bool held = half != "survived" && fixed == "survived";
    EXPECT_EQ(starts_with(r.conclusion, "the claim held:"), held) << r.conclusion;
    if (half != "survived") EXPECT_TRUE(contains(r.conclusion, "at step " + half)) << r.conclusion;
    // The quick form shows the claim, and names the stage that overflowed and the score behind
    // it, a score past ln 65504 (the replayed forward of the step that broke).
    EXPECT_TRUE(held) << r.conclusion;
    EXPECT_TRUE(contains(r.conclusion, "the first stage past fp16's range was weights of block 1 (NaN)")) << r.conclusion;
    const auto& overflow = r.conclusion_message.values[1].second;
    ASSERT_TRUE(overflow.is_list);
    ASSERT_EQ(overflow.parts.size(), 1u);
    EXPECT_EQ(overflow.parts[0].id, "overflow_exp");
    for (const auto& [name, v] : overflow.parts[0].values) {
        if (name == "score") EXPECT_GT(std::stod(v.text), 11.09) << r.conclusion;
    }
    // The curve's largest score is the one that broke the run.
    EXPECT_GT(value(r, "final", "fp16, fp16 softmax", "largest max score"), 11.09);
    ASSERT_EQ(r.series.size(), 2u);
    EXPECT_EQ(r.series[1].name, "max_score");
    ASSERT_EQ(r.series[1].lines.size(), 3u);
}

TEST(QuickExperiment, VariantsCountsTheMechanismAndWeighsEveryVariant) {
    const ex::Result r = run_quick("variants");
    expect_verdict_matches_wording(r);
    const ex::Table& t = table(r, "variants");
    const std::size_t n = column_index(t, "n"), pairs = column_index(t, "pairs / head"),
                      kib = column_index(t, "attention KiB / head"), acc = column_index(t, "held-out accuracy");
    const std::string largest = t.rows.back()[n];
    double full_acc = 0;
    for (const auto& row : t.rows) {
        const double len = std::stod(row[n]);
        // Counted from the mechanism: full scores n(n+1)/2 causal pairs and holds a weight for
        // each, linear attention scores none and holds its D x D state and D normaliser (D = 16).
        if (row[1] == "full") EXPECT_EQ(std::stod(row[pairs]), len * (len + 1) / 2) << row[n];
        if (row[1] == "linear") {
            EXPECT_EQ(row[pairs], "0");
            EXPECT_EQ(row[kib], "1.1");  // (16·16 + 16) floats
        }
        if (row[1] == "window") EXPECT_LT(std::stod(row[pairs]), len * 16 + 1) << row[n];
        if (row[n] == largest && row[1] == "full") full_acc = std::stod(row[acc]);
    }
    bool less_accurate = true;
    for (const auto& row : t.rows) {
        if (row[n] != largest || row[1] == "full") continue;
        less_accurate = less_accurate && std::stod(row[acc]) + 5.0 < full_acc;
        EXPECT_TRUE(contains(r.conclusion, ", " + row[1] + " " + row[acc])) << r.conclusion;
    }
    // The timed lengths are long enough for n² to show: full's time grows faster than linear's.
    const ex::Table& timed = table(r, "timed");
    EXPECT_EQ(timed.rows.back()[0], "1024");
    EXPECT_EQ(timed.rows.back()[column_index(timed, "pairs / head")], "0");  // linear, last
    EXPECT_TRUE(contains(r.timing, "at n = 1024: full ")) << r.timing;
    // The quick form shows the claim: full learns k_back at k = n/2, every other variant loses accuracy.
    EXPECT_GT(full_acc, 50.0) << r.conclusion;
    EXPECT_TRUE(less_accurate) << r.conclusion;
    EXPECT_EQ(r.verdict, ex::Verdict::held) << r.conclusion;
    EXPECT_EQ(table(r, "log_log").rows.size(), 4u);
    EXPECT_EQ(value(r, "log_log", "full", "pairs ~ n^x") > 1.8, true);
    EXPECT_EQ(value(r, "log_log", "linear", "memory ~ n^x"), 0.0);
}

TEST(QuickExperiment, NormalizerVerdictNamesTheLowestLoss) {
    const ex::Result r = run_quick("normalizer");
    expect_verdict_matches_wording(r);
    const ex::Table& t = table(r, "final");
    const std::size_t loss = column_index(t, "held-out loss");
    std::string best;
    double best_loss = 1e9;
    for (const auto& row : t.rows) {
        if (std::stod(row[loss]) < best_loss) {
            best_loss = std::stod(row[loss]);
            best = row[0];
        }
    }
    EXPECT_EQ(starts_with(r.conclusion, "the claim held:"), best == "softmax") << r.conclusion;
    // Softmax rows sum to 1 (up to rounding); the entropy of a row is at most ln(keys it sees).
    EXPECT_NEAR(value(r, "final", "softmax", "mean row sum"), 1.0, 1e-3);
    for (const auto& row : t.rows) {
        EXPECT_LE(std::stod(row[column_index(t, "weight entropy (nats)")]),
                  std::stod(row[column_index(t, "uniform entropy (nats)")]) + 1e-3) << row[0];
    }
}

TEST(QuickExperiment, TieQkVerdictMatchesItsAccuracies) {
    const ex::Result r = run_quick("tie-qk");
    expect_verdict_matches_wording(r);
    const double separate = value(r, "final", "separate", "held-out accuracy");
    const double tied = value(r, "final", "tied", "held-out accuracy");
    EXPECT_EQ(starts_with(r.conclusion, "the claim held:"), separate >= tied + 10.0) << r.conclusion;
    // Tying drops k_proj: one (C, C) weight and its bias per layer.
    EXPECT_EQ(value(r, "final", "separate", "parameters") - value(r, "final", "tied", "parameters"), 32.0 * 32.0 + 32.0);
}
