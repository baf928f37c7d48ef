// Gradient check of linear_backward (nn/linear.hpp); the forward is tested with the attention layer.
#include "attnlab/nn/linear.hpp"

#include <gtest/gtest.h>

#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

class LinearBackward : public ::testing::TestWithParam<bool> {};

TEST_P(LinearBackward, MatchesFiniteDifferences) {
    const bool bias = GetParam();
    Rng rng(1);
    Linear layer(5, 3, bias, rng);
    Tensor2 x = test::random_normal<Tensor2>({4, 5}, 2);
    const Tensor2 w = test::random_normal<Tensor2>({4, 3}, 3);
    LinearGrad grad(layer);
    Tensor2 dx = Tensor2::from_shape({4, 5});
    linear_backward(layer, x.data(), 4, w.data(), grad, dx.data());
    auto loss = [&] { return testutil::dot(layer.forward(x), w); };
    // Linear in every parameter: only float rounding of the forward remains.
    const testutil::GradCheckOptions tol{1e-2, 1e-4, 1e-3};
    EXPECT_TRUE(testutil::check_gradient("linear dx", loss, x.data(), dx.data(), x.size(), tol));
    EXPECT_TRUE(testutil::check_gradient("linear dweight", loss, layer.weight.data(), grad.weight.data(),
                                         layer.weight.size(), tol));
    if (bias) {
        EXPECT_TRUE(
            testutil::check_gradient("linear dbias", loss, layer.bias.data(), grad.bias.data(), layer.bias.size(), tol));
    }
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutBias, LinearBackward, ::testing::Bool());

}  // namespace
}  // namespace attnlab
