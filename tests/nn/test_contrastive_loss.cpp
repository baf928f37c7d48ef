// The CLIP-style contrastive loss: a hand-computed case, finite differences of both inputs'
// gradients, PyTorch's values (tests/reference/make_fixtures.py contrastive_basic), and the
// errors that name the bad input.
#include <cmath>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/nn/contrastive_loss.hpp"
#include "support/fixtures.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

// Two pairs with orthogonal unit embeddings, each text equal to its image (up to length): L =
// [[1, 0], [0, 1]] / tau, so both directions' cross-entropy is log(1 + e^(-1/tau)).
TEST(ContrastiveLoss, AlignedOrthogonalPairsGiveTheClosedForm) {
    Tensor2 text = {{2.0f, 0.0f}, {0.0f, 3.0f}};
    Tensor2 image = {{0.5f, 0.0f}, {0.0f, 1.0f}};
    const float tau = 0.5f;
    const ContrastiveResult r = contrastive_forward(text, image, tau);
    EXPECT_NEAR(r.loss, std::log(1.0 + std::exp(-1.0 / tau)), 1e-6);
    EXPECT_EQ(r.count, 2u);
    EXPECT_EQ(r.correct, 2u);
    // Swapping the images makes every text's best image the wrong one.
    Tensor2 swapped = {{0.0f, 1.0f}, {0.5f, 0.0f}};
    EXPECT_EQ(contrastive_forward(text, swapped, tau).correct, 0u);
}

TEST(ContrastiveLoss, GradientsMatchFiniteDifferences) {
    Tensor2 text = random_normal<Tensor2>({4, 5}, 11), image = random_normal<Tensor2>({4, 5}, 12);
    ContrastiveCache cache;
    (void)contrastive_forward(text, image, 0.3f, &cache);
    Tensor2 dtext, dimage;
    contrastive_backward(cache, 1.0f, dtext, dimage);
    auto loss = [&] { return double(contrastive_forward(text, image, 0.3f).loss); };
    testutil::GradCheckOptions o;
    o.h = 1e-3;
    EXPECT_TRUE(testutil::check_gradient("dtext", loss, text.data(), dtext.data(), text.size(), o));
    EXPECT_TRUE(testutil::check_gradient("dimage", loss, image.data(), dimage.data(), image.size(), o));
    // dloss scales the gradient.
    Tensor2 dtext2, dimage2;
    contrastive_backward(cache, 2.0f, dtext2, dimage2);
    for (std::size_t i = 0; i < dtext.size(); ++i) EXPECT_FLOAT_EQ(dtext2.data()[i], 2.0f * dtext.data()[i]);
}

TEST(ContrastiveLoss, MatchesPyTorch) {
    const auto fx = test::load_fixture("contrastive_basic");
    const Tensor2 text = fx.tensor<2>("text"), image = fx.tensor<2>("image");
    const auto tau = static_cast<float>(fx.meta_double("temperature"));
    ContrastiveCache cache;
    const ContrastiveResult r = contrastive_forward(text, image, tau, &cache);
    EXPECT_NEAR(r.loss, fx.tensor<1>("loss")(0), 1e-5);
    Tensor2 dtext, dimage;
    contrastive_backward(cache, 1.0f, dtext, dimage);
    EXPECT_TRUE(test::all_close(dtext, fx.tensor<2>("grad.text"), 1e-6, 1e-4));
    EXPECT_TRUE(test::all_close(dimage, fx.tensor<2>("grad.image"), 1e-6, 1e-4));
}

TEST(ContrastiveLoss, OnePairHasNoNegativesAndZeroLoss) {
    const Tensor2 text = random_normal<Tensor2>({1, 3}, 1), image = random_normal<Tensor2>({1, 3}, 2);
    ContrastiveCache cache;
    EXPECT_EQ(contrastive_forward(text, image, 0.1f, &cache).loss, 0.0f);
    Tensor2 dtext, dimage;
    contrastive_backward(cache, 1.0f, dtext, dimage);
    for (float v : dtext) EXPECT_EQ(v, 0.0f);
}

TEST(ContrastiveLoss, BadInputIsRefusedWithItsValues) {
    const Tensor2 a = random_normal<Tensor2>({3, 4}, 1), b = random_normal<Tensor2>({3, 5}, 2);
    EXPECT_THROW((void)contrastive_forward(a, b, 0.1f), ShapeError);
    EXPECT_THROW((void)contrastive_forward(a, a, 0.0f), ValueError);
    EXPECT_THROW((void)contrastive_forward(a, a, std::nanf("")), ValueError);
    Tensor2 bad = a;
    bad(1, 2) = std::nanf("");
    EXPECT_THROW((void)contrastive_forward(bad, a, 0.1f), ValueError);
}

}  // namespace
}  // namespace attnlab
