// The image models: Swin's shifted-window mask against an explicit construction, a Swin block
// against dense attention over all patches with the equivalent mask and bias, finite
// differences of the block and the whole models, parameter counts, checkpoints, and a ViT and
// a Swin learning the shapes task.
#include <cmath>
#include <limits>
#include <set>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/model/image_classifier.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

ModelConfig image_config(Architecture arch) {
    ModelConfig c;
    c.kind = ModelKind::encoder;
    c.architecture = arch;
    c.image_size = 8;
    c.patch_size = 1;  // an 8 x 8 patch grid
    c.swin_window = 4;
    c.d_model = 8;
    c.num_heads = 2;
    c.ff_dim = 16;
    c.num_layers = 2;
    c.num_classes = 3;
    return c;
}

// Map coordinate y of a G-row map rolled by -shift: its row in the rolled map.
std::size_t rolled(std::size_t y, std::size_t shift, std::size_t grid) { return (y + grid - shift) % grid; }

// Two patches of one window of the rolled map are neighbours in the image only if the roll did
// not separate them: their offset in the map equals their offset in the rolled map, on both axes.
bool rolled_apart(std::size_t yi, std::size_t xi, std::size_t yj, std::size_t xj, std::size_t shift, std::size_t grid) {
    const auto off = [](std::size_t a, std::size_t b) { return static_cast<long>(a) - static_cast<long>(b); };
    return off(yi, yj) != off(rolled(yi, shift, grid), rolled(yj, shift, grid)) ||
           off(xi, xj) != off(rolled(xi, shift, grid), rolled(xj, shift, grid));
}

TEST(SwinMask, ShiftedWindowMaskEqualsAnExplicitConstruction) {
    for (std::size_t grid : {4, 8, 12}) {
        const std::size_t window = 4, shift = 2, per_side = grid / window;
        const Mask3 mask = shifted_window_mask(grid, window, shift);
        ASSERT_EQ(mask.shape(0), per_side * per_side);
        std::size_t hidden = 0;
        for (std::size_t w = 0; w < per_side * per_side; ++w)
            for (std::size_t i = 0; i < window * window; ++i)
                for (std::size_t j = 0; j < window * window; ++j) {
                    // rolled coordinates of the two patches, then the map coordinates they came from
                    const std::size_t ryi = (w / per_side) * window + i / window, rxi = (w % per_side) * window + i % window;
                    const std::size_t ryj = (w / per_side) * window + j / window, rxj = (w % per_side) * window + j % window;
                    const bool apart = rolled_apart((ryi + shift) % grid, (rxi + shift) % grid, (ryj + shift) % grid,
                                                    (rxj + shift) % grid, shift, grid);
                    EXPECT_EQ(mask(w, i, j) != 0, apart) << "grid " << grid << " window " << w << " (" << i << ", " << j << ")";
                    hidden += apart;
                }
        EXPECT_GT(hidden, 0u);
    }
    const Mask3 unshifted = shifted_window_mask(8, 4, 0);
    for (auto m : unshifted) EXPECT_EQ(m, 0);
}

TEST(SwinMask, RelativePositionIndexCoversTheTableSymmetrically) {
    const Index2 index = relative_position_index(3);
    std::set<std::int32_t> seen(index.begin(), index.end());
    EXPECT_EQ(seen.size(), 25u);  // (2M - 1)²
    for (std::size_t i = 0; i < 9; ++i) {
        EXPECT_EQ(index(i, i), 12);  // offset (0, 0): the centre of the table
        for (std::size_t j = 0; j < 9; ++j) EXPECT_EQ(index(i, j) + index(j, i), 24);
    }
}

// The dense equivalent of a Swin block: the same TransformerBlock over all G² patches, where
// patch p sees patch q only if both fall in one window of the rolled map and the roll did not
// separate them, with bias table[(dy + M-1)(2M-1) + dx + M-1][h] for their offset (dy, dx).
TEST(SwinBlock, EqualsDenseAttentionWithTheEquivalentMaskAndBias) {
    const ModelConfig config = image_config(Architecture::swin);
    for (std::size_t shift : {0, 2}) {
        Rng rng(11 + shift);
        SwinBlock blk(config, /*grid=*/8, /*window=*/4, shift, rng);
        const std::size_t grid = 8, m = 4, n = grid * grid, heads = 2;
        const Tensor3 x = random_normal<Tensor3>({2, n, 8}, 12);
        Tensor3 y;
        blk.forward(x, {}, nullptr, nullptr, y);

        AttentionOptions dense;
        dense.mask.explicit_mask = Mask2::from_shape({n, n});
        Tensor4 bias = Tensor4::from_shape({1, heads, n, n});
        bias.fill(0.0f);
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t q = 0; q < n; ++q) {
                const std::size_t ryp = rolled(p / grid, shift, grid), rxp = rolled(p % grid, shift, grid);
                const std::size_t ryq = rolled(q / grid, shift, grid), rxq = rolled(q % grid, shift, grid);
                const bool same_window = ryp / m == ryq / m && rxp / m == rxq / m;
                const bool sees = same_window && !rolled_apart(p / grid, p % grid, q / grid, q % grid, shift, grid);
                dense.mask.explicit_mask(p, q) = sees ? 0 : 1;
                const std::size_t row = (ryp % m + m - 1 - ryq % m) * (2 * m - 1) + (rxp % m + m - 1 - rxq % m);
                for (std::size_t h = 0; h < heads; ++h) bias(0, h, p, q) = sees ? blk.rel_pos_table(row, h) : 0.0f;
            }
        dense.mask.score_bias = &bias;
        const Tensor3 want = blk.block.forward(x, dense);
        ASSERT_EQ(want.shape(), y.shape());
        for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y.data()[i], want.data()[i], 2e-5f) << "shift " << shift << " at " << i;
    }
}

TEST(SwinBlock, BackwardMatchesFiniteDifferences) {
    ModelConfig config = image_config(Architecture::swin);
    Rng rng(21);
    SwinBlock blk(config, /*grid=*/4, /*window=*/2, /*shift=*/1, rng);
    for (auto& v : blk.rel_pos_table) v *= 20.0f;  // a bias large enough to matter
    Tensor3 x = random_normal<Tensor3>({2, 16, 8}, 22);
    const Tensor3 w = random_normal<Tensor3>({2, 16, 8}, 23);
    SwinBlockCache cache;
    Tensor3 y, dx;
    blk.forward(x, {}, nullptr, &cache, y);
    SwinBlockGrad grads;
    grads.block = TransformerBlockGrad(blk.block);
    grads.rel_pos_table = Tensor2::from_shape(blk.rel_pos_table.shape());
    grads.rel_pos_table.fill(0.0f);
    blk.backward(w, cache, {}, grads, dx);
    auto loss = [&] {
        Tensor3 out;
        blk.forward(x, {}, nullptr, nullptr, out);
        return testutil::dot(out, w);
    };
    EXPECT_TRUE(testutil::check_gradient("swin dx", loss, x.data(), dx.data(), x.size()));
    EXPECT_TRUE(testutil::check_gradient("rel_pos_table", loss, blk.rel_pos_table.data(), grads.rel_pos_table.data(),
                                         blk.rel_pos_table.size()));
    EXPECT_TRUE(testutil::check_gradient("attn.q_proj.weight", loss, blk.block.attn.q_proj.weight.data(),
                                         grads.block.attn.q_proj.weight.data(), blk.block.attn.q_proj.weight.size()));
}

// Every gradient of a small model, by finite differences of the evaluation loss.
void check_model_gradients(const ModelConfig& config) {
    Rng rng(31);
    ImageClassifier model(config, rng);
    const Tensor3 pixels = random_normal<Tensor3>({3, config.image_size, config.image_size}, 32);
    Index1 labels = Index1::from_shape({3});
    labels = {0, 2, 1};
    model.zero_grad();
    (void)model.loss_and_backward(pixels, labels);
    std::vector<ParameterView> params = model.parameters(), grads = model.gradients();
    ASSERT_EQ(params.size(), grads.size());
    auto loss = [&] { return double(cross_entropy_forward(model.logits(pixels), labels).loss); };
    testutil::GradCheckOptions o;
    o.h = 3e-3;
    for (std::size_t i = 0; i < params.size(); ++i) {
        ASSERT_EQ(params[i].name, grads[i].name);
        EXPECT_TRUE(testutil::check_gradient(params[i].name, loss, params[i].data, grads[i].data, params[i].size(), o));
    }
}

TEST(ImageClassifier, VitGradientsMatchFiniteDifferences) {
    ModelConfig c = image_config(Architecture::vit);
    c.patch_size = 4;
    c.pooling = Pooling::cls;
    c.positional = PositionalKind::learned;
    check_model_gradients(c);
}

TEST(ImageClassifier, SwinGradientsMatchFiniteDifferences) {
    ModelConfig c = image_config(Architecture::swin);
    c.patch_size = 2;    // a 4 x 4 grid
    c.swin_window = 2;   // stage 0: 2 x 2 windows, shifted by 1; stage 1: one 2 x 2 window
    c.positional = PositionalKind::none;
    check_model_gradients(c);
}

TEST(ImageClassifier, ParameterCountIsTheSumOfTheParametersAndNamesAreUnique) {
    for (Architecture arch : {Architecture::vit, Architecture::swin}) {
        for (PositionalKind pe : {PositionalKind::none, PositionalKind::sinusoidal, PositionalKind::learned}) {
            ModelConfig c = image_config(arch);
            c.positional = pe;
            c.patch_size = 2;
            c.swin_window = 2;
            if (arch == Architecture::vit) c.pooling = pe == PositionalKind::learned ? Pooling::cls : Pooling::mean;
            Rng rng(1);
            ImageClassifier model(c, rng);
            std::size_t total = 0;
            std::set<std::string> names;
            for (const auto& p : model.parameters()) {
                total += p.size();
                names.insert(p.name);
            }
            EXPECT_EQ(total, c.parameter_count()) << architecture_name(arch) << " " << positional_name(pe);
            EXPECT_EQ(names.size(), model.parameters().size());
        }
    }
    ModelConfig swin = image_config(Architecture::swin);
    swin.patch_size = 2;
    swin.swin_window = 2;
    const std::vector<SwinStage> stages = swin.swin_stages();  // grid 4 -> 2
    ASSERT_EQ(stages.size(), 2u);
    EXPECT_EQ(stages[0].grid, 4u);
    EXPECT_TRUE(stages[0].shifted);
    EXPECT_EQ(stages[1].width, 16u);
    EXPECT_EQ(stages[1].heads, 4u);
    EXPECT_FALSE(stages[1].shifted);
}

TEST(ImageClassifier, CheckpointsRoundTripThroughTheFacade) {
    for (Architecture arch : {Architecture::vit, Architecture::swin}) {
        Model model(image_config(arch), 5);
        const Tensor3 pixels = random_normal<Tensor3>({2, 8, 8}, 6);
        const Model again = Model::load(model.save());
        EXPECT_EQ(again.config(), model.config());
        const Tensor2 a = model.image_logits(pixels), b = again.image_logits(pixels);
        for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data()[i], b.data()[i]);
    }
}

TEST(ImageClassifier, AttentionMapsAreAddressablePerWindow) {
    Rng rng(7);
    ImageClassifier swin(image_config(Architecture::swin), rng);  // grid 8, window 4: 4 windows, then one
    const Tensor3 pixels = random_normal<Tensor3>({2, 8, 8}, 8);
    const Tensor4 maps = swin.attention_maps(pixels, /*layer=*/1, /*batch=*/1);
    ASSERT_EQ(maps.shape(0), 4u);
    ASSERT_EQ(maps.shape(1), 2u);
    ASSERT_EQ(maps.shape(2), 16u);
    for (std::size_t w = 0; w < 4; ++w)
        for (std::size_t i = 0; i < 16; ++i) {
            float sum = 0;
            for (std::size_t j = 0; j < 16; ++j) sum += maps(w, 0, i, j);
            EXPECT_NEAR(sum, 1.0f, 1e-5f);
        }
    // Window 0 of the shifted block mixes nothing: no hidden pair. The last window does.
    EXPECT_EQ(maps(3, 0, 0, 15), 0.0f);  // patch (0,0) and (3,3) of the corner window came from opposite edges
    EXPECT_THROW((void)swin.attention_maps(pixels, 4), ConfigError);
}

// The mean entropy per head of every attention row in maps (W, H, M², M²), rows with no visible
// key (all weights 0) skipped, as AttentionStatsRecorder counts them.
double mean_row_entropy(const Tensor4& maps, std::size_t head) {
    double sum = 0;
    std::size_t rows = 0;
    for (std::size_t w = 0; w < maps.shape(0); ++w)
        for (std::size_t i = 0; i < maps.shape(2); ++i) {
            double h = 0, total = 0;
            for (std::size_t j = 0; j < maps.shape(3); ++j) {
                const double p = maps(w, head, i, j);
                total += p;
                if (p > 0) h -= p * std::log(p);
            }
            if (total == 0) continue;
            sum += h;
            ++rows;
        }
    return sum / double(rows);
}

// ViT: per block the entropy of its N' x N' maps; Swin: per block the mean over every window's
// rows, the heads of the widest stage as columns (a narrower stage's extra columns stay 0).
TEST(ImageClassifier, RecordsAttentionStatisticsPerBlockAndPerWindow) {
    for (Architecture arch : {Architecture::vit, Architecture::swin}) {
        Rng rng(3);
        ModelConfig c = image_config(arch);  // swin: grid 8, window 4 (4 windows, shifted), then grid 4 (one window)
        if (arch == Architecture::vit) c.patch_size = 2;
        ImageClassifier model(c, rng);
        const Tensor3 pixels = random_normal<Tensor3>({1, 8, 8}, 4);
        Index1 labels = Index1::from_shape({1});
        labels = {1};
        EXPECT_EQ(model.attention_stats().max_abs_score.size(), 0u);  // not recording
        model.set_record_attention_stats(true);
        (void)model.loss_and_backward(pixels, labels);
        const AttentionStats& s = model.attention_stats();
        const std::size_t layers = model.num_attention_layers();
        ASSERT_EQ(s.max_abs_score.size(), layers);
        const std::size_t heads = arch == Architecture::vit ? 2u : 4u;  // swin's second stage doubles H
        ASSERT_EQ(s.entropy.shape(1), heads);
        for (std::size_t l = 0; l < layers; ++l) {
            EXPECT_GT(s.max_abs_score(l), 0.0f);
            const Tensor4 maps = model.attention_maps(pixels, l, 0);  // (nW, H_l, M², M²)
            for (std::size_t h = 0; h < heads; ++h) {
                if (h < maps.shape(1)) {
                    EXPECT_NEAR(s.entropy(l, h), mean_row_entropy(maps, h), 1e-4) << architecture_name(arch) << " " << l;
                } else {
                    EXPECT_EQ(s.entropy(l, h), 0.0f);
                }
            }
        }
        // Through the facade, as the Trainer reads them.
        Model facade(c, 3);
        facade.set_record_attention_stats(true);
        Batch batch;
        batch.pixels = pixels;
        batch.labels = labels;
        (void)facade.loss_and_backward(batch);
        EXPECT_EQ(facade.attention_stats().max_abs_score.size(), layers);
    }
}

TEST(ImageClassifier, ConfigsItCannotHonourAreRefused) {
    ModelConfig c = image_config(Architecture::swin);
    c.pooling = Pooling::cls;
    EXPECT_THROW(c.validate(), ConfigError);
    c = image_config(Architecture::vit);
    c.patch_size = 3;
    EXPECT_THROW(c.validate(), ConfigError);
    c = image_config(Architecture::vit);
    c.positional = PositionalKind::rope;
    EXPECT_THROW(c.validate(), ConfigError);
    c = image_config(Architecture::swin);
    c.swin_window = 3;  // does not divide the 8 x 8 grid
    EXPECT_THROW(c.validate(), ConfigError);
}

// A small ViT and Swin learn the shapes task (4 classes) well above chance (25%) in a few
// hundred steps; the 90% runs of the page's sizes are measured with the CLI (README).
TEST(ImageClassifier, VitAndSwinLearnShapes) {
    TaskOptions o;
    o.vocab = 4;
    const auto task = make_task("shapes", o);
    for (Architecture arch : {Architecture::vit, Architecture::swin}) {
        ModelConfig c;
        c.kind = ModelKind::encoder;
        c.architecture = arch;
        c.image_size = 16;
        c.patch_size = 4;
        c.swin_window = 2;  // a 4 x 4 map in 2 x 2 windows, then one 2 x 2 window
        c.d_model = 32;
        c.num_heads = 4;
        c.ff_dim = 64;
        c.num_layers = 2;
        c.num_classes = 4;
        c.positional = arch == Architecture::vit ? PositionalKind::learned : PositionalKind::none;
        Model model(c, 1);
        TrainerOptions t;
        t.lr = 2e-3f;
        t.batch_size = 32;
        t.warmup_steps = 20;
        t.total_steps = 200;
        t.seed = 3;
        Trainer trainer(model, *task, t);
        for (std::size_t i = 0; i < 200; ++i) (void)trainer.step();
        const EvalResult e = evaluate_model(model, *task, 4, 64, 99);
        EXPECT_GT(e.accuracy, 0.6f) << architecture_name(arch);
    }
}

}  // namespace
}  // namespace attnlab
