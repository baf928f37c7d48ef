#include "attnlab/train/trainer.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace attnlab {
namespace {

ModelConfig tiny_decoder(const Task& task) {
    ModelConfig c;
    c.kind = ModelKind::decoder;
    c.vocab_size = task.vocab_size();
    c.max_len = task.seq_len();
    c.d_model = 32;
    c.num_heads = 4;
    c.num_layers = 2;
    c.ff_dim = 64;
    c.positional = PositionalKind::rope;
    return c;
}

// Training really learns: a tiny decoder on the copy task (length 6) goes from chance
// (ln 7 ≈ 1.95 nats on 6 symbols + SEP) to a small loss in a few hundred steps.
TEST(Trainer, CopyTaskLossFallsBelowHalfANatIn400Steps) {
    TaskOptions to;
    to.length = 6;
    to.vocab = 6;
    const auto task = make_task("copy", to);
    Model model(tiny_decoder(*task), 1);
    TrainerOptions options;
    options.lr = 3e-3f;
    options.warmup_steps = 20;
    options.total_steps = 400;
    options.batch_size = 32;
    Trainer trainer(model, *task, options);
    const float initial = trainer.evaluate(4).loss;
    EXPECT_GT(initial, 1.5f);
    StepMetrics last;
    for (int i = 0; i < 400; ++i) last = trainer.step();
    const EvalResult e = trainer.evaluate(4);
    EXPECT_LT(e.loss, 0.5f) << "initial " << initial;
    EXPECT_GT(e.accuracy, 0.8f);
    EXPECT_EQ(last.step, 399u);
    EXPECT_EQ(trainer.steps_done(), 400u);
    EXPECT_GT(last.max_score, 0.0f);
    EXPECT_EQ(last.head_entropy.size(), 2u * 4u);
    EXPECT_TRUE(std::isfinite(last.grad_norm));
}

TEST(Trainer, BracketsTrainAnEncoderClassifier) {
    const auto task = make_task("brackets", {});
    ModelConfig c;
    c.kind = ModelKind::encoder;
    c.vocab_size = task->vocab_size();
    c.num_classes = task->num_classes();
    c.max_len = task->seq_len();
    c.d_model = 32;
    c.num_heads = 2;
    c.num_layers = 1;
    c.ff_dim = 64;
    Model model(c, 2);
    TrainerOptions options;
    options.warmup_steps = 10;
    Trainer trainer(model, *task, options);
    const float before = trainer.evaluate(4).loss;
    for (int i = 0; i < 100; ++i) trainer.step();
    EXPECT_LT(trainer.evaluate(4).loss, before);
}

TEST(Trainer, ModelAndTaskMismatchesNameBoth) {
    const auto seq = make_task("reverse", {});
    const auto cls = make_task("brackets", {});
    Model decoder(tiny_decoder(*seq), 1);
    EXPECT_THROW(Trainer(decoder, *cls, {}), ConfigError);
    ModelConfig small = tiny_decoder(*seq);
    small.vocab_size = 5;
    Model too_small(small, 1);
    try {
        Trainer t(too_small, *seq, {});
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("vocab_size (5)"), std::string::npos) << e.what();
    }
    ModelConfig learned = tiny_decoder(*seq);
    learned.positional = PositionalKind::learned;
    learned.max_len = 8;
    Model short_table(learned, 1);
    EXPECT_THROW(Trainer(short_table, *seq, {}), ConfigError);
    TrainerOptions bad;
    bad.lr = -1;
    Model ok(tiny_decoder(*seq), 1);
    EXPECT_THROW(Trainer(ok, *seq, bad), ConfigError);
}

TEST(Trainer, NonFiniteLossStopsWithTheStepAndLeavesParametersUntouched) {
    const auto task = make_task("copy", {});
    Model model(tiny_decoder(*task), 1);
    Trainer trainer(model, *task, {});
    trainer.step();
    auto params = model.parameters();
    params[0].data[0] = std::nanf("");  // poison one embedding entry the batch will likely use
    for (std::size_t i = 0; i < params[0].size(); ++i) params[0].data[i] = std::nanf("");
    std::vector<float> before(params[1].data, params[1].data + params[1].size());
    try {
        trainer.step();
        FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("step 1"), std::string::npos) << e.what();
    }
    for (std::size_t i = 0; i < before.size(); ++i) ASSERT_EQ(params[1].data[i], before[i]);
}

TEST(Model, SaveLoadRoundTripIsBitExact) {
    const auto task = make_task("reverse", {});
    Model model(tiny_decoder(*task), 3);
    const std::vector<std::uint8_t> bytes = model.save();
    Model again = Model::load(bytes);
    EXPECT_EQ(again.save(), bytes);
    EXPECT_EQ(again.config(), model.config());
}

ModelConfig tiny_lstm(const Task& task) {
    ModelConfig c;
    c.architecture = Architecture::lstm;
    const bool classification = task.kind() == TaskKind::classification;
    c.kind = classification ? ModelKind::encoder : ModelKind::decoder;
    c.vocab_size = task.vocab_size();
    c.num_classes = classification ? task.num_classes() : 0;
    c.max_len = task.seq_len();
    c.d_model = 32;
    c.num_layers = 1;
    return c;
}

// The same Trainer trains an LSTM on a decoder task and on brackets; an LSTM has no attention,
// so the attention diagnostics stay empty (max score 0, no head entropies) without failing.
TEST(Trainer, LstmLossFallsOnReverseAndBrackets) {
    for (const char* name : {"reverse", "brackets"}) {
        const auto task = make_task(name, {});
        Model model(tiny_lstm(*task), 1);
        ASSERT_TRUE(model.is_lstm());
        TrainerOptions options;
        options.warmup_steps = 10;
        options.track_attention = true;
        Trainer trainer(model, *task, options);
        const float before = trainer.evaluate(4).loss;
        StepMetrics last;
        for (int i = 0; i < 100; ++i) last = trainer.step();
        EXPECT_LT(trainer.evaluate(4).loss, before) << name;
        EXPECT_EQ(last.max_score, 0.0f) << name;
        EXPECT_TRUE(last.head_entropy.empty()) << name;
    }
}

TEST(Trainer, LstmStepsOnEveryTokenTask) {
    for (const std::string& name : task_names()) {
        const auto task = make_task(name, {});
        if (task->input() != TaskInput::tokens) {  // an LSTM reads tokens: the Trainer refuses images
            ModelConfig c = tiny_lstm(*make_task("brackets", {}));
            Model model(c, 1);
            EXPECT_THROW(Trainer(model, *task, TrainerOptions{}), ConfigError) << name;
            continue;
        }
        if (task->input() == TaskInput::values) {  // series needs a forecaster (test_series_models.cpp)
            Model model(tiny_lstm(*make_task("reverse", {})), 1);
            EXPECT_THROW(Trainer(model, *task, TrainerOptions{}), ConfigError) << name;
            continue;
        }
        ModelConfig c = tiny_lstm(*task);
        c.d_model = 8;
        Model model(c, 1);
        TrainerOptions options;
        options.batch_size = 4;
        Trainer trainer(model, *task, options);
        for (int i = 0; i < 2; ++i) EXPECT_TRUE(std::isfinite(trainer.step().loss)) << name;
    }
}

TEST(Model, LstmSaveLoadRoundTripIsBitExact) {
    for (const char* name : {"reverse", "brackets"}) {
        const auto task = make_task(name, {});
        Model model(tiny_lstm(*task), 3);
        const std::vector<std::uint8_t> bytes = model.save();
        Model again = Model::load(bytes);
        EXPECT_EQ(again.save(), bytes) << name;
        EXPECT_EQ(again.config(), model.config()) << name;
        EXPECT_EQ(again.num_parameters(), model.num_parameters());
        Rng rng(4);
        const Batch batch = task->sample(3, rng);
        const CrossEntropyResult a = model.evaluate(batch), b = again.evaluate(batch);
        EXPECT_EQ(a.loss, b.loss) << name;
    }
}

}  // namespace
}  // namespace attnlab
