// Determinism: for one build, the same seeds give bit-identical numbers on every run, and the
// thread count does not change them. Every parallel loop of the engine splits work by rows
// (batch, head, output row); no reduction is split across threads, so the order of every sum is
// fixed by the data, not by the schedule. What may change the numbers is the instruction set
// the kernels dispatch to (kernels/isa.hpp: vector width and FMA change rounding).
// tests/determinism/repeat_cli.sh checks the same for the CLI's training, demo and experiments.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/facade/model.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"
#include "support/thread_count.hpp"

namespace attnlab {
namespace {

// Every number a short training run produces, as raw bits so that NaN == NaN and -0 != +0.
struct RunNumbers {
    std::vector<std::uint32_t> bits;

    void add(float x) {
        std::uint32_t b;
        std::memcpy(&b, &x, sizeof b);
        bits.push_back(b);
    }
    void add(const float* data, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) add(data[i]);
    }
};

struct TrainingSetup {
    std::string name;
    std::string task;
    TaskOptions task_options;
    ModelConfig config;
};

// A model sized for `task`: an encoder for classification tasks, a decoder otherwise; two layers.
ModelConfig config_for(const Task& task, std::size_t d_model, std::size_t heads) {
    ModelConfig c;
    const bool classify = task.kind() == TaskKind::classification;
    c.kind = classify ? ModelKind::encoder : ModelKind::decoder;
    c.vocab_size = task.vocab_size();
    c.num_classes = classify ? task.num_classes() : 0;
    c.max_len = task.seq_len() + 1;  // room for a CLS position
    c.d_model = d_model;
    c.num_heads = heads;
    c.num_layers = 2;
    c.ff_dim = 2 * d_model;
    return c;
}

// A decoder with RoPE, grouped KV heads and dropout (dropout draws from the model's rng), and an
// encoder with a CLS read-out, learned positions and post-LN: between them every layer kind the
// trainer runs.
std::vector<TrainingSetup> setups() {
    const TaskOptions reverse_options{6, 6, std::nullopt};
    ModelConfig dec = config_for(*make_task("reverse", reverse_options), 32, 4);
    dec.num_kv_heads = 2;
    dec.positional = PositionalKind::rope;
    dec.dropout = 0.1f;
    ModelConfig enc = config_for(*make_task("brackets", {}), 16, 2);
    enc.positional = PositionalKind::learned;
    enc.pooling = Pooling::cls;
    enc.norm = NormPlacement::post;
    return {{"decoder_rope_gqa_dropout", "reverse", reverse_options, dec},
            {"encoder_cls_learned_postln", "brackets", {}, enc}};
}

// `steps` training steps, an evaluation, the trained parameters and a trace of block 0.
RunNumbers train_and_trace(const TrainingSetup& s, std::size_t threads, std::size_t steps = 5) {
    testutil::ThreadCountScope scope(threads);
    const auto task = make_task(s.task, s.task_options);
    Model model(s.config, 7);
    TrainerOptions options;
    options.batch_size = 8;
    options.warmup_steps = 2;
    options.total_steps = steps;
    options.seed = 3;
    Trainer trainer(model, *task, options);
    RunNumbers out;
    for (std::size_t i = 0; i < steps; ++i) {
        const StepMetrics m = trainer.step();
        out.add(m.loss);
        out.add(m.accuracy);
        out.add(m.grad_norm);
        out.add(m.max_score);
        out.add(m.head_entropy.data(), m.head_entropy.size());
    }
    const EvalResult e = trainer.evaluate(2, 11);
    out.add(e.loss);
    out.add(e.accuracy);
    for (const ParameterView& p : model.parameters()) out.add(p.data, p.size());

    Rng rng(5);
    const Batch batch = task->sample(2, rng);
    const std::unique_ptr<TraceRecorder> trace = model.trace_layer(batch.tokens, 0, batch.padding);
    for (const Stage stage : trace->stages()) {
        for (std::size_t b = 0; b < trace->num_batches(stage); ++b) {
            for (std::ptrdiff_t h = -1; h < static_cast<std::ptrdiff_t>(trace->num_heads(stage)); ++h) {
                if (!trace->has(stage, b, h)) continue;
                const Tensor2& t = trace->get(stage, b, h);
                out.add(t.data(), t.size());
            }
        }
    }
    return out;
}

// The index of the first differing number, for the failure message.
std::string first_difference(const RunNumbers& a, const RunNumbers& b) {
    if (a.bits.size() != b.bits.size()) {
        return std::to_string(a.bits.size()) + " vs " + std::to_string(b.bits.size()) + " numbers";
    }
    for (std::size_t i = 0; i < a.bits.size(); ++i) {
        if (a.bits[i] != b.bits[i]) return "number " + std::to_string(i) + " of " + std::to_string(a.bits.size());
    }
    return "none";
}

TEST(Determinism, TrainingEvaluationAndTraceRepeatBitForBitAtEachThreadCount) {
    for (const TrainingSetup& s : setups()) {
        for (std::size_t threads : {1, 2}) {
            const RunNumbers first = train_and_trace(s, threads);
            const RunNumbers second = train_and_trace(s, threads);
            ASSERT_GT(first.bits.size(), 100u);
            EXPECT_TRUE(first.bits == second.bits)
                << s.name << " on " << threads << " threads: first difference at " << first_difference(first, second);
        }
    }
}

TEST(Determinism, ThreadCountDoesNotChangeTheNumbers) {
    for (const TrainingSetup& s : setups()) {
        const RunNumbers one = train_and_trace(s, 1);
        for (std::size_t threads : {2, 3}) {
            const RunNumbers many = train_and_trace(s, threads);
            EXPECT_TRUE(one.bits == many.bits)
                << s.name << ": 1 vs " << threads << " threads, first difference at " << first_difference(one, many);
        }
    }
}

}  // namespace
}  // namespace attnlab
