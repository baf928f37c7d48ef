// Gradient check of linear_backward (nn/linear.hpp); the forward is tested with the attention layer.
// A Linear of table rows (TableRows) against the same rows made explicit.
#include "attnlab/nn/linear.hpp"

#include <tuple>
#include <vector>

#include <xtensor/xbuilder.hpp>

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

// x[r] = a[ia[r]] + b[r mod period] (b optional), for 30 rows of width 6: a has 5 rows, b 3.
struct Tables {
    Tensor2 a = test::random_normal<Tensor2>({5, 6}, 11);
    Tensor2 b = test::random_normal<Tensor2>({3, 6}, 12);
    std::vector<std::int32_t> ia;
    TableRows rows;
    Tensor2 x = Tensor2::from_shape({30, 6});  // the rows made explicit
    explicit Tables(bool with_b) {
        Rng pick(13);
        for (std::size_t r = 0; r < 30; ++r) ia.push_back(static_cast<std::int32_t>(pick.below(5)));
        rows.a = a.data();
        rows.a_rows = 5;
        rows.ia = ia.data();
        if (with_b) {
            rows.b = b.data();
            rows.b_rows = 3;
        }
        rows.rows = 30;
        rows.width = 6;
        for (std::size_t r = 0; r < 30; ++r)
            for (std::size_t j = 0; j < 6; ++j) x(r, j) = a(ia[r], j) + (with_b ? b(r % 3, j) : 0.0f);
    }
};

class LinearOfTables : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(LinearOfTables, EqualsTheLinearOfTheExplicitRows) {
    const auto [bias, with_b] = GetParam();
    Rng rng(1);
    Linear layer(6, 4, bias, rng);
    for (auto& v : layer.bias) v = rng.normal();
    Tables t(with_b);
    Tensor2 scratch;
    Tensor2 y = Tensor2::from_shape({30, 4});
    layer.forward_tables(t.rows, y.data(), scratch);
    const Tensor2 expected = layer.forward(t.x);
    for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y.data()[i], expected.data()[i], 1e-5f);

    // Backward: the tables' gradients are the explicit rows' dx summed over the rows each table row made.
    const Tensor2 dy = test::random_normal<Tensor2>({30, 4}, 14);
    LinearGrad dense(layer), tables(layer);
    Tensor2 dx = Tensor2::from_shape({30, 6});
    linear_backward(layer, t.x.data(), 30, dy.data(), dense, dx.data());
    Tensor2 da = xt::zeros<float>({5, 6}), db = xt::zeros<float>({3, 6});
    da(0, 0) = 1.0f;  // it adds to what is there
    t.rows.da = da.data();
    t.rows.db = with_b ? db.data() : nullptr;
    linear_backward_tables(layer, t.rows, dy.data(), tables, scratch);
    for (std::size_t i = 0; i < dense.weight.size(); ++i) EXPECT_NEAR(tables.weight.data()[i], dense.weight.data()[i], 1e-5f);
    for (std::size_t i = 0; i < dense.bias.size(); ++i) EXPECT_NEAR(tables.bias(i), dense.bias(i), 1e-5f);
    Tensor2 da_expected = xt::zeros<float>({5, 6}), db_expected = xt::zeros<float>({3, 6});
    da_expected(0, 0) = 1.0f;
    for (std::size_t r = 0; r < 30; ++r)
        for (std::size_t j = 0; j < 6; ++j) {
            da_expected(t.ia[r], j) += dx(r, j);
            db_expected(r % 3, j) += dx(r, j);
        }
    for (std::size_t i = 0; i < da.size(); ++i) EXPECT_NEAR(da.data()[i], da_expected.data()[i], 1e-5f);
    for (std::size_t i = 0; i < db.size(); ++i) EXPECT_NEAR(db.data()[i], with_b ? db_expected.data()[i] : 0.0f, 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(BiasAndPositions, LinearOfTables,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                             return std::string(std::get<0>(info.param) ? "bias" : "no_bias") +
                                    (std::get<1>(info.param) ? "_two_tables" : "_one_table");
                         });

}  // namespace
}  // namespace attnlab
