// The LSTM (nn/lstm.hpp) at the sizes of the comparison with torch.nn.LSTM (bench/compare): one
// layer, B = 32, I = H = 64, T = 64 ... 512, 1 and 2 threads. Run:
//   build/bench/attnlab_bench --benchmark_filter=Lstm
//
//   BM_LstmForward:         forward with a cache (as for training), reused from call to call
//   BM_LstmForwardBackward: forward, then backward through time to dx and every parameter
// Counters: GFLOPS / peak_frac from the matmul FLOPs (forward 2·B·T·4H·(I + H); backward twice
// that), and tokens_per_s (B·T per second).
#include <benchmark/benchmark.h>

#include <cstddef>

#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/nn/lstm.hpp"
#include "bench_support.hpp"

namespace {

constexpr std::size_t kBatch = 32, kInput = 64, kHidden = 64;

double forward_flops(std::size_t t) {
    return 2.0 * double(kBatch) * double(t) * 4.0 * double(kHidden) * double(kInput + kHidden);
}

void run(benchmark::State& state, bool with_backward) {
    const auto t = static_cast<std::size_t>(state.range(0));
    const auto threads = static_cast<std::size_t>(state.range(1));
    attnlab::set_num_threads(threads);
    attnlab::Rng rng(1);
    const attnlab::Lstm lstm({kInput, kHidden, 1, true}, rng);
    attnlab::Tensor3 x = attnlab::Tensor3::from_shape({kBatch, t, kInput});      // (B, T, I)
    attnlab::Tensor3 dout = attnlab::Tensor3::from_shape({kBatch, t, kHidden});  // (B, T, H)
    attnlab::Rng data(2);
    for (auto& v : x) v = data.uniform(-1.0f, 1.0f);
    for (auto& v : dout) v = data.uniform(-1.0f, 1.0f);
    attnlab::LstmCache cache;
    attnlab::LstmOutput out;
    attnlab::LstmGrad grads(lstm);
    attnlab::Tensor3 dx;
    const bench::Stopwatch watch;
    for (auto _ : state) {
        lstm.forward(x, nullptr, nullptr, cache, out);
        if (with_backward) lstm.backward(dout, nullptr, nullptr, cache, grads, dx, nullptr, nullptr);
        benchmark::DoNotOptimize(out.output.data());
        benchmark::ClobberMemory();
    }
    bench::report_flops(state, forward_flops(t) * (with_backward ? 3.0 : 1.0), watch, threads);
    state.counters["tokens_per_s"] =
        benchmark::Counter(double(kBatch * t) * double(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_LstmForward(benchmark::State& state) { run(state, false); }
void BM_LstmForwardBackward(benchmark::State& state) { run(state, true); }

void lstm_args(benchmark::internal::Benchmark* b) {
    for (long threads : {1, 2}) {
        for (long t : {64, 128, 256, 512}) b->Args({t, threads});
    }
    b->ArgNames({"T", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_LstmForward)->Apply(lstm_args);
BENCHMARK(BM_LstmForwardBackward)->Apply(lstm_args);
