// PatchEmbedding: the conv-as-matmul projection against a direct convolution written here, the
// CLS row and the positions, and the backward by finite differences.
#include <cmath>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/nn/patch_embedding.hpp"
#include "attnlab/posenc/sinusoidal.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

PatchEmbeddingConfig config(PositionalKind pe, bool cls) {
    PatchEmbeddingConfig c;
    c.image_size = 8;
    c.patch_size = 4;
    c.d_model = 8;
    c.positional = pe;
    c.cls = cls;
    return c;
}

// out[b][gy·G + gx][o] = bias[o] + Σ_{py, px} W[o][py·P + px] · image[b][gy·P + py][gx·P + px]:
// a P x P convolution with stride P, one output position at a time.
Tensor3 direct_convolution(const PatchEmbedding& emb, const Tensor3& images) {
    const std::size_t batch = images.shape(0), p = emb.config().patch_size, g = emb.config().grid();
    const std::size_t c = emb.config().d_model;
    Tensor3 out = Tensor3::from_shape({batch, g * g, c});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t gy = 0; gy < g; ++gy)
            for (std::size_t gx = 0; gx < g; ++gx)
                for (std::size_t o = 0; o < c; ++o) {
                    double acc = emb.proj.bias(o);
                    for (std::size_t py = 0; py < p; ++py)
                        for (std::size_t px = 0; px < p; ++px)
                            acc += double(emb.proj.weight(o, py * p + px)) * images(b, gy * p + py, gx * p + px);
                    out(b, gy * g + gx, o) = static_cast<float>(acc);
                }
    return out;
}

TEST(PatchEmbedding, ProjectionEqualsADirectConvolution) {
    Rng rng(1);
    const PatchEmbedding emb(config(PositionalKind::none, false), rng);
    const Tensor3 images = random_normal<Tensor3>({3, 8, 8}, 2);
    const Tensor3 got = emb.forward(images);
    const Tensor3 want = direct_convolution(emb, images);
    ASSERT_EQ(got.shape(), want.shape());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got.data()[i], want.data()[i], 1e-5f) << i;
}

TEST(PatchEmbedding, ClsRowComesFirstAndLearnedPositionsAddToEveryRow) {
    Rng rng(3);
    const PatchEmbedding emb(config(PositionalKind::learned, true), rng);
    const Tensor3 images = random_normal<Tensor3>({2, 8, 8}, 4);
    const Tensor3 got = emb.forward(images);  // (2, 5, 8)
    const Tensor3 conv = direct_convolution(emb, images);
    ASSERT_EQ(got.shape(1), 5u);
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t j = 0; j < 8; ++j) {
            EXPECT_FLOAT_EQ(got(b, 0, j), emb.cls_token(j) + emb.pos_emb(0, j));
            for (std::size_t n = 0; n < 4; ++n) EXPECT_NEAR(got(b, n + 1, j), conv(b, n, j) + emb.pos_emb(n + 1, j), 1e-5f);
        }
}

TEST(PatchEmbedding, SinusoidalPositionsAreTheRowTableThenTheColumnTable) {
    const Tensor2 table = sinusoidal_table_2d(3, 8);
    const Tensor2 axis = sinusoidal_table(3, 4);
    for (std::size_t gy = 0; gy < 3; ++gy)
        for (std::size_t gx = 0; gx < 3; ++gx)
            for (std::size_t j = 0; j < 4; ++j) {
                EXPECT_EQ(table(gy * 3 + gx, j), axis(gy, j));
                EXPECT_EQ(table(gy * 3 + gx, 4 + j), axis(gx, j));
            }
}

TEST(PatchEmbedding, BackwardMatchesFiniteDifferences) {
    for (bool cls : {false, true}) {
        Rng rng(5);
        PatchEmbedding emb(config(PositionalKind::learned, cls), rng);
        Tensor3 images = random_normal<Tensor3>({2, 8, 8}, 6);
        const std::size_t np = emb.config().positions();
        const Tensor3 w = random_normal<Tensor3>({2, np, 8}, 7);
        PatchEmbeddingCache cache;
        (void)emb.forward(images, &cache);
        PatchEmbeddingGrad grads(emb);
        Tensor3 dimages;
        emb.backward(w, cache, grads, &dimages);
        auto loss = [&] { return testutil::dot(emb.forward(images), w); };
        EXPECT_TRUE(testutil::check_gradient("proj.weight", loss, emb.proj.weight.data(), grads.proj.weight.data(),
                                             emb.proj.weight.size()));
        EXPECT_TRUE(testutil::check_gradient("proj.bias", loss, emb.proj.bias.data(), grads.proj.bias.data(), 8));
        EXPECT_TRUE(testutil::check_gradient("pos_emb", loss, emb.pos_emb.data(), grads.pos_emb.data(),
                                             emb.pos_emb.size()));
        EXPECT_TRUE(testutil::check_gradient("images", loss, images.data(), dimages.data(), images.size()));
        if (cls) {
            EXPECT_TRUE(testutil::check_gradient("cls_token", loss, emb.cls_token.data(), grads.cls_token.data(), 8));
        }
    }
}

TEST(PatchEmbedding, BadSizesAreRefusedNamingTheNumbers) {
    Rng rng(1);
    PatchEmbeddingConfig c = config(PositionalKind::none, false);
    c.patch_size = 3;
    EXPECT_THROW(PatchEmbedding(c, rng), ConfigError);
    const PatchEmbedding emb(config(PositionalKind::none, false), rng);
    try {
        (void)emb.forward(Tensor3::from_shape({2, 8, 9}));
        FAIL() << "expected a ShapeError";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("(B, S, S)"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace attnlab
