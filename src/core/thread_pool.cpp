// Persistent thread pool: num_threads - 1 workers sleep on a condition variable between jobs;
// the calling thread takes chunks too, so a pool of 1 thread has no workers at all.
//
// One job is in flight per pool at a time (call_mutex_). A job is the range [begin_, end_) cut
// into num_chunks_ nearly equal chunks; participants take the next chunk index under mutex_
// until none is left. The caller then waits until every worker has reported back (active_ == 0),
// so the body and the chunk state stay valid for as long as anybody may read them.
#include "attnlab/core/thread_pool.hpp"

#include <algorithm>
#include <memory>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {
// True on pool workers, and on a caller while it runs chunks of a job: parallel_for called
// from there runs inline instead of waiting for a pool that is busy with the outer job.
thread_local bool t_inside_pool = false;

// Sets t_inside_pool for a scope and restores the previous value (exception safe).
class InsidePoolScope {
public:
    InsidePoolScope() : previous_(t_inside_pool) { t_inside_pool = true; }
    ~InsidePoolScope() { t_inside_pool = previous_; }
    InsidePoolScope(const InsidePoolScope&) = delete;
    InsidePoolScope& operator=(const InsidePoolScope&) = delete;

private:
    bool previous_;
};

// Chunks per thread: more than one so a thread slowed down by another process does not hold
// the whole job back, few enough that taking a chunk (one mutex lock) stays negligible.
constexpr std::size_t kChunksPerThread = 4;
}  // namespace

ThreadPool::ThreadPool(std::size_t num_threads) {
    if (num_threads == 0) fail<ConfigError>("ThreadPool: the thread count must be >= 1, got 0");
    workers_.reserve(num_threads - 1);
    try {
        for (std::size_t i = 0; i + 1 < num_threads; ++i) {
            workers_.emplace_back([this, i] { worker_loop(i); });
        }
    } catch (...) {
        // Thread creation can fail (e.g. a WASM pthread pool smaller than asked): stop the
        // workers already started, since the destructor does not run for a failed constructor.
        shut_down();
        throw;
    }
}

ThreadPool::~ThreadPool() { shut_down(); }

void ThreadPool::shut_down() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::parallel_for(std::size_t begin, std::size_t end, std::size_t grain,
                              const std::function<void(std::size_t, std::size_t)>& body) {
    if (end <= begin) return;
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t range = end - begin;
    if (t_inside_pool || workers_.empty() || range < 2 * grain) {
        body(begin, end);
        return;
    }

    std::lock_guard<std::mutex> call(call_mutex_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        body_ = &body;
        begin_ = begin;
        end_ = end;
        // range / num_chunks >= grain, and chunks differ by at most one index (see run_chunks).
        num_chunks_ = std::min(range / grain, num_threads() * kChunksPerThread);
        chunk_ = range / num_chunks_;
        next_chunk_ = 0;
        active_ = workers_.size();
        error_ = nullptr;
        ++generation_;
    }
    wake_.notify_all();

    run_chunks(0);

    std::exception_ptr error;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return active_ == 0; });
        body_ = nullptr;
        std::swap(error, error_);
    }
    if (error) std::rethrow_exception(error);
}

void ThreadPool::worker_loop(std::size_t index) {
    t_inside_pool = true;
    std::size_t seen_generation = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen_generation; });
            if (stop_) return;
            seen_generation = generation_;
        }
        run_chunks(index + 1);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (--active_ == 0) done_.notify_one();
        }
    }
}

void ThreadPool::run_chunks(std::size_t /*participant*/) {
    InsidePoolScope inside;
    const std::size_t range = end_ - begin_;
    for (;;) {
        std::size_t chunk;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (next_chunk_ >= num_chunks_) return;
            chunk = next_chunk_++;
        }
        // Chunk c covers [c·range/n, (c+1)·range/n): sizes differ by at most one, all >= grain.
        const std::size_t lo = begin_ + chunk * range / num_chunks_;
        const std::size_t hi = begin_ + (chunk + 1) * range / num_chunks_;
        try {
            (*body_)(lo, hi);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!error_) error_ = std::current_exception();
        }
    }
}

namespace {
std::mutex g_default_mutex;
std::unique_ptr<ThreadPool> g_default_pool;

std::size_t default_thread_count() {
    const std::size_t hw = std::thread::hardware_concurrency();  // 0 when unknown
    return std::clamp<std::size_t>(hw, 1, 8);
}
}  // namespace

ThreadPool& default_pool() {
    std::lock_guard<std::mutex> lock(g_default_mutex);
    if (!g_default_pool) g_default_pool = std::make_unique<ThreadPool>(default_thread_count());
    return *g_default_pool;
}

void set_num_threads(std::size_t n) {
    if (n == 0) fail<ConfigError>("set_num_threads: the thread count must be >= 1, got ", n);
    // Replacing the pool from inside one of its jobs would join the thread that is running it.
    if (t_inside_pool) fail<ConfigError>("set_num_threads: cannot change the pool from inside a parallel_for body");
    std::lock_guard<std::mutex> lock(g_default_mutex);
    if (g_default_pool && g_default_pool->num_threads() == n) return;
    g_default_pool.reset();  // joins the old workers before new ones start
    g_default_pool = std::make_unique<ThreadPool>(n);
}

std::size_t num_threads() { return default_pool().num_threads(); }

void parallel_for(std::size_t begin, std::size_t end, const std::function<void(std::size_t, std::size_t)>& body,
                  std::size_t grain) {
    if (end <= begin) return;
    grain = std::max<std::size_t>(grain, 1);
    if (t_inside_pool || end - begin < 2 * grain) {
        body(begin, end);
        return;
    }
    default_pool().parallel_for(begin, end, grain, body);
}

}  // namespace attnlab
