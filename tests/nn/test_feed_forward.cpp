#include "attnlab/nn/feed_forward.hpp"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

TEST(FeedForward, ActivationNamesRoundTrip) {
    EXPECT_EQ(activation_from_name("relu"), Activation::relu);
    EXPECT_EQ(activation_name(Activation::gelu), "gelu");
    EXPECT_THROW(activation_from_name("swish"), ConfigError);
}

TEST(FeedForward, ParameterNamesFollowPyTorch) {
    Rng rng(1);
    FeedForward ffn(4, 8, Activation::gelu, true, rng);
    FeedForwardGrad grad(ffn);
    const auto p = ffn.parameters("ffn.");
    const auto g = grad.views("ffn.");
    ASSERT_EQ(p.size(), 4u);
    ASSERT_EQ(g.size(), 4u);
    const char* names[] = {"ffn.fc1.weight", "ffn.fc1.bias", "ffn.fc2.weight", "ffn.fc2.bias"};
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(p[i].name, names[i]);
        EXPECT_EQ(g[i].name, names[i]);
        EXPECT_EQ(p[i].shape, g[i].shape);
    }
    EXPECT_EQ(p[0].shape, (std::vector<std::size_t>{8, 4}));
}

class FeedForwardBackward : public ::testing::TestWithParam<Activation> {};

TEST_P(FeedForwardBackward, MatchesFiniteDifferences) {
    const Activation act = GetParam();
    // ReLU has a kink at 0: a central difference across it is meaningless. With h = 1e-3 a
    // single perturbation moves a pre-activation by at most h·max(|x|, |W|) < 4e-3, so the
    // test draws layers and inputs (deterministically, from successive seeds) until every
    // pre-activation sits at least 1e-2 from 0.
    testutil::GradCheckOptions tol{1e-2, 2e-3, 1e-2};
    if (act == Activation::relu) tol.h = 1e-3;
    FeedForward ffn;
    Tensor3 x;
    FeedForwardCache cache;
    for (std::uint64_t seed = 4;; ++seed) {
        Rng rng(seed);
        ffn = FeedForward(4, 6, act, true, rng);
        x = test::random_normal<Tensor3>({2, 3, 4}, seed + 100);
        ffn.forward(x, &cache);
        // The pre-activations x·W1ᵀ + b1 (the forward keeps them for GELU only).
        Tensor2 rows = Tensor2::from_shape({x.shape(0) * x.shape(1), x.shape(2)});
        std::copy(x.begin(), x.end(), rows.begin());
        float closest = INFINITY;
        for (float v : ffn.fc1.forward(rows)) closest = std::min(closest, std::fabs(v));
        if (act == Activation::gelu || closest > 1e-2f) break;
        ASSERT_LT(seed, 100u) << "no seed kept the ReLU inputs off the kink";
    }
    const Tensor3 w = test::random_normal<Tensor3>({2, 3, 4}, 6);
    FeedForwardGrad grad(ffn);
    Tensor3 dx;
    ffn.backward(w, cache, grad, dx);
    auto loss = [&] { return testutil::dot(ffn.forward(x), w); };
    const std::string name(activation_name(act));
    EXPECT_TRUE(testutil::check_gradient(name + " ffn dx", loss, x.data(), dx.data(), x.size(), tol));
    auto params = ffn.parameters();
    auto grads = grad.views();
    for (std::size_t i = 0; i < params.size(); ++i) {
        EXPECT_TRUE(testutil::check_gradient(name + " ffn d" + params[i].name, loss, params[i].data, grads[i].data,
                                             params[i].size(), tol));
    }
}

INSTANTIATE_TEST_SUITE_P(GeluAndRelu, FeedForwardBackward, ::testing::Values(Activation::gelu, Activation::relu),
                         [](const auto& info) { return std::string(activation_name(info.param)); });

}  // namespace
}  // namespace attnlab
