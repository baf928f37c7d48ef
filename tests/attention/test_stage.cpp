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

TEST(TraceRecorder, NullObserverIsANoOp) {
    float data[1] = {1};
    observe(nullptr, Stage::x, 0, -1, 1, 1, 1, data);  // must not crash
    SUCCEED();
}

}  // namespace
}  // namespace attnlab
