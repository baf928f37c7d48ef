#include "attnlab/core/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace {

// Restores the default pool's thread count when a test that changes it ends.
class ThreadCountGuard {
public:
    ThreadCountGuard() : saved_(attnlab::num_threads()) {}
    ~ThreadCountGuard() { attnlab::set_num_threads(saved_); }

private:
    std::size_t saved_;
};

// Runs pool.parallel_for and returns how often each index of [0, end) was visited.
std::vector<int> visit_counts(attnlab::ThreadPool& pool, std::size_t begin, std::size_t end, std::size_t grain) {
    std::vector<std::atomic<int>> counts(end);
    pool.parallel_for(begin, end, grain, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) counts[i].fetch_add(1);
    });
    std::vector<int> out(end);
    for (std::size_t i = 0; i < end; ++i) out[i] = counts[i].load();
    return out;
}

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
    for (std::size_t threads : {1, 2, 3, 5}) {
        attnlab::ThreadPool pool(threads);
        EXPECT_EQ(pool.num_threads(), threads);
        for (std::size_t begin : {0, 7}) {
            for (std::size_t end : {8, 9, 31, 100, 1001}) {
                for (std::size_t grain : {1, 3, 64, 5000}) {
                    const std::vector<int> counts = visit_counts(pool, begin, end, grain);
                    for (std::size_t i = 0; i < end; ++i) {
                        ASSERT_EQ(counts[i], i < begin ? 0 : 1) << "index " << i << " threads " << threads << " range ["
                                                                << begin << ", " << end << ") grain " << grain;
                    }
                }
            }
        }
    }
}

TEST(ThreadPool, ChunksAreAtLeastOneGrainLong) {
    attnlab::ThreadPool pool(3);
    for (std::size_t range : {10, 17, 100, 257}) {
        for (std::size_t grain : {1, 3, 4, 9}) {
            std::atomic<std::size_t> shortest{range};
            pool.parallel_for(0, range, grain, [&](std::size_t lo, std::size_t hi) {
                std::size_t current = shortest.load();
                while (hi - lo < current && !shortest.compare_exchange_weak(current, hi - lo)) {
                }
            });
            EXPECT_GE(shortest.load(), std::min(range, grain)) << "range " << range << " grain " << grain;
        }
    }
}

TEST(ThreadPool, EmptyRangeNeverCallsBody) {
    attnlab::ThreadPool pool(2);
    bool called = false;
    pool.parallel_for(5, 5, 1, [&](std::size_t, std::size_t) { called = true; });
    pool.parallel_for(6, 5, 1, [&](std::size_t, std::size_t) { called = true; });
    attnlab::parallel_for(3, 3, [&](std::size_t, std::size_t) { called = true; });
    EXPECT_FALSE(called);
}

TEST(ThreadPool, FirstExceptionIsRethrownAfterAllChunksFinish) {
    attnlab::ThreadPool pool(2);
    std::atomic<std::size_t> visited{0};
    try {
        pool.parallel_for(0, 64, 1, [&](std::size_t lo, std::size_t hi) {
            visited.fetch_add(hi - lo);
            if (lo == 0) throw std::runtime_error("chunk at 0 failed");
        });
        FAIL() << "expected the body's exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "chunk at 0 failed");
    }
    EXPECT_EQ(visited.load(), 64u);
}

TEST(ThreadPool, ExceptionFromEveryChunkRethrowsOne) {
    attnlab::ThreadPool pool(3);
    EXPECT_THROW(pool.parallel_for(0, 100, 1, [](std::size_t, std::size_t) { throw attnlab::ValueError("bad"); }),
                 attnlab::ValueError);
}

TEST(ThreadPool, PoolStaysUsableAfterAnException) {
    attnlab::ThreadPool pool(2);
    EXPECT_THROW(pool.parallel_for(0, 10, 1, [](std::size_t, std::size_t) { throw std::logic_error("x"); }),
                 std::logic_error);
    const std::vector<int> counts = visit_counts(pool, 0, 50, 1);
    for (int c : counts) EXPECT_EQ(c, 1);
}

TEST(ThreadPool, NestedParallelForRunsInlineWithoutDeadlock) {
    ThreadCountGuard guard;
    attnlab::set_num_threads(2);
    constexpr std::size_t outer = 16, inner = 40;
    std::vector<std::atomic<int>> counts(outer * inner);
    attnlab::parallel_for(0, outer, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) {
            // Both the free function and the default pool itself must run inline here, on the
            // worker and on the participating caller alike.
            attnlab::parallel_for(0, inner / 2, [&](std::size_t a, std::size_t b) {
                for (std::size_t j = a; j < b; ++j) counts[i * inner + j].fetch_add(1);
            });
            attnlab::default_pool().parallel_for(inner / 2, inner, 1, [&](std::size_t a, std::size_t b) {
                for (std::size_t j = a; j < b; ++j) counts[i * inner + j].fetch_add(1);
            });
        }
    });
    for (std::size_t i = 0; i < counts.size(); ++i) ASSERT_EQ(counts[i].load(), 1) << "index " << i;
}

TEST(ThreadPool, SetNumThreadsZeroThrowsConfigErrorNamingTheCount) {
    ThreadCountGuard guard;
    try {
        attnlab::set_num_threads(0);
        FAIL() << "expected ConfigError";
    } catch (const attnlab::ConfigError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("set_num_threads"), std::string::npos) << message;
        EXPECT_NE(message.find("got 0"), std::string::npos) << message;
    }
    EXPECT_GE(attnlab::num_threads(), 1u);  // the previous pool is still in place
}

TEST(ThreadPool, SetNumThreadsInsideABodyThrowsInsteadOfDeadlocking) {
    ThreadCountGuard guard;
    attnlab::set_num_threads(2);
    EXPECT_THROW(
        attnlab::default_pool().parallel_for(0, 4, 1, [](std::size_t, std::size_t) { attnlab::set_num_threads(3); }),
        attnlab::ConfigError);
    EXPECT_EQ(attnlab::num_threads(), 2u);
}

TEST(ThreadPool, SetNumThreadsReplacesTheDefaultPool) {
    ThreadCountGuard guard;
    attnlab::set_num_threads(3);
    EXPECT_EQ(attnlab::num_threads(), 3u);
    EXPECT_EQ(attnlab::default_pool().num_threads(), 3u);
    attnlab::set_num_threads(1);
    EXPECT_EQ(attnlab::num_threads(), 1u);
    const std::vector<int> counts = visit_counts(attnlab::default_pool(), 0, 33, 1);
    for (int c : counts) EXPECT_EQ(c, 1);
}

TEST(ThreadPool, AvailableThreadsIsThePoolSizeOutsideAndOneInsideABody) {
    ThreadCountGuard guard;
    attnlab::set_num_threads(3);
    EXPECT_EQ(attnlab::available_threads(), 3u);
    std::atomic<std::size_t> inside_max{0};
    attnlab::parallel_for(0, 6, [&](std::size_t, std::size_t) {
        const std::size_t n = attnlab::available_threads();
        std::size_t seen = inside_max.load();
        while (n > seen && !inside_max.compare_exchange_weak(seen, n)) {
        }
    });
    EXPECT_EQ(inside_max.load(), 1u);
    attnlab::set_num_threads(1);
    EXPECT_EQ(attnlab::available_threads(), 1u);
}

TEST(ThreadPool, DefaultPoolHasBetweenOneAndEightThreads) {
    const std::size_t n = attnlab::num_threads();
    EXPECT_GE(n, 1u);
    EXPECT_LE(n, 8u);
}

TEST(ThreadPool, ManyRepeatedCallsAllComplete) {
    attnlab::ThreadPool pool(2);
    std::atomic<std::size_t> total{0};
    constexpr std::size_t calls = 5000;
    for (std::size_t c = 0; c < calls; ++c) {
        pool.parallel_for(0, 8, 1, [&](std::size_t lo, std::size_t hi) { total.fetch_add(hi - lo); });
    }
    EXPECT_EQ(total.load(), calls * 8);
}

TEST(ThreadPool, SmallRangeRunsInlineOnTheCaller) {
    ThreadCountGuard guard;
    attnlab::set_num_threads(2);
    const std::thread::id caller = std::this_thread::get_id();
    std::thread::id seen;
    attnlab::parallel_for(
        0, 10, [&](std::size_t, std::size_t) { seen = std::this_thread::get_id(); }, 6);
    EXPECT_EQ(seen, caller);
}

TEST(ThreadPool, ConstructingAndDestroyingPoolsJoinsCleanly) {
    for (int i = 0; i < 50; ++i) {
        attnlab::ThreadPool pool(3);
        if (i % 2 == 0) {
            const std::vector<int> counts = visit_counts(pool, 0, 20, 1);
            for (int c : counts) ASSERT_EQ(c, 1);
        }
    }
}

// A pinned job runs index i on thread i, every call, whatever ran in between: the split
// training step relies on it to size each thread's scratch once (tests/alloc).
TEST(ThreadPool, PinnedJobRunsIndexIOnThreadIEveryCall) {
    attnlab::ThreadPool pool(3);
    std::vector<std::thread::id> first(3);
    for (int call = 0; call < 1000; ++call) {
        std::vector<std::atomic<int>> runs(3);
        std::vector<std::size_t> index_seen(3, 99);
        std::vector<std::thread::id> id_seen(3);
        pool.parallel_for_pinned(3, [&](std::size_t lo, std::size_t hi) {
            ASSERT_EQ(hi, lo + 1);
            runs[lo].fetch_add(1);
            index_seen[lo] = attnlab::thread_index();
            id_seen[lo] = std::this_thread::get_id();
        });
        for (std::size_t i = 0; i < 3; ++i) {
            ASSERT_EQ(runs[i].load(), 1) << "index " << i << ", call " << call;
            ASSERT_EQ(index_seen[i], i) << "call " << call;
            if (call == 0) first[i] = id_seen[i];
            ASSERT_EQ(id_seen[i], first[i]) << "index " << i << " changed thread at call " << call;
        }
        if (call % 2 == 0) {  // an ordinary job in between, whose chunks any thread may take
            EXPECT_EQ(visit_counts(pool, 0, 7, 1), std::vector<int>(7, 1));
        }
    }
    EXPECT_EQ(first[0], std::this_thread::get_id());
}

TEST(ThreadPool, PinnedJobWithFewerIndicesThanThreadsLeavesTheRestIdle) {
    attnlab::ThreadPool pool(4);
    std::vector<std::atomic<int>> runs(4);
    pool.parallel_for_pinned(2, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) runs[i].fetch_add(1);
        EXPECT_EQ(attnlab::thread_index(), lo);
    });
    EXPECT_EQ(runs[0].load() + runs[1].load(), 2);
    EXPECT_EQ(runs[2].load() + runs[3].load(), 0);
    pool.parallel_for_pinned(0, [&](std::size_t, std::size_t) { FAIL() << "no index, no call"; });
}

TEST(ThreadPool, PinnedJobRejectsMoreIndicesThanThreadsNamingBoth) {
    attnlab::ThreadPool pool(2);
    try {
        pool.parallel_for_pinned(3, [](std::size_t, std::size_t) {});
        FAIL() << "expected ConfigError";
    } catch (const attnlab::ConfigError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("3 indices"), std::string::npos) << what;
        EXPECT_NE(what.find("the pool has 2"), std::string::npos) << what;
    }
}

TEST(ThreadPool, PinnedJobRethrowsAndThePoolStaysUsable) {
    attnlab::ThreadPool pool(2);
    EXPECT_THROW(pool.parallel_for_pinned(2,
                                          [](std::size_t lo, std::size_t) {
                                              if (lo == 1) throw std::runtime_error("lane 1");
                                          }),
                 std::runtime_error);
    EXPECT_EQ(visit_counts(pool, 0, 9, 1), std::vector<int>(9, 1));
}

TEST(ThreadPool, PinnedJobInsideABodyRunsInlineOnThatThread) {
    ThreadCountGuard guard;
    attnlab::set_num_threads(2);
    std::atomic<int> inner{0};
    attnlab::parallel_for(0, 2, [&](std::size_t, std::size_t) {
        const std::thread::id here = std::this_thread::get_id();
        attnlab::parallel_for_pinned(2, [&](std::size_t lo, std::size_t hi) {
            EXPECT_EQ(lo, 0u);
            EXPECT_EQ(hi, 2u);
            EXPECT_EQ(std::this_thread::get_id(), here);
            inner.fetch_add(1);
        });
    });
    EXPECT_EQ(inner.load(), 2);
}

TEST(ThreadPool, ConstructorRejectsZeroThreads) { EXPECT_THROW(attnlab::ThreadPool(0), attnlab::ConfigError); }

}  // namespace
