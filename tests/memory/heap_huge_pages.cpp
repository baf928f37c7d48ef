// use_huge_pages() marks the heap's new top for transparent huge pages (train/memory.hpp).
// Its own executable: the mark covers the range the heap grows into after the first call, so
// the check needs a process whose first call comes before any large allocation (in the main
// test binary, earlier tests leave free heap blocks below the mark that a new block may reuse).
#include "attnlab/train/memory.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/sanitizer_allocator.hpp"

namespace {

// The VmFlags line of the mapping that holds `address`, or "" if none does.
std::string vm_flags_at(const void* address) {
    std::ifstream smaps("/proc/self/smaps");
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        unsigned long begin = 0, end = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(' ') > line.find('-')) {
            inside = a >= begin && a < end;
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line;
        }
    }
    return "";
}

TEST(HeapHugePages, BlocksCarvedAfterTheFirstCallAreMarkedForHugePages) {
#if defined(__GLIBC__) && defined(__linux__)
    if (attnlab::testing::kSanitizerAllocator) GTEST_SKIP() << attnlab::testing::kSanitizerAllocatorReason;
    if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
        GTEST_SKIP() << "this kernel has no transparent huge pages";
    }
    if (!attnlab::use_huge_pages()) GTEST_SKIP() << "the kernel refused MADV_HUGEPAGE";
    constexpr std::size_t kBytes = std::size_t{16} << 20;  // below the 32 MiB mmap threshold: heap
    char* block = static_cast<char*>(std::malloc(kBytes));
    ASSERT_NE(block, nullptr);
    std::memset(block, 1, kBytes);
    const std::string flags = vm_flags_at(block + kBytes / 2);
    std::free(block);
    ASSERT_FALSE(flags.empty()) << "no mapping found for the block in /proc/self/smaps";
    EXPECT_NE(flags.find(" hg"), std::string::npos) << "the heap is not marked MADV_HUGEPAGE: " << flags;
#else
    GTEST_SKIP() << "huge pages are only requested from glibc on Linux";
#endif
}

}  // namespace
