#include "attnlab/nn/embedding.hpp"

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

TEST(Embedding, ForwardGathersTheRowOfEachToken) {
    Rng rng(1);
    Embedding emb(4, 3, rng);
    const Index2 tokens = {{2, 0}, {2, 3}};
    const Tensor3 x = emb.forward(tokens);
    ASSERT_EQ(x.shape(0), 2u);
    ASSERT_EQ(x.shape(1), 2u);
    ASSERT_EQ(x.shape(2), 3u);
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t t = 0; t < 2; ++t)
            for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(x(b, t, c), emb.weight(tokens(b, t), c));
}

TEST(Embedding, OutOfRangeIdIsAValueErrorNamingTheIdAndV) {
    Rng rng(1);
    Embedding emb(5, 2, rng);
    try {
        emb.forward(Index2{{0, 7}});
        FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("7"), std::string::npos) << msg;
        EXPECT_NE(msg.find("vocab_size 5"), std::string::npos) << msg;
    }
    EXPECT_THROW(emb.forward(Index2{{-1}}), ValueError);
}

// Repeated ids check that backward scatter-ADDS: row 1 appears three times.
TEST(Embedding, BackwardMatchesFiniteDifferences) {
    Rng rng(3);
    Embedding emb(4, 5, rng);
    const Index2 tokens = {{1, 3, 1}, {0, 1, 2}};
    const Tensor3 w = test::random_normal<Tensor3>({2, 3, 5}, 11);
    EmbeddingGrad grad(emb);
    emb.backward(tokens, w, grad);
    auto loss = [&] { return testutil::dot(emb.forward(tokens), w); };
    // The forward is a copy: the loss is linear in the weights, so only float rounding remains.
    EXPECT_TRUE(testutil::check_gradient("embedding dweight", loss, emb.weight.data(), grad.weight.data(),
                                         emb.weight.size(), {1e-2, 1e-4, 1e-3}));
}

TEST(Embedding, GradientsAccumulateAcrossCalls) {
    Rng rng(3);
    Embedding emb(3, 2, rng);
    const Index2 tokens = {{0, 2}};
    const Tensor3 dout = test::random_normal<Tensor3>({1, 2, 2}, 5);
    EmbeddingGrad once(emb), twice(emb);
    emb.backward(tokens, dout, once);
    emb.backward(tokens, dout, twice);
    emb.backward(tokens, dout, twice);
    for (std::size_t i = 0; i < once.weight.size(); ++i) EXPECT_FLOAT_EQ(twice.weight.data()[i], 2 * once.weight.data()[i]);
    EXPECT_EQ(once.weight(1, 0), 0.0f);  // id 1 was never used
}

}  // namespace
}  // namespace attnlab
