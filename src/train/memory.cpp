#include "attnlab/train/memory.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc

#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__GLIBC__) && defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
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

#if defined(__GLIBC__) && defined(__linux__)
// Transparent huge pages for the heap the tensors come from. Where the kernel gives them only on
// request (transparent_hugepage = madvise, Debian's default), the heap is 4 KiB pages, and a
// training step that streams ~14 MiB of activations misses the TLB on every page. Here the heap
// grows by kHeapPad at once (M_TOP_PAD) and that not yet touched range is marked
// MADV_HUGEPAGE, so the blocks later carved from it are faulted in as 2 MiB pages (what
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1 does, which a process cannot set for itself): fewer TLB
// misses for the training step (docs/performance.md). The pad is address space: pages are faulted in as they are
// touched. Memory beyond it is ordinary pages; nothing changes where the kernel has no
// transparent huge pages (madvise fails, ignored). tests/memory/heap_huge_pages.cpp checks the
// mark.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr int kHeapPad = 256 << 20;

bool heap_in_huge_pages() {
    if (mallopt(M_TOP_PAD, kHeapPad) != 1) return false;
    void* probe = malloc(kHugePage);  // below the mmap threshold: from the heap, which grows by the pad
    if (!probe) return false;
    const auto from = (reinterpret_cast<std::uintptr_t>(probe) + kHugePage - 1) / kHugePage * kHugePage;
    const auto top = reinterpret_cast<std::uintptr_t>(sbrk(0));
    free(probe);
    if (top <= from + kHugePage) return false;
    return madvise(reinterpret_cast<void*>(from), (top - from) / kHugePage * kHugePage, MADV_HUGEPAGE) == 0;
}
#endif

bool apply() {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
#else
    return false;
#endif
}

bool apply_huge_pages() {
#if defined(__GLIBC__) && defined(__linux__)
    return keep_freed_memory() && heap_in_huge_pages();
#else
    return false;
#endif
}
}  // namespace

bool keep_freed_memory() {
    static const bool applied = apply();  // once, thread-safe
    return applied;
}

bool use_huge_pages() {
    static const bool applied = apply_huge_pages();  // once, thread-safe
    return applied;
}

}  // namespace attnlab
