#include "attnlab/train/memory.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc
#include <cstring>

#include <gtest/gtest.h>

#include "support/sanitizer_allocator.hpp"

TEST(KeepFreedMemory, IsIdempotent) {
    if (attnlab::testing::kSanitizerAllocator) GTEST_SKIP() << attnlab::testing::kSanitizerAllocatorReason;
    const bool first = attnlab::keep_freed_memory();
    EXPECT_EQ(attnlab::keep_freed_memory(), first);
#if defined(__GLIBC__)
    EXPECT_TRUE(first) << "glibc rejected the mallopt settings";
#endif
}

TEST(KeepFreedMemory, LargeBlocksStillAllocateAndFree) {
    attnlab::keep_freed_memory();
    for (int i = 0; i < 3; ++i) {
        void* block = std::malloc(8u << 20);  // larger than glibc's default mmap threshold
        ASSERT_NE(block, nullptr);
        std::memset(block, 1, 8u << 20);
        std::free(block);
    }
}
