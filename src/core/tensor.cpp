#include "attnlab/core/tensor.hpp"

#include <atomic>
#include <cmath>
#include <limits>

namespace attnlab {

void require_finite(const float* data, std::size_t n, const char* where, const char* what) {
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(data[i])) {
            fail<ValueError>(where, ": ", what, " contains a non-finite value (", data[i], ") at flat index ", i);
        }
    }
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
