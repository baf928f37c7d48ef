#include "attnlab/train/optimizer.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

// A 2-element parameter and its gradient, with a fixed gradient sequence for three steps.
struct TwoElement {
    std::vector<float> p{0.5f, -1.5f};
    std::vector<float> g{0.0f, 0.0f};
    std::vector<ParameterView> params() { return {ParameterView{"w", p.data(), {2}}}; }
    std::vector<ParameterView> grads() { return {ParameterView{"w", g.data(), {2}}}; }
};

const double kGrads[3][2] = {{0.1, -0.2}, {-0.3, 0.4}, {0.25, 0.05}};

template <class E, class F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "no exception";
    return "";
}

void expect_contains(const std::string& message, const std::vector<std::string>& fragments) {
    for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << message;
}

TEST(AdamW, MatchesTorchFormulasForThreeSteps) {
    const double lr = 0.01, b1 = 0.9, b2 = 0.99, eps = 1e-8, wd = 0.1;
    AdamWOptions o;
    o.beta1 = static_cast<float>(b1);
    o.beta2 = static_cast<float>(b2);
    o.eps = static_cast<float>(eps);
    o.weight_decay = static_cast<float>(wd);
    AdamW opt(o);
    TwoElement x;
    double p[2] = {0.5, -1.5}, m[2] = {0, 0}, v[2] = {0, 0};
    for (int t = 1; t <= 3; ++t) {
        for (int j = 0; j < 2; ++j) {
            const double g = kGrads[t - 1][j];
            x.g[j] = static_cast<float>(g);
            // torch.optim.AdamW, written out:
            p[j] *= 1 - lr * wd;
            m[j] = b1 * m[j] + (1 - b1) * g;
            v[j] = b2 * v[j] + (1 - b2) * g * g;
            const double m_hat = m[j] / (1 - std::pow(b1, t)), v_hat = v[j] / (1 - std::pow(b2, t));
            p[j] -= lr * m_hat / (std::sqrt(v_hat) + eps);
        }
        opt.step(x.params(), x.grads(), static_cast<float>(lr));
        for (int j = 0; j < 2; ++j) EXPECT_NEAR(x.p[j], p[j], 1e-6) << "step " << t << " element " << j;
    }
    EXPECT_EQ(opt.steps(), 3u);
}

TEST(AdamW, BiasCorrectionMakesTheFirstStepLrTimesSignOfGradient) {
    // m_hat = g and v_hat = g^2 at t = 1, so each element moves by lr * g / (|g| + eps).
    AdamWOptions o;
    o.weight_decay = 0.0f;
    AdamW opt(o);
    TwoElement x;
    x.g = {0.003f, -7.0f};
    opt.step(x.params(), x.grads(), 0.1f);
    EXPECT_NEAR(x.p[0], 0.5f - 0.1f, 1e-5);
    EXPECT_NEAR(x.p[1], -1.5f + 0.1f, 1e-6);
}

TEST(AdamW, WeightDecayIsDecoupledFromTheGradient) {
    // A zero gradient gives a zero Adam update; only p *= (1 - lr * wd) remains. With L2 decay
    // folded into the gradient (torch.optim.Adam) the update would be about lr * sign(p) instead.
    AdamWOptions o;
    o.weight_decay = 0.5f;
    AdamW opt(o);
    TwoElement x;
    opt.step(x.params(), x.grads(), 0.1f);
    EXPECT_FLOAT_EQ(x.p[0], 0.5f * (1 - 0.1f * 0.5f));
    EXPECT_FLOAT_EQ(x.p[1], -1.5f * (1 - 0.1f * 0.5f));
}

TEST(AdamW, DecayPredicateExcludesBiasesAndNormGains) {
    std::vector<float> w(4, 1.0f), b(2, 1.0f), dw(4, 0.0f), db(2, 0.0f);
    const std::vector<ParameterView> params{{"fc.weight", w.data(), {2, 2}}, {"fc.bias", b.data(), {2}}};
    const std::vector<ParameterView> grads{{"fc.weight", dw.data(), {2, 2}}, {"fc.bias", db.data(), {2}}};
    AdamWOptions o;
    o.weight_decay = 0.1f;
    o.decay = decay_matrices_only;
    AdamW opt(o);
    opt.step(params, grads, 1.0f);
    EXPECT_FLOAT_EQ(w[0], 0.9f);
    EXPECT_FLOAT_EQ(b[0], 1.0f);
}

TEST(AdamW, ResetRestartsBiasCorrection) {
    AdamWOptions o;
    o.weight_decay = 0.0f;
    AdamW opt(o);
    TwoElement x;
    x.g = {1.0f, 1.0f};
    opt.step(x.params(), x.grads(), 0.1f);
    opt.step(x.params(), x.grads(), 0.1f);
    opt.reset();
    EXPECT_EQ(opt.steps(), 0u);
    const float before = x.p[0];
    x.g = {-1.0f, -1.0f};
    opt.step(x.params(), x.grads(), 0.1f);
    EXPECT_NEAR(x.p[0], before + 0.1f, 1e-6) << "a fresh first step moves by exactly lr";
}

TEST(Sgd, MomentumMatchesTorchFormulasForThreeSteps) {
    for (bool nesterov : {false, true}) {
        const double lr = 0.1, mu = 0.9, wd = 0.01;
        SgdOptions o;
        o.momentum = static_cast<float>(mu);
        o.nesterov = nesterov;
        o.weight_decay = static_cast<float>(wd);
        Sgd opt(o);
        TwoElement x;
        double p[2] = {0.5, -1.5}, buf[2] = {0, 0};
        for (int t = 1; t <= 3; ++t) {
            for (int j = 0; j < 2; ++j) {
                const double g = kGrads[t - 1][j];
                x.g[j] = static_cast<float>(g);
                // torch.optim.SGD with dampening = 0, written out:
                double d = g + wd * p[j];
                buf[j] = t == 1 ? d : mu * buf[j] + d;
                d = nesterov ? d + mu * buf[j] : buf[j];
                p[j] -= lr * d;
            }
            opt.step(x.params(), x.grads(), static_cast<float>(lr));
            for (int j = 0; j < 2; ++j)
                EXPECT_NEAR(x.p[j], p[j], 1e-6) << "nesterov " << nesterov << " step " << t << " element " << j;
        }
    }
}

TEST(Sgd, WithoutMomentumIsPlainGradientDescent) {
    Sgd opt;
    TwoElement x;
    x.g = {1.0f, -2.0f};
    opt.step(x.params(), x.grads(), 0.5f);
    EXPECT_FLOAT_EQ(x.p[0], 0.0f);
    EXPECT_FLOAT_EQ(x.p[1], -0.5f);
}

TEST(Sgd, DampeningScalesAllButTheFirstBuffer) {
    SgdOptions o;
    o.momentum = 0.5f;
    o.dampening = 0.5f;
    Sgd opt(o);
    TwoElement x;
    x.g = {1.0f, 1.0f};
    opt.step(x.params(), x.grads(), 1.0f);  // buf = 1
    opt.step(x.params(), x.grads(), 1.0f);  // buf = 0.5 * 1 + 0.5 * 1 = 1
    EXPECT_FLOAT_EQ(x.p[0], 0.5f - 2.0f);
}

TEST(Optimizer, MismatchedNamesOrShapesThrowNamingTheFirst) {
    std::vector<float> a(2), b(3);
    const std::vector<ParameterView> params{{"w", a.data(), {2}}, {"b", b.data(), {3}}};
    AdamW opt;
    expect_contains(message_of<ConfigError>([&] {
                        opt.step(params, {{"w", a.data(), {2}}, {"bias", b.data(), {3}}}, 0.1f);
                    }),
                    {"parameter 1 is 'b'", "gradient 1 is 'bias'"});
    expect_contains(
        message_of<ConfigError>([&] { opt.step(params, {{"w", a.data(), {1, 2}}, {"b", b.data(), {3}}}, 0.1f); }),
        {"'w'", "(2)", "(1, 2)"});
    expect_contains(message_of<ConfigError>([&] { opt.step(params, {{"w", a.data(), {2}}}, 0.1f); }),
                    {"2 parameters but 1 gradients"});
}

TEST(Optimizer, ParameterListMustNotChangeBetweenSteps) {
    TwoElement x;
    Sgd opt;
    opt.step(x.params(), x.grads(), 0.1f);
    std::vector<float> c(2), dc(2);
    expect_contains(message_of<ConfigError>([&] {
                        opt.step({{"v", c.data(), {2}}}, {{"v", dc.data(), {2}}}, 0.1f);
                    }),
                    {"'v'", "'w'", "reset()"});
    opt.reset();
    opt.step({{"v", c.data(), {2}}}, {{"v", dc.data(), {2}}}, 0.1f);
}

TEST(Optimizer, BadOptionsAndLearningRatesThrowNamingThem) {
    AdamWOptions a;
    a.beta1 = 1.0f;
    expect_contains(message_of<ConfigError>([&] { AdamW opt(a); }), {"beta1=1"});
    SgdOptions s;
    s.nesterov = true;
    expect_contains(message_of<ConfigError>([&] { Sgd opt(s); }), {"nesterov", "momentum=0"});
    TwoElement x;
    Sgd opt;
    expect_contains(message_of<ValueError>([&] { opt.step(x.params(), x.grads(), -0.1f); }), {"lr=-0.1"});
}

TEST(Optimizer, FactoryBuildsByNameAndRejectsUnknownOrInapplicableOptions) {
    EXPECT_EQ(make_optimizer("adamw")->name(), "adamw");
    OptimizerOptions o;
    o.momentum = 0.9f;
    o.nesterov = true;
    auto sgd = make_optimizer("sgd", o);
    ASSERT_EQ(sgd->name(), "sgd");
    EXPECT_TRUE(static_cast<Sgd&>(*sgd).options().nesterov);
    expect_contains(message_of<ConfigError>([] { make_optimizer("adam"); }), {"'adam'", "adamw, sgd"});
    expect_contains(message_of<ConfigError>([&] { make_optimizer("adamw", o); }), {"momentum", "adamw"});
}

TEST(GradNorm, GlobalNormCoversEveryGradient) {
    std::vector<float> a{3.0f}, b{0.0f, 4.0f};
    EXPECT_FLOAT_EQ(global_grad_norm({{"a", a.data(), {1}}, {"b", b.data(), {2}}}), 5.0f);
    EXPECT_FLOAT_EQ(global_grad_norm({}), 0.0f);
}

TEST(GradNorm, ClipScalesToMaxNormAndReturnsTheNormBefore) {
    std::vector<float> a{3.0f}, b{0.0f, 4.0f};
    const std::vector<ParameterView> grads{{"a", a.data(), {1}}, {"b", b.data(), {2}}};
    EXPECT_FLOAT_EQ(clip_grad_norm(grads, 1.0f), 5.0f);
    const double scale = 1.0 / (5.0 + 1e-6);
    EXPECT_NEAR(a[0], 3.0 * scale, 1e-7);
    EXPECT_NEAR(b[1], 4.0 * scale, 1e-7);
    EXPECT_NEAR(global_grad_norm(grads), 1.0f, 1e-6);
}

TEST(GradNorm, ClipLeavesSmallGradientsUntouched) {
    std::vector<float> a{0.3f, 0.4f};
    EXPECT_FLOAT_EQ(clip_grad_norm({{"a", a.data(), {2}}}, 1.0f), 0.5f);
    EXPECT_EQ(a[0], 0.3f);
    EXPECT_EQ(a[1], 0.4f);
    expect_contains(message_of<ConfigError>([&] { clip_grad_norm({{"a", a.data(), {2}}}, 0.0f); }),
                    {"max_norm=0"});
}

TEST(GradNorm, NonFiniteGradientIsReportedWithStepParameterAndIndex) {
    std::vector<float> a{1.0f, 2.0f}, b{0.0f, 1.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
    const std::vector<ParameterView> grads{{"embed.weight", a.data(), {2}},
                                           {"blocks.0.attn.q_proj.weight", b.data(), {2, 2}}};
    expect_contains(message_of<ValueError>([&] { require_finite_gradients(grads, 12); }),
                    {"step 12", "'blocks.0.attn.q_proj.weight'", "(2, 2)", "nan", "index 2"});
    b[2] = 0.0f;
    b[3] = std::numeric_limits<float>::infinity();
    expect_contains(message_of<ValueError>([&] { require_finite_gradients(grads, 3); }), {"inf", "index 3"});
    b[3] = 0.0f;
    EXPECT_NO_THROW(require_finite_gradients(grads, 4));
}

}  // namespace
}  // namespace attnlab
