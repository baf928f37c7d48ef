// A training step allocates nothing once the buffers exist. Its own executable, because it
// replaces the global operator new to count calls: the first steps size the caches,
// activations, scratch and optimizer state; every later step must
// reuse them. Counted: every operator new / new[] of the process (xtensor's storage, std::vector,
// std::string, ...) on any thread while a step runs.
//
// Two levels: the model's step (zero_grad, forward, loss, backward, AdamW, with the parameter and
// gradient views built once before the loop), and the whole Trainer::step as the CLI and the
// page call it: sampling the batch, clipping, the schedule and the metrics with the attention
// diagnostics on.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"
#include "attnlab/nn/lstm.hpp"
#include "attnlab/train/optimizer.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"

namespace {
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, std::align_val_t align) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    const auto a = static_cast<std::size_t>(align);
    if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t align) { return operator new(n, align); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace attnlab {
namespace {

constexpr std::size_t kWarmUpSteps = 2, kCountedSteps = 3;

ModelConfig tiny(ModelKind kind, std::size_t vocab, std::size_t t) {
    ModelConfig config;
    config.kind = kind;
    config.vocab_size = vocab;
    config.max_len = t;
    config.d_model = 32;
    config.num_heads = 4;
    config.num_layers = 2;
    config.ff_dim = 64;
    return config;
}

// Runs warm-up steps, then returns the allocations of the next kCountedSteps steps together (a
// total, not a mean: one stray allocation in three steps must not round down to zero).
template <class Step>
std::uint64_t allocations_in_counted_steps(Step step) {
    for (std::size_t i = 0; i < kWarmUpSteps; ++i) step();
    const std::uint64_t before = g_allocations.load();
    for (std::size_t i = 0; i < kCountedSteps; ++i) step();
    return g_allocations.load() - before;
}

struct Case {
    const char* name;
    std::size_t threads;
    std::size_t t;  // sequence length: 40 fits one flash key tile, 150 needs several
};
void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class StepAllocations : public ::testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        saved_ = num_threads();
        set_num_threads(GetParam().threads);
    }
    void TearDown() override { set_num_threads(saved_); }

private:
    std::size_t saved_ = 1;
};

TEST_P(StepAllocations, EncoderClassifierStepAllocatesNothing) {
    const std::size_t t = GetParam().t, batch = 4, vocab = 11;
    ModelConfig config = tiny(ModelKind::encoder, vocab, t);
    config.activation = Activation::relu;
    config.norm = NormPlacement::post;
    config.positional = PositionalKind::sinusoidal;
    config.pooling = Pooling::mean;
    config.num_classes = 3;
    Rng rng(1);
    EncoderClassifier model(config, rng);
    model.train();
    Index2 tokens = Index2::from_shape({batch, t});
    Index1 labels = Index1::from_shape({batch});
    Rng data(2);
    for (auto& x : tokens) x = static_cast<std::int32_t>(data.below(vocab));
    for (auto& y : labels) y = static_cast<std::int32_t>(data.below(3));
    const Mask2 no_padding;
    AdamW opt;
    const std::vector<ParameterView> params = model.parameters(), grads = model.gradients();
    const std::uint64_t n = allocations_in_counted_steps([&] {
        model.zero_grad();
        model.loss_and_backward(tokens, no_padding, labels);
        opt.step(params, grads, 1e-3f);
    });
    EXPECT_EQ(n, 0u) << "allocations in " << kCountedSteps << " training steps";
}

// Allocations of a DecoderLM's counted training steps (rope, T = t, batch 4, vocabulary 13),
// `normalizer` weighing its attention.
std::uint64_t decoder_step_allocations(std::size_t t, Normalizer normalizer) {
    const std::size_t batch = 4, vocab = 13;
    ModelConfig config = tiny(ModelKind::decoder, vocab, t);
    config.positional = PositionalKind::rope;
    config.normalizer = normalizer;
    Rng rng(3);
    DecoderLM model(config, rng);
    model.train();
    Index2 tokens = Index2::from_shape({batch, t}), targets = Index2::from_shape({batch, t});
    Rng data(4);
    for (auto& x : tokens) x = static_cast<std::int32_t>(data.below(vocab));
    for (auto& y : targets) y = static_cast<std::int32_t>(data.below(vocab));
    AdamW opt;
    const std::vector<ParameterView> params = model.parameters(), grads = model.gradients();
    return allocations_in_counted_steps([&] {
        model.zero_grad();
        model.loss_and_backward(tokens, targets);
        opt.step(params, grads, 1e-3f);
    });
}

TEST_P(StepAllocations, DecoderLmStepAllocatesNothing) {
    EXPECT_EQ(decoder_step_allocations(GetParam().t, Normalizer::softmax), 0u)
        << "allocations in " << kCountedSteps << " training steps";
}

// Sigmoid and relu weights need each query's visible-key count n_i, forward and backward: kept
// in a buffer of the calling thread, not a tensor per call.
TEST_P(StepAllocations, PointwiseNormalizerStepAllocatesNothing) {
    for (Normalizer normalizer : {Normalizer::sigmoid, Normalizer::relu}) {
        EXPECT_EQ(decoder_step_allocations(GetParam().t, normalizer), 0u)
            << normalizer_name(normalizer) << ": allocations in " << kCountedSteps << " training steps";
    }
}

// Trainer::step(StepMetrics&) with the default options (attention diagnostics on, clipping,
// AdamW, warm-up schedule) on a classification and a sequence task: the batch is sampled into
// the trainer's own buffers and the metrics into the caller's record.
TEST_P(StepAllocations, TrainerStepAllocatesNothing) {
    const std::size_t t = GetParam().t;
    struct TaskCase {
        const char* name;
        ModelKind kind;
        TaskOptions options;
    };
    TaskOptions brackets, reverse;
    brackets.length = t;
    reverse.length = t / 2;
    for (const TaskCase& tc : {TaskCase{"brackets", ModelKind::encoder, brackets},
                               TaskCase{"reverse", ModelKind::decoder, reverse}}) {
        SCOPED_TRACE(tc.name);
        const std::unique_ptr<Task> task = make_task(tc.name, tc.options);
        ModelConfig config = tiny(tc.kind, task->vocab_size(), task->seq_len());
        config.num_classes = task->num_classes();
        Model model(config, 5);
        TrainerOptions options;
        options.batch_size = 4;
        options.total_steps = 100;
        options.warmup_steps = 2;
        Trainer trainer(model, *task, options);
        StepMetrics metrics;
        const std::uint64_t n = allocations_in_counted_steps([&] { trainer.step(metrics); });
        EXPECT_EQ(n, 0u) << "allocations in " << kCountedSteps << " Trainer::step calls";
        EXPECT_EQ(metrics.head_entropy.size(), config.num_layers * config.num_heads);
        EXPECT_TRUE(std::isfinite(metrics.loss));
    }
}

// The LSTM's forward and backward through time (nn/lstm.hpp) with its cache, outputs and
// gradients reused: every step of the recurrence runs on buffers sized by the first call.
TEST_P(StepAllocations, LstmForwardBackwardAllocatesNothing) {
    const std::size_t t = GetParam().t, batch = 4, input = 6, hidden = 24, layers = 2;
    Rng rng(1);
    const Lstm lstm({input, hidden, layers, true}, rng);
    Tensor3 x = Tensor3::from_shape({batch, t, input}), dout = Tensor3::from_shape({batch, t, hidden});
    Tensor3 h0 = Tensor3::from_shape({layers, batch, hidden}), c0 = Tensor3::from_shape({layers, batch, hidden});
    Rng data(2);
    for (Tensor3* v : {&x, &dout, &h0, &c0}) {
        for (auto& e : *v) e = data.uniform(-1.0f, 1.0f);
    }
    LstmCache cache;
    LstmOutput out;
    LstmGrad grads(lstm);
    Tensor3 dx, dh0, dc0;
    const std::uint64_t n = allocations_in_counted_steps([&] {
        grads.zero();
        lstm.forward(x, &h0, &c0, cache, out);
        lstm.backward(dout, &out.h, &out.c, cache, grads, dx, &dh0, &dc0);
    });
    EXPECT_EQ(n, 0u) << "allocations in " << kCountedSteps << " LSTM forward and backward calls";
}

INSTANTIATE_TEST_SUITE_P(Threads, StepAllocations,
                         ::testing::Values(Case{"t40_1thread", 1, 40}, Case{"t40_2threads", 2, 40},
                                           Case{"t150_2threads", 2, 150}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace attnlab
