// Persistent thread pool: num_threads - 1 workers wait between jobs; the calling thread takes
// chunks too, so a pool of 1 thread has no workers at all.
//
// One job is in flight per pool at a time (call_mutex_). A job is the range [begin_, end_) cut
// into num_chunks_ nearly equal chunks; participants take a chunk index with a
// compare-exchange on ticket_ (see the header) and count finished chunks in done_chunks_. The
// caller takes chunks from the front of the range and the workers from its back, so with two
// threads the caller does about the first part of every job and the worker the last: the rows
// one job wrote are mostly read by the next job on the same core, from its own cache (a
// training step's jobs all split the tokens in row order). Taken in arrival order, about half
// of every activation would cross between the cores' caches (docs/performance.md). The
// caller returns once every chunk has finished, so the body and the job fields stay valid for as
// long as anybody may run a chunk. A worker that wakes late finds the chunks taken and goes back
// to waiting: nobody waits for a worker that has no chunk. A pinned job (parallel_for_pinned)
// is the exception: chunk i belongs to thread i, so the caller waits for every thread it names.
//
// Waiting: a training step issues hundreds of jobs of 10-100 µs each, and waking a thread from a
// condition variable costs about as much as a job, so workers first spin on ticket_ for
// kSpinTime before they sleep, and so does the caller waiting for the last chunk. Spinning only
// happens between jobs that follow each other closely; an idle pool sleeps.
#include "attnlab/core/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {
// True on pool workers, and on a caller while it runs chunks of a job: parallel_for called
// from there runs inline instead of waiting for a pool that is busy with the outer job.
thread_local bool t_inside_pool = false;
// 0 on any thread that is not a pool worker; i + 1 on worker i (see thread_index()).
thread_local std::size_t t_thread_index = 0;

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
// the whole job back, few enough that taking a chunk (one compare-exchange) stays negligible.
constexpr std::size_t kChunksPerThread = 4;

// How long a worker polls for the next job (and the caller for the last chunk) before sleeping.
constexpr std::chrono::microseconds kSpinTime{200};

std::uint32_t generation_of(std::uint64_t ticket) { return static_cast<std::uint32_t>(ticket >> 32); }
std::uint32_t chunk_of(std::uint64_t ticket) { return static_cast<std::uint32_t>(ticket); }
// The low 32 bits of an open ticket: chunks taken from the front (bits 16-31) and from the back
// (bits 0-15) of the job.
std::uint32_t taken_front(std::uint64_t ticket) { return static_cast<std::uint32_t>(ticket >> 16) & 0xFFFFu; }
std::uint32_t taken_back(std::uint64_t ticket) { return static_cast<std::uint32_t>(ticket) & 0xFFFFu; }
// Most chunks a job is cut into (the 16-bit counts above, and kClosed, must stay apart).
constexpr std::size_t kMaxChunks = 0xFFFEu;
// Most indices of a pinned job: one ticket bit each (bits 0-15, where other jobs count chunks
// taken from the back).
constexpr std::size_t kMaxPinned = 16;
// Chunk index of a ticket whose job is being set up (chunk counts stay far below it).
constexpr std::uint32_t kClosed = 0xFFFFFFFFu;

// A hint to the core that this is a polling loop (lets a sibling hyper-thread run).
void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// Polls done() for up to kSpinTime; true if it became true.
template <class Done>
bool spin_until(Done done) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (done()) return true;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() - start > kSpinTime) return done();
    }
}
}  // namespace

ThreadPool::ThreadPool(std::size_t num_threads) {
    if (num_threads == 0) fail<ConfigError>("ThreadPool: the thread count must be >= 1, got 0");
    workers_.reserve(num_threads - 1);
    try {
        for (std::size_t i = 0; i + 1 < num_threads; ++i) {
            workers_.emplace_back([this, i] {
                t_thread_index = i + 1;
                worker_loop();
            });
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
        stop_.store(true);
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::parallel_for(std::size_t begin, std::size_t end, std::size_t grain,
                              RangeBody body) {
    if (end <= begin) return;
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t range = end - begin;
    if (t_inside_pool || workers_.empty() || range < 2 * grain) {
        body(begin, end);
        return;
    }

    std::lock_guard<std::mutex> call(call_mutex_);
    // range / num_chunks >= grain, and chunks differ by at most one index (see run_chunks).
    const std::size_t chunks = std::min({range / grain, num_threads() * kChunksPerThread, kMaxChunks});
    run_chunks(open_job(begin, end, chunks, false, body));
    finish_job(chunks);
}

void ThreadPool::parallel_for_pinned(std::size_t n, RangeBody body) {
    if (n > num_threads() || n > kMaxPinned) {
        fail<ConfigError>("ThreadPool::parallel_for_pinned: ", n, " indices need as many threads, the pool has ",
                          num_threads(), " (at most ", kMaxPinned, " pinned)");
    }
    if (n == 0) return;
    if (t_inside_pool || n == 1) {
        body(0, n);
        return;
    }
    std::lock_guard<std::mutex> call(call_mutex_);
    run_chunks(open_job(0, n, n, true, body));
    finish_job(n);
}

std::uint32_t ThreadPool::open_job(std::size_t begin, std::size_t end, std::size_t chunks, bool pinned,
                                   const RangeBody& body) {
    // Close the ticket first: a worker still looking at the previous job (all its chunks taken)
    // then cannot take a chunk while the fields below change. The job protocol uses the default
    // (sequentially consistent) order: a few atomic operations per job, and the argument stays simple.
    const std::uint32_t generation = generation_of(ticket_.load()) + 1;
    ticket_.store(std::uint64_t{generation} << 32 | kClosed);
    body_.store(&body);
    begin_.store(begin);
    end_.store(end);
    num_chunks_.store(chunks);
    pinned_.store(pinned);
    done_chunks_.store(0);
    {
        // Opened under mutex_ so a worker between its last check and its sleep cannot miss it.
        std::lock_guard<std::mutex> lock(mutex_);
        ticket_.store(std::uint64_t{generation} << 32);
    }
    wake_.notify_all();
    return generation;
}

void ThreadPool::finish_job(std::size_t chunks) {
    const auto all_done = [&] { return done_chunks_.load() == chunks; };
    if (!spin_until(all_done)) {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, all_done);
    }
    std::exception_ptr error;
    {
        std::lock_guard<std::mutex> lock(error_mutex_);
        std::swap(error, error_);
    }
    if (error) std::rethrow_exception(error);
}

void ThreadPool::worker_loop() {
    t_inside_pool = true;
    std::uint32_t seen = 0;
    const auto has_news = [&] {
        const std::uint64_t ticket = ticket_.load();
        return stop_.load() || (generation_of(ticket) != seen && chunk_of(ticket) != kClosed);
    };
    for (;;) {
        if (!spin_until(has_news)) {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, has_news);
        }
        if (stop_.load()) return;
        // The news may already be a later job, still being set up: take a job only once it is
        // open, or a pinned job, which waits for this worker, would count as seen and never run.
        const std::uint64_t ticket = ticket_.load();
        if (chunk_of(ticket) == kClosed) continue;
        seen = generation_of(ticket);
        run_chunks(seen);
    }
}

void ThreadPool::run_chunks(std::uint32_t generation) {
    InsidePoolScope inside;
    for (;;) {
        std::uint64_t ticket = ticket_.load();
        std::size_t chunk = 0, chunks = 0;
        for (;;) {
            // Another generation (the job is over) or a job being set up: nothing to take.
            if (generation_of(ticket) != generation || chunk_of(ticket) == kClosed) return;
            chunks = num_chunks_.load();
            if (pinned_.load()) {
                // Chunk i is thread i's alone (nobody finishes the job without it); taking it
                // sets bit i of the ticket, so a thread runs it once, and only in this job.
                if (t_thread_index >= chunks) return;
                const std::uint64_t mine = std::uint64_t{1} << t_thread_index;
                if (ticket & mine) return;
                chunk = t_thread_index;
                if (ticket_.compare_exchange_weak(ticket, ticket | mine)) break;
                continue;
            }
            const std::uint32_t front = taken_front(ticket), back = taken_back(ticket);
            if (front + back >= chunks) return;
            // The caller takes chunks from the front, workers from the back (see the file comment).
            const bool from_back = t_thread_index != 0;
            chunk = from_back ? chunks - 1 - back : front;
            if (ticket_.compare_exchange_weak(ticket, ticket + (from_back ? 1 : std::uint64_t{1} << 16))) break;
        }
        // Holding an unfinished chunk of `generation`: the caller waits for it before it changes
        // the fields, so they are that job's.
        const std::size_t lo0 = begin_.load();
        const std::size_t range = end_.load() - lo0;
        // Chunk c covers [c·range/n, (c+1)·range/n): sizes differ by at most one, all >= grain.
        const std::size_t lo = lo0 + chunk * range / chunks;
        const std::size_t hi = lo0 + (chunk + 1) * range / chunks;
        try {
            (*body_.load())(lo, hi);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex_);
            if (!error_) error_ = std::current_exception();
        }
        if (done_chunks_.fetch_add(1) + 1 == chunks) {
            // The last chunk: the caller may have stopped spinning. Lock so the notification
            // cannot fall between its check and its sleep.
            std::lock_guard<std::mutex> lock(mutex_);
            done_.notify_one();
            return;
        }
        if (pinned_.load()) return;
    }
}

namespace {
std::mutex g_default_mutex;
std::unique_ptr<ThreadPool> g_default_pool;
// The default pool's thread count once it exists (0 before), for available_threads().
std::atomic<std::size_t> g_default_threads{0};

std::size_t default_thread_count() {
    const std::size_t hw = std::thread::hardware_concurrency();  // 0 when unknown
    return std::clamp<std::size_t>(hw, 1, 8);
}
}  // namespace

ThreadPool& default_pool() {
    std::lock_guard<std::mutex> lock(g_default_mutex);
    if (!g_default_pool) {
        g_default_pool = std::make_unique<ThreadPool>(default_thread_count());
        g_default_threads.store(g_default_pool->num_threads());
    }
    return *g_default_pool;
}

void set_num_threads(std::size_t n) {
    if (n == 0) fail<ConfigError>("set_num_threads: the thread count must be >= 1, got ", n);
    // Replacing the pool from inside one of its jobs would join the thread that is running it.
    if (t_inside_pool) fail<ConfigError>("set_num_threads: cannot change the pool from inside a parallel_for body");
    std::lock_guard<std::mutex> lock(g_default_mutex);
    if (g_default_pool && g_default_pool->num_threads() == n) return;
    g_default_threads.store(0);
    g_default_pool.reset();  // joins the old workers before new ones start
    g_default_pool = std::make_unique<ThreadPool>(n);
    g_default_threads.store(n);
}

std::size_t num_threads() { return default_pool().num_threads(); }

std::size_t thread_index() { return t_thread_index; }

std::size_t available_threads() {
    if (t_inside_pool) return 1;
    const std::size_t n = g_default_threads.load();
    return n != 0 ? n : num_threads();
}

void parallel_for(std::size_t begin, std::size_t end, RangeBody body,
                  std::size_t grain) {
    if (end <= begin) return;
    grain = std::max<std::size_t>(grain, 1);
    if (t_inside_pool || end - begin < 2 * grain) {
        body(begin, end);
        return;
    }
    default_pool().parallel_for(begin, end, grain, body);
}

void parallel_for_pinned(std::size_t n, RangeBody body) {
    if (n == 0) return;
    if (t_inside_pool || n == 1) {
        body(0, n);
        return;
    }
    default_pool().parallel_for_pinned(n, body);
}

}  // namespace attnlab
