#include "attnlab/attention/stage.hpp"

#include <gtest/gtest.h>

namespace attnlab {
namespace {

TEST(Stage, NamesRoundTripInCanonicalOrder) {
    const char* expected[] = {"x", "q", "k", "v", "q_rot", "k_rot", "phi_q", "phi_k", "scores", "scaled", "masked", "weights", "context",
                              "concat", "output"};
    ASSERT_EQ(all_stages().size(), std::size(expected));
    for (std::size_t i = 0; i < all_stages().size(); ++i) {
        EXPECT_EQ(stage_name(all_stages()[i]), expected[i]);
        EXPECT_EQ(stage_from_name(expected[i]), all_stages()[i]);
    }
}

TEST(Stage, UnknownNameListsTheValidOnes) {
    try {
        stage_from_name("weight");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("'weight'"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("weights"), std::string::npos);
    }
}

TEST(TraceRecorder, RecordsOnlyWantedStagesAsCopies) {
    TraceRecorder trace({Stage::weights});
    EXPECT_TRUE(trace.wants(Stage::weights));
    EXPECT_FALSE(trace.wants(Stage::scores));
    float data[6] = {1, 2, 3, 4, 5, 6};  // a (2, 2) view with leading dimension 3
    observe(&trace, Stage::weights, 0, 1, 2, 2, 3, data);
    observe(&trace, Stage::scores, 0, 1, 2, 2, 3, data);
    data[0] = 100;  // the recorder must hold its own copy
    ASSERT_EQ(trace.stages(), std::vector<Stage>{Stage::weights});
    const Tensor2& w = trace.get(Stage::weights, 0, 1);
    EXPECT_EQ(w(0, 0), 1);
    EXPECT_EQ(w(0, 1), 2);
    EXPECT_EQ(w(1, 0), 4);
    EXPECT_EQ(w(1, 1), 5);
    EXPECT_THROW(trace.get(Stage::weights, 0, 0), ValueError);
    EXPECT_EQ(trace.num_heads(Stage::weights), 1u);
}

// Counts what it is asked and what it is given; wants only `wanted`.
class CountingObserver final : public StageObserver {
public:
    explicit CountingObserver(Stage wanted) : wanted_(wanted) {}
    bool wants(Stage stage) const override {
        ++asked;
        return stage == wanted_;
    }
    void on_stage(const StageView& view) override {
        ++seen;
        last_rows = view.rows;
    }
    mutable int asked = 0;
    int seen = 0;
    std::size_t last_rows = 0;

private:
    Stage wanted_;
};

TEST(Observe, AStageReachesTheObserverOnlyWhenWantedAndANullObserverReadsNothing) {
    CountingObserver o(Stage::weights);
    const float data[4] = {1, 2, 3, 4};
    observe(&o, Stage::scores, 0, 0, 2, 2, 2, data);
    EXPECT_EQ(o.asked, 1);
    EXPECT_EQ(o.seen, 0);
    observe(&o, Stage::weights, 0, 0, 2, 2, 2, data);
    EXPECT_EQ(o.asked, 2);
    EXPECT_EQ(o.seen, 1);
    EXPECT_EQ(o.last_rows, 2u);
    // Without an observer the data is never read: a null pointer for a (4, 4) matrix is fine.
    observe(nullptr, Stage::x, 0, -1, 4, 4, 4, nullptr);
}

TEST(Observe, RoundingWithoutAnObserverStillRoundsAndNotesNothing) {
    float v[3] = {1.0f + 1e-4f, 1e-9f, 2.0f};  // fp16: 1 + 1e-4 rounds to 1, 1e-9 flushes to 0
    FlushedCells cells = {7};                  // cleared by the call
    EXPECT_EQ(round_observed(nullptr, Stage::q, Precision::fp16, v, 1, 3, cells), nullptr);
    EXPECT_TRUE(cells.empty());
    EXPECT_EQ(v[0], 1.0f);
    EXPECT_EQ(v[1], 0.0f);
    EXPECT_EQ(v[2], 2.0f);
    // An observer that wants the stage gets the flushed cell noted.
    CountingObserver o(Stage::q);
    float w[3] = {1.0f + 1e-4f, 1e-9f, 2.0f};
    const FlushedCells* flushed = round_observed(&o, Stage::q, Precision::fp16, w, 1, 3, cells);
    ASSERT_NE(flushed, nullptr);
    EXPECT_EQ(*flushed, FlushedCells{1});
    EXPECT_EQ(w[0], 1.0f);
    EXPECT_EQ(w[1], 0.0f);
}

}  // namespace
}  // namespace attnlab
