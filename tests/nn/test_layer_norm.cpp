#include "attnlab/nn/layer_norm.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

TEST(LayerNorm, RowsHaveZeroMeanAndUnitVarianceWithDefaultParameters) {
    LayerNorm ln(6);
    const Tensor3 x = test::random_normal<Tensor3>({2, 3, 6}, 1, 3.0f);
    const Tensor3 y = ln.forward(x);
    for (std::size_t r = 0; r < 6; ++r) {
        double mean = 0, var = 0;
        for (std::size_t c = 0; c < 6; ++c) mean += y.data()[r * 6 + c];
        mean /= 6;
        for (std::size_t c = 0; c < 6; ++c) var += std::pow(y.data()[r * 6 + c] - mean, 2);
        EXPECT_NEAR(mean, 0.0, 1e-6);
        EXPECT_NEAR(var / 6, 1.0, 1e-3);  // eps = 1e-5 inside the square root
    }
}

TEST(LayerNorm, WrongWidthIsAShapeError) {
    LayerNorm ln(4);
    EXPECT_THROW(ln.forward(Tensor3::from_shape({1, 2, 5})), ShapeError);
}

TEST(LayerNorm, BackwardMatchesFiniteDifferences) {
    LayerNorm ln(5);
    ln.weight = test::random_normal<Tensor1>({5}, 2);
    ln.bias = test::random_normal<Tensor1>({5}, 3);
    Tensor3 x = test::random_normal<Tensor3>({2, 3, 5}, 4);
    const Tensor3 w = test::random_normal<Tensor3>({2, 3, 5}, 5);
    LayerNormCache cache;
    ln.forward(x, &cache);
    LayerNormGrad grad(ln);
    Tensor3 dx;
    ln.backward(w, cache, grad, dx);
    auto loss = [&] { return testutil::dot(ln.forward(x), w); };
    // Float32 forward, double loss: h = 1e-2 keeps cancellation ~1e-5; curvature error O(h²).
    const testutil::GradCheckOptions tol{1e-2, 2e-3, 1e-2};
    EXPECT_TRUE(testutil::check_gradient("layer_norm dx", loss, x.data(), dx.data(), x.size(), tol));
    EXPECT_TRUE(testutil::check_gradient("layer_norm dweight", loss, ln.weight.data(), grad.weight.data(), 5, tol));
    EXPECT_TRUE(testutil::check_gradient("layer_norm dbias", loss, ln.bias.data(), grad.bias.data(), 5, tol));
}

TEST(LayerNorm, ViewsMatchParameters) {
    LayerNorm ln(3);
    LayerNormGrad g(ln);
    const auto p = ln.parameters("ln_f.");
    const auto v = g.views("ln_f.");
    ASSERT_EQ(p.size(), 2u);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(p[0].name, "ln_f.weight");
    EXPECT_EQ(v[1].name, "ln_f.bias");
    EXPECT_EQ(p[1].shape, v[1].shape);
}

}  // namespace
}  // namespace attnlab
