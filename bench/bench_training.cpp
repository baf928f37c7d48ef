// Training steps/s of the two tiny models below, on 1 and 2 threads. Run:
//   build/bench/attnlab_bench --benchmark_filter=TrainStep
//
// A step is zero_grad + forward + cross-entropy + backward + AdamW on one fixed batch, with the
// parameter views built once before the loop: such a step allocates nothing (tests/alloc).
//   BM_TrainStepEncoder: the tiny encoder of the comparison (bench/compare): EncoderClassifier,
//     2 post-LN layers, C 64, 4 heads, F 256, ReLU, sinusoidal, mean pooling, 2 classes,
//     batch 32 x T 64, vocabulary 16.
//   BM_TrainStepGpt: a tiny GPT (DecoderLM): 2 pre-LN layers, C 64, 4 heads, F 256, GELU, RoPE,
//     causal, batch 32 x T 64 (and T 256), vocabulary 64, next-token targets.
//   BM_TrainerStep: Trainer::step as the CLI and the page run it (a fresh batch of the brackets
//     task each step, clipping, the schedule, metrics), the tiny encoder's sizes, with the
//     attention diagnostics off and on (diag:1, the default: the largest score and the entropy
//     per head; the step then takes the recorded attention path).
// Counters: steps_per_s, tokens_per_s, and GFLOPS / peak_frac from the matmul FLOPs of a step
// (forward 2·tokens·(4C² + 2CF) per layer + attention 4·B·T²·C per layer (the GPT's causal half
// counted whole), plus the head; backward twice the forward).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"
#include "attnlab/train/memory.hpp"
#include "attnlab/train/optimizer.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"
#include "bench_support.hpp"

namespace {

constexpr std::size_t kBatch = 32, kModel = 64, kHeads = 4, kFeedForward = 256, kLayers = 2;

double step_flops(std::size_t tokens, std::size_t t, std::size_t head_out) {
    const double c = kModel, f = kFeedForward;
    const double per_layer = 2.0 * double(tokens) * (4.0 * c * c + 2.0 * c * f) + 4.0 * double(tokens) * double(t) * c;
    return 3.0 * (kLayers * per_layer + 2.0 * double(tokens) * c * double(head_out));
}

// The sizes both models share.
attnlab::ModelConfig tiny_config(attnlab::ModelKind kind, std::size_t vocab, std::size_t t) {
    attnlab::ModelConfig config;
    config.kind = kind;
    config.vocab_size = vocab;
    config.max_len = t;
    config.d_model = kModel;
    config.num_heads = kHeads;
    config.num_layers = kLayers;
    config.ff_dim = kFeedForward;
    return config;
}

void BM_TrainStepEncoder(benchmark::State& state) {
    attnlab::keep_freed_memory();  // as Trainer does: no page faults for the recycled tensors
    attnlab::use_huge_pages();     // and the heap on 2 MiB pages
    const auto threads = static_cast<std::size_t>(state.range(0));
    constexpr std::size_t T = 64, vocab = 16;
    attnlab::set_num_threads(threads);
    attnlab::ModelConfig config = tiny_config(attnlab::ModelKind::encoder, vocab, T);
    config.activation = attnlab::Activation::relu;
    config.norm = attnlab::NormPlacement::post;
    config.positional = attnlab::PositionalKind::sinusoidal;
    config.pooling = attnlab::Pooling::mean;
    config.num_classes = 2;
    attnlab::Rng rng(1);
    attnlab::EncoderClassifier model(config, rng);
    attnlab::Index2 tokens = attnlab::Index2::from_shape({kBatch, T});  // (B, T)
    attnlab::Index1 labels = attnlab::Index1::from_shape({kBatch});      // (B)
    attnlab::Rng data(0);
    for (auto& t : tokens) t = static_cast<std::int32_t>(data.below(vocab));
    for (auto& l : labels) l = static_cast<std::int32_t>(data.below(2));
    const attnlab::Mask2 no_padding;
    attnlab::AdamW opt;
    const std::vector<attnlab::ParameterView> params = model.parameters(), grads = model.gradients();  // built once
    const bench::Stopwatch watch;
    for (auto _ : state) {
        model.zero_grad();
        benchmark::DoNotOptimize(model.loss_and_backward(tokens, no_padding, labels).loss);
        opt.step(params, grads, 1e-3f);
    }
    state.counters["steps_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["tokens_per_s"] =
        benchmark::Counter(double(state.iterations()) * kBatch * T, benchmark::Counter::kIsRate);
    bench::report_flops(state, step_flops(kBatch * T, T, 0), watch, threads);
}

void BM_TrainStepGpt(benchmark::State& state) {
    attnlab::keep_freed_memory();
    attnlab::use_huge_pages();
    const auto threads = static_cast<std::size_t>(state.range(0));
    const auto T = static_cast<std::size_t>(state.range(1));
    constexpr std::size_t vocab = 64;
    attnlab::set_num_threads(threads);
    attnlab::ModelConfig config = tiny_config(attnlab::ModelKind::decoder, vocab, T);
    config.positional = attnlab::PositionalKind::rope;
    attnlab::Rng rng(1);
    attnlab::DecoderLM model(config, rng);
    attnlab::Index2 tokens = attnlab::Index2::from_shape({kBatch, T}), targets = tokens;  // (B, T)
    attnlab::Rng data(0);
    for (auto& t : tokens) t = static_cast<std::int32_t>(data.below(vocab));
    for (std::size_t b = 0; b < kBatch; ++b) {
        for (std::size_t t = 0; t < T; ++t) targets(b, t) = t + 1 < T ? tokens(b, t + 1) : tokens(b, 0);
    }
    attnlab::AdamW opt;
    const std::vector<attnlab::ParameterView> params = model.parameters(), grads = model.gradients();  // built once
    const bench::Stopwatch watch;
    for (auto _ : state) {
        model.zero_grad();
        benchmark::DoNotOptimize(model.loss_and_backward(tokens, targets).loss);
        opt.step(params, grads, 1e-3f);
    }
    state.counters["steps_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["tokens_per_s"] =
        benchmark::Counter(double(state.iterations()) * kBatch * T, benchmark::Counter::kIsRate);
    bench::report_flops(state, step_flops(kBatch * T, T, vocab), watch, threads);
}

void BM_TrainerStep(benchmark::State& state) {
    const auto threads = static_cast<std::size_t>(state.range(0));
    constexpr std::size_t T = 64;
    attnlab::set_num_threads(threads);
    attnlab::TaskOptions task_options;
    task_options.length = T;
    const std::unique_ptr<attnlab::Task> task = attnlab::make_task("brackets", task_options);
    attnlab::ModelConfig config = tiny_config(attnlab::ModelKind::encoder, task->vocab_size(), T);
    config.activation = attnlab::Activation::relu;
    config.norm = attnlab::NormPlacement::post;
    config.pooling = attnlab::Pooling::mean;
    config.num_classes = task->num_classes();
    attnlab::Model model(config, 1);
    attnlab::TrainerOptions options;
    options.batch_size = kBatch;
    options.track_attention = state.range(1) != 0;
    attnlab::Trainer trainer(model, *task, options);
    attnlab::StepMetrics metrics;
    const bench::Stopwatch watch;
    for (auto _ : state) {
        trainer.step(metrics);
        benchmark::DoNotOptimize(metrics.loss);
    }
    state.counters["steps_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
    bench::report_flops(state, step_flops(kBatch * T, T, 0), watch, threads);
}

BENCHMARK(BM_TrainStepEncoder)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TrainStepGpt)
    ->ArgNames({"threads", "T"})
    ->ArgsProduct({{1, 2}, {64, 256}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TrainerStep)
    ->ArgNames({"threads", "diag"})
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
