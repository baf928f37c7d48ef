// The heap meter of bench_support.hpp: global operator new/delete of the benchmark binary, each
// block prefixed with its size, so peak-memory benchmarks can read what a call allocated
// (xtensor's containers and std::vector both allocate through operator new).
#include <atomic>
#include <cstdlib>
#include <new>

#include "bench_support.hpp"

namespace {

std::atomic<std::size_t> g_live{0}, g_peak{0};
constexpr std::size_t kHeader = 64;  // keeps every alignment up to 64 bytes

void* allocate(std::size_t size, std::size_t align) {
    if (align < kHeader) align = kHeader;
    void* raw = std::aligned_alloc(align, (size + align + align - 1) / align * align);
    if (!raw) throw std::bad_alloc();
    auto* user = static_cast<char*>(raw) + align;
    reinterpret_cast<std::size_t*>(user)[-1] = size;
    reinterpret_cast<std::size_t*>(user)[-2] = align;
    const std::size_t now = g_live.fetch_add(size) + size;
    std::size_t peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
    return user;
}

void release(void* p) noexcept {
    if (!p) return;
    auto* user = static_cast<char*>(p);
    const std::size_t size = reinterpret_cast<std::size_t*>(user)[-1];
    const std::size_t align = reinterpret_cast<std::size_t*>(user)[-2];
    g_live.fetch_sub(size);
    std::free(user - align);
}

}  // namespace

void* operator new(std::size_t size) { return allocate(size, kHeader); }
void* operator new[](std::size_t size) { return allocate(size, kHeader); }
void* operator new(std::size_t size, std::align_val_t align) { return allocate(size, std::size_t(align)); }
void* operator new[](std::size_t size, std::align_val_t align) { return allocate(size, std::size_t(align)); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }

namespace bench {
std::size_t heap_bytes() { return g_live.load(); }
std::size_t heap_peak_bytes() { return g_peak.load(); }
void reset_heap_peak() { g_peak.store(g_live.load()); }
}  // namespace bench
