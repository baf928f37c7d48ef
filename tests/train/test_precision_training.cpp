// Training with precision emulation (model/config.hpp precision, softmax_precision,
// stable_softmax) and loss scaling (train/trainer.hpp LossScaling): the article's §6.3 story —
// a naive softmax in fp16 turns the loss NaN, the same softmax computed in fp32 trains on.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attnlab/facade/model.hpp"
#include "attnlab/train/trainer.hpp"

namespace attnlab {
namespace {

constexpr int kStoryStepCount = 30;  // steps of the §6.3 story runs

// The default decoder (2 layers, d_model 32, 4 heads, ff 128: what `attnlab train` builds with
// --d-model 32) for the task, attention in `precision`.
ModelConfig decoder_for(const Task& task, Precision precision, SoftmaxPrecision softmax, bool stable) {
    ModelConfig c;
    c.vocab_size = task.vocab_size();
    c.precision = precision;
    c.softmax_precision = softmax;
    c.stable_softmax = stable;
    return c;
}

std::unique_ptr<Task> copy_task() {
    TaskOptions to;
    to.length = 6;
    to.vocab = 6;
    return make_task("copy", to);
}

std::vector<std::vector<float>> values_of(const std::vector<ParameterView>& views) {
    std::vector<std::vector<float>> out;
    for (const ParameterView& v : views) out.emplace_back(v.data, v.data + v.size());
    return out;
}

TEST(PrecisionTraining, ConfigFieldsRoundTripThroughCheckpointMetadata) {
    const auto task = copy_task();
    const ModelConfig c = decoder_for(*task, Precision::bf16, SoftmaxPrecision::same, false);
    const auto meta = c.to_metadata();
    EXPECT_EQ(meta.at("precision"), "bf16");
    EXPECT_EQ(meta.at("softmax_precision"), "same");
    EXPECT_EQ(meta.at("stable_softmax"), "false");
    EXPECT_EQ(ModelConfig::from_metadata(meta), c);
    Model model(c, 3);
    const Model again = Model::load(model.save());
    EXPECT_EQ(again.config().precision, Precision::bf16);
    EXPECT_EQ(again.config().softmax_precision, SoftmaxPrecision::same);
    EXPECT_FALSE(again.config().stable_softmax);
    // a checkpoint written before the fields existed loads as fp32 with the stable softmax
    auto old = meta;
    old.erase("precision");
    old.erase("softmax_precision");
    old.erase("stable_softmax");
    const ModelConfig loaded = ModelConfig::from_metadata(old);
    EXPECT_TRUE(loaded.precision_options().is_plain());
    auto bad = meta;
    bad["precision"] = "fp8";
    try {
        ModelConfig::from_metadata(bad);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("'fp8'"), std::string::npos) << e.what();
    }
}

TEST(PrecisionTraining, AnLstmRefusesPrecisionEmulation) {
    const auto task = copy_task();
    ModelConfig c = decoder_for(*task, Precision::fp16, SoftmaxPrecision::fp32, true);
    c.architecture = Architecture::lstm;
    EXPECT_THROW(c.validate(), ConfigError);
}

// A static scale multiplies the loss's gradient and is divided out again: with a power of two
// in float32 the parameter gradients are the unscaled ones bit for bit; in fp16 within the
// format's epsilon (scaling moves which small gradients flush, which is its purpose).
TEST(PrecisionTraining, StaticLossScaleGivesTheUnscaledGradients) {
    const auto task = copy_task();
    Rng rng(5);
    const Batch batch = task->sample(8, rng);
    for (Precision precision : {Precision::fp32, Precision::fp16}) {
        Model model(decoder_for(*task, precision, SoftmaxPrecision::fp32, true), 2);
        model.zero_grad();
        model.loss_and_backward(batch);
        const auto plain = values_of(model.gradients());
        model.zero_grad();
        model.set_loss_scale(1024.0f);
        model.loss_and_backward(batch);
        const auto scaled = values_of(model.gradients());
        // relative to the model's largest gradient: some have none (the key bias's is zero up to
        // rounding, since the softmax ignores a constant added to every score of a row)
        float largest = 0;
        for (const auto& g : plain) {
            for (float v : g) largest = std::max(largest, std::fabs(v));
        }
        for (std::size_t p = 0; p < plain.size(); ++p) {
            for (std::size_t i = 0; i < plain[p].size(); ++i) {
                const float unscaled = scaled[p][i] / 1024.0f;
                if (precision == Precision::fp32) {
                    ASSERT_EQ(unscaled, plain[p][i]) << "parameter " << p << " index " << i;
                } else {
                    ASSERT_NEAR(unscaled, plain[p][i], 32 * std::ldexp(1.0f, -11) * largest)
                        << "parameter " << p << " index " << i;
                }
            }
        }
    }
    // Through the Trainer: one step with a static scale of 1024 updates as the unscaled one.
    std::vector<std::vector<float>> after[2];
    for (int scaled = 0; scaled < 2; ++scaled) {
        Model model(decoder_for(*task, Precision::fp32, SoftmaxPrecision::fp32, true), 2);
        TrainerOptions options;
        options.batch_size = 8;
        if (scaled) options.loss_scale = LossScaling::parse("1024");
        Trainer trainer(model, *task, options);
        const StepMetrics m = trainer.step();
        EXPECT_EQ(m.loss_scale, scaled ? 1024.0f : 1.0f);
        after[scaled] = values_of(model.parameters());
    }
    EXPECT_EQ(after[0], after[1]);
}

TEST(PrecisionTraining, DynamicLossScaleSkipsAnOverflowingStepAndHalves) {
    const auto task = copy_task();
    Model model(decoder_for(*task, Precision::fp16, SoftmaxPrecision::fp32, true), 2);
    TrainerOptions options;
    options.batch_size = 8;
    options.loss_scale = LossScaling::parse("dynamic");
    EXPECT_EQ(options.loss_scale.scale, 65536.0f);
    options.loss_scale.scale = 1e38f;  // forces the scaled gradients past float32's range
    options.loss_scale.growth_interval = 2;
    Trainer trainer(model, *task, options);
    const auto before = values_of(model.parameters());
    StepMetrics m = trainer.step();
    EXPECT_TRUE(m.skipped);
    EXPECT_EQ(m.loss_scale, 1e38f);
    EXPECT_EQ(trainer.loss_scale(), 5e37f);
    EXPECT_TRUE(std::isfinite(m.loss));
    EXPECT_EQ(values_of(model.parameters()), before) << "a skipped step leaves the parameters";
    // halving continues until the gradients fit, then steps update and the scale grows again
    std::size_t skipped = 1, steps = 1;
    while (trainer.step().skipped) ++skipped, ++steps;
    ++steps;
    EXPECT_GT(skipped, 1u);
    EXPECT_NE(values_of(model.parameters()), before);
    const float fitted = trainer.loss_scale();
    trainer.step(m);
    EXPECT_FALSE(m.skipped);
    EXPECT_EQ(trainer.loss_scale(), 2 * fitted) << "doubles after growth_interval = 2 clean steps";
    EXPECT_THROW(LossScaling::parse("0"), ConfigError);
    EXPECT_THROW(LossScaling::parse("fast"), ConfigError);
    EXPECT_EQ(LossScaling::parse("dynamic").to_string(), "dynamic");
    EXPECT_EQ(LossScaling::parse("128").to_string(), "128");
}

// The article's §6.3: fp16 with the naive softmax computed in fp16 overflows once a score
// passes ln 65520 = 11.09, and the loss turns NaN; the same model with its softmax in fp32
// (still naive) trains on, and so does the stable softmax in fp16. One head of 32 dimensions
// without the 1/sqrt(D) scaling (a bad init) starts with scores past 11 (the largest ~17 at the
// first step, below float32's 88.7 throughout these steps).
TEST(PrecisionTraining, NaiveFp16SoftmaxTurnsTheLossNanAndFp32SoftmaxSurvives) {
    const auto task = copy_task();
    const auto train = [&](SoftmaxPrecision softmax, bool stable, float* max_score) {
        ModelConfig c = decoder_for(*task, Precision::fp16, softmax, stable);
        c.scale_attention = false;
        c.num_heads = 1;
        Model model(c, 1);
        TrainerOptions options;
        options.lr = 3e-3f;
        options.warmup_steps = 0;
        options.batch_size = 16;
        Trainer trainer(model, *task, options);
        *max_score = 0;
        for (int i = 0; i < kStoryStepCount; ++i) {
            const StepMetrics m = trainer.step();  // throws ValueError on a NaN loss
            *max_score = std::max(*max_score, m.max_score);
        }
    };
    float max_score = 0;
    try {
        train(SoftmaxPrecision::same, false, &max_score);
        FAIL() << "the naive fp16 softmax trained without a NaN; largest score " << max_score;
    } catch (const NonFiniteLoss& e) {
        EXPECT_NE(std::string(e.what()).find("the loss is nan"), std::string::npos) << e.what();
        // The facts the message states, for a caller to say in its own words.
        EXPECT_EQ(e.loss, "nan");
        EXPECT_NE(std::string(e.what()).find(" at step " + std::to_string(e.step) + ";"), std::string::npos) << e.what();
        EXPECT_EQ(e.precision, "fp16");
        EXPECT_EQ(e.softmax_precision, "same");  // the softmax in the attention's own precision
        EXPECT_TRUE(e.naive_softmax);
    }
    EXPECT_NO_THROW(train(SoftmaxPrecision::fp32, false, &max_score));
    EXPECT_GT(max_score, 11.09f) << "the fp32 softmax must have met scores the fp16 one cannot";
    EXPECT_NO_THROW(train(SoftmaxPrecision::same, true, &max_score));
}

}  // namespace
}  // namespace attnlab
