// attnlab/train/memory.hpp: how a training loop's memory is recycled between steps.
//
// What it is for: code that creates and frees the same large tensors over and over (0.5-2 MiB
// each for the tiny encoder): an evaluation loop, forward() calls that return new tensors, a
// Trainer sampling its batches. glibc's malloc serves blocks that large with fresh mmaps, or
// trims the freed top of its heap, so each round page-faults the same memory back in: for a
// loop that allocates its activations, the kernel clearing pages can take a fifth of a
// tiny-encoder step on 1 thread, and more on 2 threads, whose faults serialise on the process's
// memory map. keep_freed_memory() asks the C library to keep freed blocks for reuse instead
// (glibc: mallopt M_MMAP_THRESHOLD and M_TRIM_THRESHOLD). The process keeps its peak heap
// mapped, as any caching allocator does. Elsewhere it does nothing (WebAssembly's heap never
// shrinks anyway). use_huge_pages() (Linux with glibc) also grows the heap by 256 MiB of address
// space at once and marks that range MADV_HUGEPAGE, so the tensors carved from it afterwards are
// backed by 2 MiB pages where the kernel hands them out on request, Debian's default: fewer TLB
// misses for a training step that streams its ~14 MiB of activations (docs/performance.md).
// The process's memory then grows in 2 MiB steps.
//
// The training step itself (zero_grad, loss_and_backward, an optimizer step with views built
// once) allocates nothing after its first steps: its activations, gradients and scratch live in
// the model's caches and are reused (tests/alloc/step_allocations.cpp counts operator new).
//
// Trainer calls both on construction; call them yourself before a hand-written training loop.
// Not for: limiting memory (see core/tensor.hpp's allocation budget).
//
//   attnlab::keep_freed_memory();
//   attnlab::use_huge_pages();
//   const auto params = model.parameters(), grads = model.gradients();  // views, built once
//   for (int i = 0; i < steps; ++i) { model.zero_grad(); model.loss_and_backward(...); opt.step(params, grads, lr); }
#pragma once

namespace attnlab {

// Idempotent and thread-safe. Returns true when the C library accepted the settings.
bool keep_freed_memory();
// Idempotent and thread-safe; calls keep_freed_memory(). Returns true when the heap's new range
// was marked for huge pages (false where there is no glibc on Linux, or the kernel refuses).
bool use_huge_pages();

}  // namespace attnlab
