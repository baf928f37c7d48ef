#include "attnlab/core/tensor.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "attnlab/core/thread_pool.hpp"

namespace attnlab {

void require_finite(const float* data, std::size_t n, const char* where, const char* what) {
    // A float is Inf or NaN exactly when its 8 exponent bits are all ones. Block by block, OR
    // together whether each element's are (integer ops, which vectorise; an early-exit isfinite
    // loop does not, and would be a serial stretch of a training step); the element loop
    // runs only for a block that has one, to name the first.
    constexpr std::size_t kBlock = 1024;
    for (std::size_t b = 0; b < n; b += kBlock) {
        const std::size_t end = std::min(n, b + kBlock);
        std::uint32_t any = 0;
        for (std::size_t i = b; i < end; ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, data + i, sizeof bits);
            any |= (~bits & 0x7f800000u) == 0u;
        }
        if (!any) continue;
        for (std::size_t i = b; i < end; ++i) {
            if (!std::isfinite(data[i])) {
                fail<ValueError>(where, ": ", what, " contains a non-finite value (", data[i], ") at flat index ", i);
            }
        }
    }
}

void parallel_copy(const float* src, std::size_t n, float* dst) {
    constexpr std::size_t kGrain = std::size_t{1} << 15;  // 128 KiB a chunk
    parallel_for(
        0, n,
        [&](std::size_t begin, std::size_t end) {
            std::memcpy(dst + begin, src + begin, (end - begin) * sizeof(float));
        },
        kGrain);
}

namespace {
std::atomic<std::size_t> g_max_elements{std::size_t{1} << 28};  // 2^28 floats = 1 GiB
}

std::size_t max_tensor_elements() { return g_max_elements.load(); }
void set_max_tensor_elements(std::size_t n) {
    if (n == 0) fail<ConfigError>("set_max_tensor_elements: the budget must be positive, got 0");
    g_max_elements.store(n);
}

void require_allocatable(std::initializer_list<std::size_t> extents, const char* where, const char* what) {
    std::size_t total = 1;
    for (std::size_t e : extents) {
        if (e != 0 && total > std::numeric_limits<std::size_t>::max() / e) {
            fail<ValueError>(where, ": ", what, " would overflow the address space");
        }
        total *= e;
    }
    if (total > max_tensor_elements()) {
        fail<ValueError>(where, ": ", what, " needs ", total, " floats (", total * sizeof(float) / (1024 * 1024),
                         " MiB), over the budget of ", max_tensor_elements(), " floats");
    }
}

}  // namespace attnlab
