// Tests of attnlab/nn/lstm.hpp: a hand-computed step, PyTorch's torch.nn.LSTM fixtures (forward,
// final state and every gradient), central finite differences on every gradient, thread-count
// independence, and errors that name the values.
#include "attnlab/nn/lstm.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/fixtures.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"
#include "support/thread_count.hpp"

namespace attnlab {
namespace {

double sigmoid(double a) { return 1.0 / (1.0 + std::exp(-a)); }

// True if `body` throws E whose message contains every one of `parts`.
template <class E, class Body>
::testing::AssertionResult throws_naming(Body body, const std::vector<std::string>& parts) {
    try {
        body();
    } catch (const E& e) {
        const std::string message = e.what();
        for (const std::string& p : parts) {
            if (message.find(p) == std::string::npos) {
                return ::testing::AssertionFailure() << "message '" << message << "' lacks '" << p << "'";
            }
        }
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "nothing (or another type) was thrown";
}

TEST(Lstm, HandComputedSingleUnitTwoSteps) {
    Rng rng(1);
    Lstm lstm({1, 1, 1, true}, rng);
    LstmLayer& p = lstm.layers[0];
    // rows i, f, g, o
    const double wi[4] = {1.0, 2.0, -1.0, 0.5}, wh[4] = {0.3, -0.2, 0.4, 0.1};
    const double bi[4] = {0.1, 0.0, 0.2, -0.3}, bh[4] = {0.0, 0.5, 0.0, 0.1};
    for (int k = 0; k < 4; ++k) {
        p.weight_ih(k, 0) = float(wi[k]);
        p.weight_hh(k, 0) = float(wh[k]);
        p.bias_ih(k) = float(bi[k]);
        p.bias_hh(k) = float(bh[k]);
    }
    Tensor3 x = Tensor3::from_shape({1, 2, 1});
    x(0, 0, 0) = 0.5f;
    x(0, 1, 0) = -1.5f;
    Tensor3 c0 = Tensor3::from_shape({1, 1, 1});
    c0(0, 0, 0) = 0.25f;
    const LstmOutput out = lstm.forward(x, nullptr, &c0);

    double h = 0.0, c = 0.25;
    const double xs[2] = {0.5, -1.5};
    for (int t = 0; t < 2; ++t) {
        double a[4];
        for (int k = 0; k < 4; ++k) a[k] = wi[k] * xs[t] + bi[k] + wh[k] * h + bh[k];
        const double i = sigmoid(a[0]), f = sigmoid(a[1]), g = std::tanh(a[2]), o = sigmoid(a[3]);
        c = f * c + i * g;
        h = o * std::tanh(c);
        EXPECT_NEAR(out.output(0, t, 0), h, 1e-6) << "t = " << t;
    }
    EXPECT_NEAR(out.h(0, 0, 0), h, 1e-6);
    EXPECT_NEAR(out.c(0, 0, 0), c, 1e-6);
}

TEST(Lstm, ParametersHaveTorchNamesShapesAndInitBounds) {
    Rng rng(3);
    Lstm lstm({5, 7, 2, true}, rng);
    const std::vector<ParameterView> params = lstm.parameters();
    const std::vector<std::string> names = {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                            "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1"};
    const std::vector<std::vector<std::size_t>> shapes = {{28, 5}, {28, 7}, {28}, {28}, {28, 7}, {28, 7}, {28}, {28}};
    ASSERT_EQ(params.size(), names.size());
    const float bound = 1.0f / std::sqrt(7.0f);
    for (std::size_t k = 0; k < params.size(); ++k) {
        EXPECT_EQ(params[k].name, names[k]);
        EXPECT_EQ(params[k].shape, shapes[k]) << names[k];
        float lo = 1.0f, hi = -1.0f;
        for (std::size_t j = 0; j < params[k].size(); ++j) {
            lo = std::min(lo, params[k].data[j]);
            hi = std::max(hi, params[k].data[j]);
        }
        EXPECT_GE(lo, -bound) << names[k];
        EXPECT_LT(hi, bound) << names[k];
        EXPECT_LT(lo, -0.5f * bound) << names[k] << " looks not uniform over the bound";
    }
    EXPECT_EQ(lstm.parameter_count(), 28u * (5 + 7 + 2) + 28u * (7 + 7 + 2));

    Rng rng2(3);
    Lstm no_bias({5, 7, 2, false}, rng2);
    EXPECT_EQ(no_bias.parameters().size(), 4u);
    LstmGrad g(no_bias);
    EXPECT_EQ(g.views().size(), 4u);
    EXPECT_EQ(g.views()[3].name, "weight_hh_l1");
}

// ---- PyTorch fixtures (tests/reference/make_fixtures.py, case_lstm) ----

class LstmReference : public ::testing::TestWithParam<const char*> {};

TEST_P(LstmReference, ForwardFinalStateAndGradientsMatchTorch) {
    const test::Fixture fx = test::load_fixture(GetParam());
    LstmConfig config;
    config.input_size = static_cast<std::size_t>(fx.meta_int("input_size"));
    config.hidden_size = static_cast<std::size_t>(fx.meta_int("hidden_size"));
    config.num_layers = static_cast<std::size_t>(fx.meta_int("num_layers"));
    config.bias = fx.meta_bool("bias");
    const bool batched = fx.meta_bool("batched"), with_state = fx.meta_bool("with_state");
    const std::size_t L = config.num_layers, H = config.hidden_size, I = config.input_size;
    Rng rng(0);
    Lstm lstm(config, rng);
    for (ParameterView& p : lstm.parameters()) {
        const xt::xarray<float> value = p.shape.size() == 2 ? xt::xarray<float>(fx.tensor<2>(p.name))
                                                             : xt::xarray<float>(fx.tensor<1>(p.name));
        assign_parameter(lstm.parameters(), p.name, p.shape, value.data(), "test");
    }

    // Everything as a batch of B = 1 when the fixture is unbatched ((T, I) and (L, H) in torch).
    const auto as3 = [](const xt::xarray<float>& t, std::vector<std::size_t> shape) {
        Tensor3 r = Tensor3::from_shape({shape[0], shape[1], shape[2]});
        std::copy(t.begin(), t.end(), r.begin());
        return r;
    };
    const auto load = [&](const char* name) -> xt::xarray<float> {
        return batched ? xt::xarray<float>(fx.tensor<3>(name)) : xt::xarray<float>(fx.tensor<2>(name));
    };
    const xt::xarray<float> x_raw = load("x");
    const std::size_t T = batched ? x_raw.shape(1) : x_raw.shape(0), B = batched ? x_raw.shape(0) : 1;
    const Tensor3 x = as3(x_raw, {B, T, I});
    Tensor3 h0, c0;
    if (with_state) {
        h0 = as3(load("h0"), {L, B, H});
        c0 = as3(load("c0"), {L, B, H});
    }

    LstmCache cache;
    LstmOutput out;
    lstm.forward(x, with_state ? &h0 : nullptr, with_state ? &c0 : nullptr, cache, out);
    const std::vector<std::size_t> out_shape = batched ? std::vector<std::size_t>{B, T, H} : std::vector<std::size_t>{T, H};
    const std::vector<std::size_t> state_shape =
        batched ? std::vector<std::size_t>{L, B, H} : std::vector<std::size_t>{L, H};
    EXPECT_TRUE(test::all_close(out.output.data(), load("output").data(), out_shape, 1e-5)) << "output";
    EXPECT_TRUE(test::all_close(out.h.data(), load("h").data(), state_shape, 1e-5)) << "h";
    EXPECT_TRUE(test::all_close(out.c.data(), load("c").data(), state_shape, 1e-5)) << "c";

    if (!batched) {  // the unbatched overload gives the same numbers in torch's shapes
        const Tensor2 x2 = fx.tensor<2>("x"), h02 = fx.tensor<2>("h0"), c02 = fx.tensor<2>("c0");
        const LstmOutputUnbatched u = lstm.forward(x2, &h02, &c02);
        EXPECT_TRUE(test::all_close(u.output, fx.tensor<2>("output"), 1e-5)) << "unbatched output";
        EXPECT_TRUE(test::all_close(u.h, fx.tensor<2>("h"), 1e-5)) << "unbatched h";
        EXPECT_TRUE(test::all_close(u.c, fx.tensor<2>("c"), 1e-5)) << "unbatched c";
    }

    const Tensor3 dout = as3(load("dout"), {B, T, H}), dh = as3(load("dh"), {L, B, H}), dc = as3(load("dc"), {L, B, H});
    LstmGrad grads(lstm);
    Tensor3 dx, dh0, dc0;
    lstm.backward(dout, &dh, &dc, cache, grads, dx, &dh0, &dc0);
    const std::vector<std::size_t> x_shape = batched ? std::vector<std::size_t>{B, T, I} : std::vector<std::size_t>{T, I};
    // Sums over T·B rows in float32 against float64: 2e-5 absolute, 1e-4 relative.
    EXPECT_TRUE(test::all_close(dx.data(), load("grad.x").data(), x_shape, 2e-5, 1e-4)) << "grad.x";
    if (with_state) {
        EXPECT_TRUE(test::all_close(dh0.data(), load("grad.h0").data(), state_shape, 2e-5, 1e-4)) << "grad.h0";
        EXPECT_TRUE(test::all_close(dc0.data(), load("grad.c0").data(), state_shape, 2e-5, 1e-4)) << "grad.c0";
    }
    for (const ParameterView& g : grads.views()) {
        const xt::xarray<float> expected = g.shape.size() == 2 ? xt::xarray<float>(fx.tensor<2>("grad." + g.name))
                                                                : xt::xarray<float>(fx.tensor<1>("grad." + g.name));
        EXPECT_TRUE(test::all_close(g.data, expected.data(), g.shape, 2e-5, 1e-4)) << "grad." << g.name;
    }
}

INSTANTIATE_TEST_SUITE_P(Torch, LstmReference,
                         ::testing::Values("lstm_basic", "lstm_two_layers_state", "lstm_unbatched_state",
                                           "lstm_nobias"));

// ---- finite differences ----

TEST(Lstm, EveryGradientMatchesFiniteDifferences) {
    const std::size_t B = 2, T = 4, I = 3, H = 4, L = 2;
    Rng rng(11);
    Lstm lstm({I, H, L, true}, rng);
    Tensor3 x = test::random_normal<Tensor3>({B, T, I}, 1);
    Tensor3 h0 = test::random_normal<Tensor3>({L, B, H}, 2, 0.5f);
    Tensor3 c0 = test::random_normal<Tensor3>({L, B, H}, 3, 0.5f);
    const Tensor3 w = test::random_normal<Tensor3>({B, T, H}, 4);
    const Tensor3 wh = test::random_normal<Tensor3>({L, B, H}, 5);
    const Tensor3 wc = test::random_normal<Tensor3>({L, B, H}, 6);

    const auto loss = [&] {
        const LstmOutput out = lstm.forward(x, &h0, &c0);
        return testutil::dot(out.output, w) + testutil::dot(out.h, wh) + testutil::dot(out.c, wc);
    };
    LstmCache cache;
    LstmOutput out;
    lstm.forward(x, &h0, &c0, cache, out);
    LstmGrad grads(lstm);
    Tensor3 dx, dh0, dc0;
    lstm.backward(w, &wh, &wc, cache, grads, dx, &dh0, &dc0);

    // Float forwards through T tanh/σ steps: a smaller step than the default keeps the
    // curvature term below the tolerance.
    testutil::GradCheckOptions options;
    options.h = 3e-3;
    options.atol = 2e-3;
    EXPECT_TRUE(testutil::check_gradient("lstm dx", loss, x.data(), dx.data(), x.size(), options));
    EXPECT_TRUE(testutil::check_gradient("lstm dh0", loss, h0.data(), dh0.data(), h0.size(), options));
    EXPECT_TRUE(testutil::check_gradient("lstm dc0", loss, c0.data(), dc0.data(), c0.size(), options));
    std::vector<ParameterView> params = lstm.parameters();
    const std::vector<ParameterView> g = grads.views();
    ASSERT_EQ(params.size(), g.size());
    for (std::size_t k = 0; k < params.size(); ++k) {
        EXPECT_TRUE(testutil::check_gradient("lstm d" + params[k].name, loss, params[k].data, g[k].data,
                                             params[k].size(), options));
    }
}

TEST(Lstm, BackwardAccumulatesParameterGradients) {
    Rng rng(2);
    Lstm lstm({3, 5, 1, true}, rng);
    const Tensor3 x = test::random_normal<Tensor3>({2, 3, 3}, 1);
    const Tensor3 dout = test::random_normal<Tensor3>({2, 3, 5}, 2);
    LstmCache cache;
    LstmOutput out;
    lstm.forward(x, nullptr, nullptr, cache, out);
    LstmGrad once(lstm), twice(lstm);
    Tensor3 dx;
    lstm.backward(dout, nullptr, nullptr, cache, once, dx, nullptr, nullptr);
    lstm.backward(dout, nullptr, nullptr, cache, twice, dx, nullptr, nullptr);
    lstm.backward(dout, nullptr, nullptr, cache, twice, dx, nullptr, nullptr);
    const std::vector<ParameterView> a = once.views(), b = twice.views();
    for (std::size_t k = 0; k < a.size(); ++k) {
        for (std::size_t j = 0; j < a[k].size(); ++j) {
            ASSERT_NEAR(b[k].data[j], 2.0f * a[k].data[j], 1e-5f * (1.0f + std::fabs(a[k].data[j]))) << a[k].name;
        }
    }
}

// Rows of a step are split across threads (and so are the matmuls); every element is computed
// by the same instructions whatever the split.
TEST(Lstm, ResultsAreBitIdenticalForOneAndTwoThreads) {
    const std::size_t B = 64, T = 3, I = 16, H = 160, L = 2;
    Rng rng(5);
    Lstm lstm({I, H, L, true}, rng);
    const Tensor3 x = test::random_normal<Tensor3>({B, T, I}, 1);
    const Tensor3 dout = test::random_normal<Tensor3>({B, T, H}, 2);
    const auto run = [&](std::size_t threads, LstmOutput& out, Tensor3& dx, LstmGrad& grads) {
        testutil::ThreadCountScope scope(threads);
        LstmCache cache;
        lstm.forward(x, nullptr, nullptr, cache, out);
        lstm.backward(dout, nullptr, nullptr, cache, grads, dx, nullptr, nullptr);
    };
    LstmOutput o1, o2;
    Tensor3 dx1, dx2;
    LstmGrad g1(lstm), g2(lstm);
    run(1, o1, dx1, g1);
    run(2, o2, dx2, g2);
    EXPECT_EQ(o1.output, o2.output);
    EXPECT_EQ(o1.c, o2.c);
    EXPECT_EQ(dx1, dx2);
    EXPECT_EQ(g1.layers[0].weight_hh, g2.layers[0].weight_hh);
    EXPECT_EQ(g1.layers[1].bias_ih, g2.layers[1].bias_ih);
}

TEST(Lstm, ACacheReusedAtAnotherShapeGivesFreshResults) {
    Rng rng(4);
    Lstm lstm({3, 4, 2, true}, rng);
    const Tensor3 a = test::random_normal<Tensor3>({2, 5, 3}, 1);
    const Tensor3 b = test::random_normal<Tensor3>({3, 2, 3}, 2);
    LstmCache cache;
    LstmOutput out;
    lstm.forward(a, nullptr, nullptr, cache, out);
    lstm.forward(b, nullptr, nullptr, cache, out);
    const LstmOutput fresh = lstm.forward(b);
    EXPECT_EQ(out.output, fresh.output);
    EXPECT_EQ(out.h, fresh.h);
}

// ---- errors name the values ----

TEST(Lstm, ErrorsNameTheValues) {
    Rng rng(1);
    EXPECT_TRUE(throws_naming<ConfigError>([&] { Lstm({3, 4, 0, true}, rng); }, {"num_layers", "0"}));
    EXPECT_TRUE(throws_naming<ConfigError>([&] { Lstm({0, 4, 1, true}, rng); }, {"input_size=0", "hidden_size=4"}));
    Lstm lstm({3, 4, 2, true}, rng);
    const Tensor3 x = xt::zeros<float>({2, 5, 3});
    EXPECT_TRUE(throws_naming<ShapeError>([&] { lstm.forward(Tensor3(xt::zeros<float>({2, 5, 6}))); },
                                          {"Lstm::forward", "(B, T, 3)", "(2, 5, 6)"}));
    EXPECT_TRUE(throws_naming<ShapeError>([&] { lstm.forward(Tensor3(xt::zeros<float>({2, 0, 3}))); },
                                          {"T >= 1", "(2, 0, 3)"}));
    const Tensor3 h0 = xt::zeros<float>({1, 2, 4});
    EXPECT_TRUE(throws_naming<ShapeError>([&] { lstm.forward(x, &h0); }, {"h0", "(2, 2, 4)", "(1, 2, 4)"}));
    const Tensor3 c0 = xt::zeros<float>({2, 3, 4});
    EXPECT_TRUE(throws_naming<ShapeError>([&] { lstm.forward(x, nullptr, &c0); }, {"c0", "(2, 2, 4)", "(2, 3, 4)"}));
    const Tensor2 h0u = xt::zeros<float>({2, 5});
    EXPECT_TRUE(throws_naming<ShapeError>([&] { lstm.forward(Tensor2(xt::zeros<float>({5, 3})), &h0u); },
                                          {"unbatched h0", "(2, 4)", "(2, 5)"}));

    LstmCache cache;
    LstmGrad grads(lstm);
    Tensor3 dx;
    EXPECT_TRUE(throws_naming<ConfigError>(
        [&] { lstm.backward(Tensor3(xt::zeros<float>({2, 5, 4})), nullptr, nullptr, cache, grads, dx, nullptr, nullptr); },
        {"Lstm::backward", "0 layers", "expected 2"}));
    LstmOutput out;
    lstm.forward(x, nullptr, nullptr, cache, out);
    EXPECT_TRUE(throws_naming<ShapeError>(
        [&] { lstm.backward(Tensor3(xt::zeros<float>({2, 4, 4})), nullptr, nullptr, cache, grads, dx, nullptr, nullptr); },
        {"dout", "(2, 5, 4)", "(2, 4, 4)"}));
    // The layer still works after every error.
    EXPECT_NO_THROW(lstm.backward(Tensor3(xt::zeros<float>({2, 5, 4})), nullptr, nullptr, cache, grads, dx, nullptr,
                                  nullptr));
}

}  // namespace
}  // namespace attnlab
