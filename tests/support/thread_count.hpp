// tests/support/thread_count.hpp: run a test body on a given number of default-pool threads.
#pragma once

#include <cstddef>

#include "attnlab/core/thread_pool.hpp"

namespace attnlab::testutil {

// Sets the default pool's thread count for its scope and restores the previous one.
class ThreadCountScope {
public:
    explicit ThreadCountScope(std::size_t n) : saved_(num_threads()) { set_num_threads(n); }
    ~ThreadCountScope() { set_num_threads(saved_); }
    ThreadCountScope(const ThreadCountScope&) = delete;
    ThreadCountScope& operator=(const ThreadCountScope&) = delete;

private:
    std::size_t saved_;
};

}  // namespace attnlab::testutil
