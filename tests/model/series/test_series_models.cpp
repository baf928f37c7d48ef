// The forecaster (model/series/series_models.hpp): finite differences of the value projection, the head
// and every other parameter for both architectures and each kind of positions, parameter counts,
// checkpoints, the refusals (generate, token calls, attention of an LSTM), attention maps of a
// Transformer forecaster, the series task through make_task, and the Trainer's MSE, MAE and
// seasonal-naive baseline.
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/model/series/series_models.hpp"
#include "attnlab/train/series.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"
#include "support/gradcheck.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

ModelConfig forecaster_config(Architecture arch, PositionalKind pe) {
    ModelConfig c;
    c.kind = ModelKind::forecaster;
    c.architecture = arch;
    c.num_features = 2;
    c.horizon = 3;
    c.time_periods = {4, 6};
    c.positional = pe;
    c.max_len = 8;
    c.d_model = 8;
    c.num_heads = 2;
    c.ff_dim = 16;
    c.num_layers = 2;
    return c;
}

// values (3, 5, 2), time (3, 8) with timestamps t0 + i
struct Input {
    Tensor3 values = random_normal<Tensor3>({3, 5, 2}, 41);
    Tensor2 time = Tensor2::from_shape({3, 8});
    Tensor2 target = random_normal<Tensor2>({3, 3}, 42);
    Input() {
        for (std::size_t b = 0; b < 3; ++b)
            for (std::size_t i = 0; i < 8; ++i) time(b, i) = static_cast<float>(100 * b + 7 + i);
    }
};

// Every parameter's gradient (value_proj and head first) by finite differences of the MSE.
void check_gradients(const ModelConfig& config) {
    Rng rng(31);
    Forecaster model(config, rng);
    const Input in;
    model.zero_grad();
    (void)model.loss_and_backward(in.values, in.time, in.target);
    std::vector<ParameterView> params = model.parameters(), grads = model.gradients();
    ASSERT_EQ(params.size(), grads.size());
    EXPECT_EQ(params.front().name, "value_proj.weight");
    EXPECT_EQ(params.back().name, "head.bias");
    auto loss = [&] { return double(mse_forward(model.predict(in.values, in.time), in.target).mse); };
    testutil::GradCheckOptions o;
    o.h = 3e-3;
    for (std::size_t i = 0; i < params.size(); ++i) {
        ASSERT_EQ(params[i].name, grads[i].name);
        EXPECT_TRUE(testutil::check_gradient(params[i].name, loss, params[i].data, grads[i].data, params[i].size(), o))
            << architecture_name(config.architecture) << " " << positional_name(config.positional);
    }
}

TEST(Forecaster, TransformerGradientsMatchFiniteDifferencesForEveryPositionalKind) {
    for (PositionalKind pe : {PositionalKind::none, PositionalKind::sinusoidal, PositionalKind::learned,
                              PositionalKind::rope, PositionalKind::time}) {
        check_gradients(forecaster_config(Architecture::transformer, pe));
    }
}

TEST(Forecaster, PostLnTransformerGradientsMatchFiniteDifferences) {
    ModelConfig c = forecaster_config(Architecture::transformer, PositionalKind::sinusoidal);
    c.norm = NormPlacement::post;
    check_gradients(c);
}

TEST(Forecaster, LstmGradientsMatchFiniteDifferencesWithAndWithoutTime) {
    check_gradients(forecaster_config(Architecture::lstm, PositionalKind::sinusoidal));
    check_gradients(forecaster_config(Architecture::lstm, PositionalKind::time));
}

TEST(Forecaster, ParameterCountIsTheSumOfTheParametersAndNamesAreUnique) {
    for (Architecture arch : {Architecture::transformer, Architecture::lstm}) {
        for (PositionalKind pe : {PositionalKind::sinusoidal, PositionalKind::learned, PositionalKind::time}) {
            const ModelConfig c = forecaster_config(arch, pe);
            Rng rng(1);
            Forecaster model(c, rng);
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
    // pe time widens the value projection by sin and cos of each period: (C, F + 2K)
    Rng rng(1);
    const Forecaster timed(forecaster_config(Architecture::transformer, PositionalKind::time), rng);
    EXPECT_EQ(timed.value_proj.weight.shape(1), 2u + 4u);
}

TEST(Forecaster, TimeAwareEncodingReadsTheTimestamps) {
    Rng rng(3);
    const Forecaster timed(forecaster_config(Architecture::transformer, PositionalKind::time), rng);
    Input in;
    const Tensor2 a = timed.predict(in.values, in.time);
    in.time += 1.0f;  // every step one later: other phases of both periods
    const Tensor2 b = timed.predict(in.values, in.time);
    double diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, double(std::abs(a.data()[i] - b.data()[i])));
    EXPECT_GT(diff, 1e-4);
    in.time += 12.0f;  // a whole number of both periods (4, 6) later: the same phases
    const Tensor2 c = timed.predict(in.values, in.time);
    for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(b.data()[i], c.data()[i], 1e-5);
    EXPECT_THROW((void)timed.predict(in.values, Tensor2()), ShapeError);  // pe time needs the timestamps
}

TEST(Forecaster, CheckpointsRoundTripAndTheFacadeRefusesTokenCalls) {
    for (Architecture arch : {Architecture::transformer, Architecture::lstm}) {
        Model model(forecaster_config(arch, PositionalKind::time), 5);
        const Input in;
        const Model again = Model::load(model.save());
        EXPECT_EQ(again.config(), model.config());
        EXPECT_EQ(again.config().time_periods, (std::vector<std::size_t>{4, 6}));
        const Tensor2 a = model.forecast(in.values, in.time), b = again.forecast(in.values, in.time);
        for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data()[i], b.data()[i]);
        try {
            (void)model.generate({1, 2}, 3);
            FAIL() << "generate did not refuse";
        } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find("forecaster"), std::string::npos) << e.what();
        }
        EXPECT_THROW((void)model.class_logits(Index2::from_shape({1, 2})), ConfigError);
    }
}

TEST(Forecaster, AttentionMapsOfATransformerAndRefusalForAnLstm) {
    Model model(forecaster_config(Architecture::transformer, PositionalKind::sinusoidal), 2);
    const Input in;
    const Tensor4 maps = model.attention_maps(in.values, in.time, 1);  // (L, H, T, T)
    ASSERT_EQ(maps.shape(0), 2u);
    ASSERT_EQ(maps.shape(1), 2u);
    ASSERT_EQ(maps.shape(2), 5u);
    for (std::size_t i = 0; i < 5; ++i) {  // not causal: the first step sees every step
        double row = 0;
        for (std::size_t j = 0; j < 5; ++j) row += maps(0, 0, i, j);
        EXPECT_NEAR(row, 1.0, 1e-5);
    }
    EXPECT_GT(maps(0, 0, 0, 4), 0.0f);
    const auto trace = model.trace_layer(in.values, in.time, 1);
    const Tensor2& w = trace->get(Stage::weights, 1, 0);  // batch row 1, head 0 of block 1
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(w(i, j), maps(1, 0, i, j));
    Model lstm(forecaster_config(Architecture::lstm, PositionalKind::sinusoidal), 2);
    EXPECT_THROW((void)lstm.attention_maps(in.values, in.time), ConfigError);
}

TEST(Forecaster, ConfigsItCannotHonourAreRefused) {
    ModelConfig c = forecaster_config(Architecture::transformer, PositionalKind::time);
    c.time_periods.clear();
    EXPECT_THROW(c.validate(), ConfigError);
    c = forecaster_config(Architecture::transformer, PositionalKind::sinusoidal);
    c.horizon = 0;
    EXPECT_THROW(c.validate(), ConfigError);
    c = forecaster_config(Architecture::vit, PositionalKind::sinusoidal);
    EXPECT_THROW(c.validate(), ConfigError);
    c = forecaster_config(Architecture::transformer, PositionalKind::sinusoidal);
    c.dropout = 0.1f;
    EXPECT_THROW(c.validate(), ConfigError);
    ModelConfig token;
    token.vocab_size = 10;
    token.positional = PositionalKind::time;  // a token model has no timestamps
    EXPECT_THROW(token.validate(), ConfigError);
    std::vector<std::size_t> periods;
    parse_field("t", "time_periods", "12,24", periods);
    EXPECT_EQ(periods, (std::vector<std::size_t>{12, 24}));
    EXPECT_EQ(format_field(periods), "12,24");
    EXPECT_THROW(parse_field("t", "time_periods", "12,", periods), ConfigError);
    EXPECT_THROW(parse_field("t", "time_periods", "12,x", periods), ConfigError);
}

TEST(SeriesTask, MakeTaskSamplesValuesTimeForecastAndTheBaseline) {
    TaskOptions o;
    o.context = 24;
    o.horizon = 6;
    o.periods = std::vector<std::size_t>{6, 12};
    o.features = 2;
    const auto task = make_task("series", o);
    EXPECT_EQ(task->kind(), TaskKind::regression);
    EXPECT_EQ(task->input(), TaskInput::values);
    EXPECT_EQ(task->seq_len(), 24u);
    EXPECT_EQ(task->horizon(), 6u);
    EXPECT_EQ(task->num_features(), 2u);
    Rng rng(4);
    const Batch b = task->sample(5, rng);
    EXPECT_EQ(b.values.shape(), (std::array<std::size_t, 3>{5, 24, 2}));
    EXPECT_EQ(b.time.shape(), (std::array<std::size_t, 2>{5, 30}));
    EXPECT_EQ(b.forecast.shape(), (std::array<std::size_t, 2>{5, 6}));
    EXPECT_EQ(b.tokens.size(), 0u);
    // The baseline repeats the last season (lcm(6, 12) = 12) of feature 0.
    for (std::size_t j = 0; j < 6; ++j) EXPECT_EQ(b.baseline(3, j), b.values(3, 24 - 12 + j, 0));
    EXPECT_NE(std::find(task_names().begin(), task_names().end(), "series"), task_names().end());
    TaskOptions bad;
    bad.length = 8;  // a token option
    EXPECT_THROW(make_task("series", bad), ConfigError);
    TaskOptions series_option;
    series_option.horizon = 4;  // a series option on a token task
    try {
        make_task("reverse", series_option);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("horizon"), std::string::npos) << e.what();
    }
    TaskOptions zero;
    zero.horizon = 0;
    EXPECT_THROW(make_task("series", zero), ConfigError);
}

TEST(SeriesTask, TrainerReportsMseMaeAndTheBaselineAndBothArchitecturesLearn) {
    const auto task = make_task("series");
    for (Architecture arch : {Architecture::transformer, Architecture::lstm}) {
        ModelConfig c;
        c.kind = ModelKind::forecaster;
        c.architecture = arch;
        c.num_features = task->num_features();
        c.horizon = task->horizon();
        c.time_periods = task->time_periods();
        c.max_len = task->seq_len();
        c.d_model = 16;
        c.num_heads = 2;
        c.ff_dim = 32;
        c.num_layers = 1;
        Model model(c, 1);
        TrainerOptions o;
        o.batch_size = 16;
        o.warmup_steps = 10;
        o.lr = 3e-3f;
        Trainer trainer(model, *task, o);
        const EvalResult before = trainer.evaluate(2);
        StepMetrics m;
        for (int i = 0; i < 120; ++i) trainer.step(m);
        EXPECT_TRUE(std::isnan(m.accuracy));
        EXPECT_TRUE(std::isfinite(m.mae) && std::isfinite(m.baseline_mse) && std::isfinite(m.baseline_mae));
        const EvalResult after = trainer.evaluate(2);
        EXPECT_LT(after.loss, 0.8f * before.loss) << architecture_name(arch);
        EXPECT_EQ(after.baseline_mse, before.baseline_mse);  // the same held-out batches
        EXPECT_GT(after.mae, 0.0f);
        EXPECT_EQ(after.count, 2u * 16u * task->horizon());
    }
    ModelConfig token;
    token.vocab_size = 11;
    Model decoder(token, 1);
    EXPECT_THROW(Trainer(decoder, *task, TrainerOptions{}), ConfigError);
}

}  // namespace
}  // namespace attnlab
