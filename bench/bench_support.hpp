// bench/bench_support.hpp: what every benchmark of the suite shares — the machine's FMA peak,
// measured by the suite itself, and a heap meter for peak-memory benchmarks.
//
//   const double peak = bench::fma_peak_gflops(1);            // active ISA, one thread
//   bench::Stopwatch watch; for (auto _ : state) {...}
//   bench::report_flops(state, 2.0 * n * n * n, watch, threads);  // GFLOPS, peak_frac, ...
#pragma once

#include <chrono>
#include <ctime>
#include <cstddef>

#include <benchmark/benchmark.h>

namespace bench {

// The machine is shared with other work, so every rate comes in two forms: per wall-clock second
// (what a user sees now) and per CPU second of the process divided by the thread count (what the
// code does while it actually runs: robust to other processes taking the cores). The pool's idle
// workers spin for up to 200 µs before they sleep (core/thread_pool.hpp), so with 2 threads and
// short jobs the CPU-time forms count some waiting as work and read low; compare 2-thread runs by
// their wall-clock forms on an idle machine. Fractions of the peak use the CPU-time forms.

// Wall-clock and process-CPU seconds since construction.
class Stopwatch {
public:
    Stopwatch() : wall_(std::chrono::steady_clock::now()), cpu_(process_cpu_seconds()) {}
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count(); }
    double cpu_seconds() const { return process_cpu_seconds() - cpu_; }
    static double process_cpu_seconds();

private:
    std::chrono::steady_clock::time_point wall_;
    double cpu_;
};

// GFLOP/s per CPU second and thread of a register-only FMA loop with the active ISA
// (attnlab::kernels::fma_peak_loop) on `threads` threads at once: best of a few ~40 ms runs,
// measured once per (ISA, threads).
double fma_peak_gflops(std::size_t threads);

// Sets counters GFLOPS (flops_per_iteration · iterations per wall second), GFLOPS_cpu (per CPU
// second / threads), peak_frac (GFLOPS_cpu over fma_peak_gflops(threads) of the active ISA) and
// cpu_util (CPU seconds over wall seconds · threads), and labels the run with the ISA.
void report_flops(benchmark::State& state, double flops_per_iteration, const Stopwatch& watch, std::size_t threads);

// Bytes allocated with operator new and not yet freed (bench_memory.cpp replaces the global
// operator new/delete of the benchmark binary), and the peak since the last reset_peak().
std::size_t heap_bytes();
std::size_t heap_peak_bytes();
void reset_heap_peak();

}  // namespace bench
