// tests/support/sanitizer_allocator.hpp: whether this test binary runs under a sanitizer that
// replaces malloc (AddressSanitizer, ThreadSanitizer). Their allocators ignore glibc's mallopt
// and never grow the heap with sbrk, so tests of train/memory.hpp's heap settings skip there.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATTNLAB_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ATTNLAB_SANITIZER_ALLOCATOR 1
#endif
#endif

#ifndef ATTNLAB_SANITIZER_ALLOCATOR
#define ATTNLAB_SANITIZER_ALLOCATOR 0
#endif

namespace attnlab::testing {
inline constexpr bool kSanitizerAllocator = ATTNLAB_SANITIZER_ALLOCATOR != 0;
inline constexpr const char* kSanitizerAllocatorReason =
    "a sanitizer replaces malloc here: glibc's mallopt and the sbrk heap are not in charge";
}  // namespace attnlab::testing
