#include "attnlab/train/memory.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnlab {

namespace {
#if defined(__GLIBC__)
// Blocks below this come from the heap, where freed ones are reused, not from fresh mmaps.
// glibc's largest accepted value on 64-bit (HEAP_MAX_SIZE / 2); setting it also stops glibc
// from moving the threshold by itself.
constexpr int kMmapThreshold = 32 << 20;
// Freed memory at the top of the heap is returned to the system only above this much.
constexpr int kTrimThreshold = 512 << 20;
#endif

bool apply() {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
#else
    return false;
#endif
}
}  // namespace

bool keep_freed_memory() {
    static const bool applied = apply();  // once, thread-safe
    return applied;
}

}  // namespace attnlab
