// attnlab/core/thread_pool.hpp: a small persistent pool of std::threads for data parallelism.
//
// What it is for: splitting independent rows / heads / tiles of a kernel across cores. The
// threads are created once and reused (WASM pthreads cannot be created cheaply, and a pthread
// pool smaller than the threads one call starts deadlocks). Not for: task graphs or async work.
//
// Determinism: parallel_for only partitions the index range; each index is computed by the
// same code whatever the thread count, so results are bit-identical for 1 or N threads.
// Nested calls (parallel_for inside a parallel_for body) run inline on the calling thread.
//
//   attnlab::set_num_threads(2);
//   attnlab::parallel_for(0, rows, [&](std::size_t begin, std::size_t end) {
//       for (std::size_t r = begin; r < end; ++r) process_row(r);
//   });
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "attnlab/core/function_ref.hpp"

namespace attnlab {

// The body of a parallel_for: called with [begin, end) chunks; referenced, not copied, so
// passing a lambda allocates nothing.
using RangeBody = FunctionRef<void(std::size_t, std::size_t)>;

class ThreadPool {
public:
    // Starts num_threads - 1 workers; the calling thread is the remaining one.
    explicit ThreadPool(std::size_t num_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    std::size_t num_threads() const { return workers_.size() + 1; }

    // Calls body(begin, end) on disjoint chunks covering [begin, end), at least `grain`
    // indices per chunk, and returns when all are done. Rethrows the first exception a chunk
    // threw (after every chunk finished).
    void parallel_for(std::size_t begin, std::size_t end, std::size_t grain,
                      RangeBody body);
    // Calls body(i, i + 1) for each i < n on thread i of the pool (0 is the caller; n <=
    // num_threads() and n <= 16, else ConfigError) and returns when all are done; rethrows as
    // parallel_for.
    // The same index runs on the same thread every call, so thread-local scratch that its work
    // grows is sized by the first call. Unlike parallel_for the caller waits for a thread that
    // is slow to wake instead of taking its share.
    void parallel_for_pinned(std::size_t n, RangeBody body);

private:
    // Publishes a job of `chunks` chunks over [begin, end) and wakes the workers; returns its
    // generation.
    std::uint32_t open_job(std::size_t begin, std::size_t end, std::size_t chunks, bool pinned, const RangeBody& body);
    // The caller's part after run_chunks: waits for every chunk, then rethrows the first error.
    void finish_job(std::size_t chunks);
    void worker_loop();
    // Takes chunks of job `generation` until none is left or a later job replaced it.
    void run_chunks(std::uint32_t generation);
    // Wakes the workers with stop_ set and joins them.
    void shut_down();

    std::vector<std::thread> workers_;
    std::mutex mutex_;              // only for sleeping: the job state below is atomic
    std::condition_variable wake_;  // workers that stopped spinning wait here for the next job
    std::condition_variable done_;  // the caller, once it stopped spinning, waits here for the last chunk
    std::mutex call_mutex_;         // one parallel_for at a time per pool
    // The job in flight, in ticket_ = (generation << 32) | (chunks taken from the front << 16) |
    // chunks taken from the back. The caller closes the ticket of the new generation, writes
    // body_, begin_, end_ and num_chunks_, then opens it with none taken. A participant takes a
    // chunk (the caller from the front, workers from the back) by a compare-exchange that only
    // succeeds while the generation is still the one it saw, so a worker that wakes after its
    // job has finished never takes a chunk of a later job; the caller starts a new job only
    // after every chunk of the last one has finished (done_chunks_).
    std::atomic<const RangeBody*> body_{nullptr};
    std::atomic<std::size_t> begin_{0}, end_{0}, num_chunks_{0};
    std::atomic<bool> pinned_{false};  // chunk i belongs to thread i (parallel_for_pinned)
    std::atomic<std::uint64_t> ticket_{0};
    std::atomic<std::size_t> done_chunks_{0};
    std::atomic<bool> stop_{false};
    std::mutex error_mutex_;
    std::exception_ptr error_;  // first exception of the job in flight, guarded by error_mutex_
};

// The process-wide pool the kernels use. Created on first use with hardware_concurrency()
// threads (at most 8), or with the count last given to set_num_threads.
ThreadPool& default_pool();
// Replaces the default pool with one of n threads (n >= 1). Not to be called while kernels run.
void set_num_threads(std::size_t n);
std::size_t num_threads();
// Threads a parallel_for issued from here would use: 1 inside a parallel_for body (nested
// calls run inline), else num_threads(). Cheap (no lock): kernels ask it per call to size
// their tiles.
std::size_t available_threads();

// Which thread of the default pool runs the calling code: 0 outside the pool's workers (the
// thread that calls parallel_for takes part as thread 0), 1 .. num_threads() - 1 on worker i.
// A parallel_for body can use it to pick its slot in a buffer of num_threads() slots that the
// caller owns, so per-thread scratch does not depend on which threads happened to run tasks.
std::size_t thread_index();

// default_pool().parallel_for, but runs inline when called from inside a pool worker (nested
// parallelism) or when the range is smaller than two grains.
void parallel_for(std::size_t begin, std::size_t end, RangeBody body,
                  std::size_t grain = 1);
// default_pool().parallel_for_pinned, but runs body(0, n) inline when called from inside a pool
// worker (nested parallelism) or when n == 1, and nothing when n == 0.
void parallel_for_pinned(std::size_t n, RangeBody body);

}  // namespace attnlab
