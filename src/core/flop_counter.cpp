#include "attnlab/core/flop_counter.hpp"

namespace attnlab {

namespace detail {
std::atomic<int> g_flop_scopes{0};
std::atomic<std::uint64_t> g_multiply_adds{0};
}  // namespace detail

FlopScope::FlopScope() {
    detail::g_flop_scopes.fetch_add(1, std::memory_order_acq_rel);
    start_ = detail::g_multiply_adds.load(std::memory_order_acquire);
}

FlopScope::~FlopScope() { detail::g_flop_scopes.fetch_sub(1, std::memory_order_acq_rel); }

std::uint64_t FlopScope::multiply_adds() const {
    return detail::g_multiply_adds.load(std::memory_order_acquire) - start_;
}

void FlopScope::reset() { start_ = detail::g_multiply_adds.load(std::memory_order_acquire); }

}  // namespace attnlab
