// Training steps/s of the image models on the shapes task, 1 and 2 threads. Run:
//   build/bench/attnlab_bench --benchmark_filter=ImageTrainerStep
//
// BM_ImageTrainerStep: Trainer::step as `attnlab train --task shapes` runs it (a fresh batch of
// 32 images of 16 x 16 each step, clipping, the schedule, metrics) at the sizes of the README's
// 90% runs: C 64, 4 heads, F 128, 2 pre-LN layers (Swin: 2 per stage), patches 4 x 4.
//   swin 0, ViT:  16 patches, learned positions, mean pooling.
//   swin 1, Swin: a 4 x 4 map in windows of 2 x 2 (4 windows of 4 patches, shifted on the second
//                 block), a 2x2 merge to one 2 x 2 window at width 128; no absolute positions.
#include <benchmark/benchmark.h>

#include <memory>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"

namespace {

void BM_ImageTrainerStep(benchmark::State& state) {
    const auto threads = static_cast<std::size_t>(state.range(0));
    const bool swin = state.range(1) != 0;
    attnlab::set_num_threads(threads);
    const std::unique_ptr<attnlab::Task> task = attnlab::make_task("shapes");
    attnlab::ModelConfig config;
    config.kind = attnlab::ModelKind::encoder;
    config.architecture = swin ? attnlab::Architecture::swin : attnlab::Architecture::vit;
    config.image_size = task->image_size();
    config.num_classes = task->num_classes();
    config.patch_size = 4;
    config.swin_window = 2;
    config.positional = swin ? attnlab::PositionalKind::none : attnlab::PositionalKind::learned;
    config.d_model = 64;
    config.num_heads = 4;
    config.ff_dim = 128;
    config.num_layers = 2;
    attnlab::Model model(config, 1);
    attnlab::TrainerOptions options;
    options.batch_size = 32;
    options.track_attention = false;
    attnlab::Trainer trainer(model, *task, options);
    attnlab::StepMetrics metrics;
    for (auto _ : state) {
        trainer.step(metrics);
        benchmark::DoNotOptimize(metrics.loss);
    }
    state.counters["steps_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["images_per_s"] =
        benchmark::Counter(double(state.iterations()) * double(options.batch_size), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ImageTrainerStep)
    ->ArgNames({"threads", "swin"})
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
