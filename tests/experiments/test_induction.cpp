// The induction experiment: the phase-change detector on hand-made curves, and the quick run
// (the registry's --quick settings) shows the claim, the same numbers twice, with progress points
// carrying every measurement the result's curves hold.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "attnlab/core/error.hpp"
#include "attnlab/experiments/experiments.hpp"
#include "attnlab/experiments/registry.hpp"
#include "experiments/result_cells.hpp"

namespace ex = attnlab::experiments;
using namespace attnlab::experiments::testing;

namespace {

const ex::Series& series(const ex::Result& r, const std::string& name) {
    for (const auto& s : r.series) {
        if (s.name == name) return s;
    }
    throw std::runtime_error("no series " + name);
}

}  // namespace

TEST(InductionPhaseChange, FindsASharpDropWithAScoreJump) {
    const std::vector<double> steps{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
    const std::vector<double> first(11, 3.4);
    // A plateau, a drop between steps 40 and 60, then a floor.
    const std::vector<double> repeated{3.4, 3.3, 3.2, 3.2, 3.1, 1.0, 0.4, 0.35, 0.3, 0.3, 0.3};
    const std::vector<double> score{0.05, 0.05, 0.06, 0.06, 0.08, 0.6, 0.85, 0.9, 0.9, 0.9, 0.9};
    const ex::InductionPhaseChange pc = ex::find_induction_phase_change(steps, first, repeated, score, 0.25, 100);
    EXPECT_TRUE(pc.copies);
    EXPECT_TRUE(pc.sharp);
    EXPECT_TRUE(pc.score_jumped);
    EXPECT_TRUE(pc.found);
    // The steepest stretch of at most 25 steps: 3.1 at step 40 to 0.4 at step 60 (2.7 of the
    // whole 3.1), already trimmed (step 50's 1.0 is neither within 10% of its top nor its bottom).
    EXPECT_EQ(pc.start, 40);
    EXPECT_EQ(pc.end, 60);
    EXPECT_DOUBLE_EQ(pc.loss_before, 3.1);
    EXPECT_DOUBLE_EQ(pc.loss_after, 0.4);
    EXPECT_DOUBLE_EQ(pc.score_before, 0.08);
    EXPECT_DOUBLE_EQ(pc.score_after, 0.85);
    // A wider window reaches from the plateau's 3.2 at step 30 (within 10% of the top: trimmed to 40).
    const ex::InductionPhaseChange wide = ex::find_induction_phase_change(steps, first, repeated, score, 0.4, 100);
    EXPECT_EQ(wide.start, 40);
    EXPECT_EQ(wide.end, 60);

    // The same drop spread over the whole run is not sharp: no 25 steps hold half of it.
    const std::vector<double> slow{3.4, 3.1, 2.8, 2.5, 2.2, 1.9, 1.6, 1.3, 1.0, 0.7, 0.3};
    const ex::InductionPhaseChange gradual = ex::find_induction_phase_change(steps, first, slow, score, 0.25, 100);
    EXPECT_TRUE(gradual.copies);
    EXPECT_FALSE(gradual.sharp);
    EXPECT_FALSE(gradual.found);

    // A repeated half that stays above half the first half's loss does not copy.
    const std::vector<double> some{3.4, 3.3, 3.0, 2.6, 2.5, 2.4, 2.4, 2.4, 2.4, 2.4, 2.4};
    EXPECT_FALSE(ex::find_induction_phase_change(steps, first, some, score, 0.25, 100).copies);

    // A sharp drop without a score jump is not the induction phase change.
    const std::vector<double> flat(11, 0.1);
    const ex::InductionPhaseChange no_jump = ex::find_induction_phase_change(steps, first, repeated, flat, 0.25, 100);
    EXPECT_TRUE(no_jump.sharp);
    EXPECT_FALSE(no_jump.score_jumped);
    EXPECT_FALSE(no_jump.found);

    EXPECT_THROW(ex::find_induction_phase_change(steps, first, repeated, {0.1}, 0.25, 100), attnlab::ConfigError);
    EXPECT_THROW(ex::find_induction_phase_change({}, {}, {}, {}, 0.25, 100), attnlab::ConfigError);
}

TEST(InductionExperiment, QuickRunShowsThePhaseChangeOnlyWithTwoLayers) {
    const ex::Experiment& e = ex::find_experiment("induction");
    const ex::Values values = ex::resolve_values(e, {}, /*quick=*/true);
    std::map<std::string, std::vector<ex::Progress>> measured;  // progress points with values, by run
    std::size_t calls = 0;
    const ex::Result r = ex::run_experiment(e, values, [&](const ex::Progress& p) {
        ++calls;
        if (!p.values.empty()) measured[p.run].push_back(p);
    });
    expect_messages_render(r);
    EXPECT_EQ(r.verdict, ex::Verdict::held) << r.conclusion;
    EXPECT_EQ(text(r, "phase_change", "2-layer", "phase change"), "yes");
    EXPECT_EQ(text(r, "phase_change", "1-layer", "phase change"), "no");
    // The 2-layer model copies the repeated half; the 1-layer one cannot.
    EXPECT_LT(value(r, "final", "2-layer", "repeated-half loss"), 0.5 * value(r, "final", "2-layer", "first-half loss"));
    EXPECT_GT(value(r, "final", "1-layer", "repeated-half loss"), 0.5 * value(r, "final", "1-layer", "first-half loss"));
    EXPECT_GT(value(r, "final", "2-layer", "best induction score"), value(r, "final", "1-layer", "best induction score"));

    // A progress call per step plus one at step 0 per run; the points with values are the curves' points.
    const std::size_t steps = values.size("steps");
    EXPECT_EQ(calls, 2 * (steps + 1));
    const ex::Series& repeated = series(r, "repeated_half_loss");
    const ex::Series& score = series(r, "induction_score");
    for (std::size_t line = 0; line < repeated.lines.size(); ++line) {
        const auto& points = measured[repeated.lines[line].name];
        ASSERT_EQ(points.size(), repeated.x.size());
        for (std::size_t i = 0; i < points.size(); ++i) {
            EXPECT_EQ(static_cast<double>(points[i].step), repeated.x[i]);
            std::map<std::string, double> v(points[i].values.begin(), points[i].values.end());
            EXPECT_EQ(v.at("repeated_half_loss"), repeated.lines[line].y[i]);
            EXPECT_EQ(v.at("induction_score"), score.lines[line].y[i]);
        }
    }
    // The last point's live phase change is the result's window.
    std::map<std::string, double> last(measured["2-layer"].back().values.begin(), measured["2-layer"].back().values.end());
    EXPECT_EQ(std::to_string(static_cast<long>(last.at("phase_start"))), text(r, "phase_change", "2-layer", "start step"));
    EXPECT_EQ(std::to_string(static_cast<long>(last.at("phase_end"))), text(r, "phase_change", "2-layer", "end step"));
    EXPECT_EQ(measured["1-layer"].back().values.size(), 3u);
}

TEST(InductionExperiment, IsDeterministic) {
    ex::InductionOptions o;
    o.train.steps = 12;
    o.train.log_every = 4;
    o.train.warmup_steps = 2;
    const ex::Result a = ex::run_induction(o), b = ex::run_induction(o);
    EXPECT_EQ(a.conclusion, b.conclusion);
    expect_same_series(a, b);
    EXPECT_EQ(a.series[0].x, (std::vector<double>{0, 4, 8, 12}));
}

TEST(InductionExperiment, RejectsBadOptions) {
    ex::InductionOptions o;
    o.length = 9;
    EXPECT_THROW(ex::run_induction(o), attnlab::ConfigError);
    o.length = 32;
    o.layers = {};
    EXPECT_THROW(ex::run_induction(o), attnlab::ConfigError);
    o.layers = {1};
    o.window = 0.0f;
    EXPECT_THROW(ex::run_induction(o), attnlab::ConfigError);
}
