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
    EXPECT_EQ(activation_from_name("gelu_tanh"), Activation::gelu_tanh);
    EXPECT_EQ(activation_name(Activation::gelu_tanh), "gelu_tanh");
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
        if (act != Activation::relu || closest > 1e-2f) break;
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

TEST_P(FeedForwardBackward, AResidualIsAddedInTheStoreBitForBit) {
    // y = r + FFN(x) and dx = r + FFNᵀ(dy), each summed in a product's store, equal the
    // separate sums exactly (one more rounding either way); a residual of another shape is a
    // ShapeError naming it.
    const Activation act = GetParam();
    Rng rng(9);
    const FeedForward ffn(16, 64, act, true, rng);
    const Tensor3 x = test::random_normal<Tensor3>({3, 5, 16}, 10), r = test::random_normal<Tensor3>({3, 5, 16}, 11);
    FeedForwardCache cache;
    Tensor3 plain, fused;
    ffn.forward(x, &cache, plain);
    ffn.forward(x, &cache, fused, &r);
    for (std::size_t i = 0; i < plain.size(); ++i) ASSERT_EQ(fused.data()[i], plain.data()[i] + r.data()[i]) << i;
    const Tensor3 dy = test::random_normal<Tensor3>({3, 5, 16}, 12), dr = test::random_normal<Tensor3>({3, 5, 16}, 13);
    FeedForwardGrad g_plain(ffn), g_fused(ffn);
    Tensor3 dx_plain, dx_fused;
    ffn.backward(dy, cache, g_plain, dx_plain);
    ffn.backward(dy, cache, g_fused, dx_fused, &dr);
    for (std::size_t i = 0; i < dx_plain.size(); ++i) {
        ASSERT_EQ(dx_fused.data()[i], dx_plain.data()[i] + dr.data()[i]) << i;
    }
    const Tensor3 wrong = test::random_normal<Tensor3>({3, 4, 16}, 14);
    try {
        ffn.forward(x, nullptr, fused, &wrong);
        FAIL() << "no exception";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("residual (B, T, C) like x must be (3, 5, 16), got (3, 4, 16)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(ffn.backward(dy, cache, g_fused, dx_fused, &wrong), ShapeError);
}

INSTANTIATE_TEST_SUITE_P(GeluAndRelu, FeedForwardBackward,
                         ::testing::Values(Activation::gelu, Activation::relu, Activation::gelu_tanh),
                         [](const auto& info) { return std::string(activation_name(info.param)); });

}  // namespace
}  // namespace attnlab
