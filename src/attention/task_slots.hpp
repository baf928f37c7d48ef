// src/attention/task_slots.hpp (private): per-thread scratch of the attention kernels' pool
// tasks, owned by the thread that calls the kernel.
//
// A training step asks for the same sizes every step, so grow-only buffers allocate nothing
// after the first step, provided each buffer belongs to a thread that does the same work every
// step. A pool worker's own thread_local would not: it grows the first time that worker happens
// to take such a task, which can be any step. So the calling thread holds one slot per pool
// thread, and a task uses the slot of the thread that runs it (thread_index()).
//
//   const TaskSlots<kMyBuffer> slots(t * s, kernels::matmul_scratch_floats(n, k));
//   parallel_for(0, tasks, [&](std::size_t begin, std::size_t end) {
//       float* tile = slots.slot();                     // (t, s) of this thread
//       float* packing = tile + slots.tile_floats();    // the matmul calls' B panel
//   });
#pragma once

#include <cstddef>
#include <vector>

#include "attnlab/core/thread_pool.hpp"

namespace attnlab {

// A grow-only buffer per thread and purpose (distinct Purpose values never share one).
template <int Purpose>
float* thread_buffer(std::size_t floats) {
    thread_local std::vector<float> buffer;
    if (buffer.size() < floats) buffer.resize(floats);
    return buffer.data();
}

// Purposes in use: flash attention's start at kFlashBuffers, the recorded path's below it;
// kVisibleCounts holds sigmoid's and relu's n_i (B, T) for the call (both paths, one at a time).
enum : int { kMathTaskBuffer = 0, kVisibleCounts = 1, kFlashBuffers = 16 };
// A thread outside the default pool (thread_index() past its slots) gets a buffer of its own.
constexpr int kFallbackPurposeOffset = 1000;

template <int Purpose>
class TaskSlots {
public:
    // tile_floats for the task's own buffers, then room for the B panel of its small products
    // (the matmul kernels pack into it instead of into a buffer of the worker's own).
    TaskSlots(std::size_t tile_floats, std::size_t matmul_floats)
        : tile_floats_((tile_floats + 15) / 16 * 16),
          floats_((tile_floats_ + matmul_floats + 15) / 16 * 16),  // whole cache lines per slot
          slots_(num_threads()),
          base_(thread_buffer<Purpose>(floats_ * slots_)) {}
    std::size_t floats() const { return floats_; }
    std::size_t tile_floats() const { return tile_floats_; }
    // The running thread's slot.
    float* slot() const {
        const std::size_t i = thread_index();
        return i < slots_ ? base_ + i * floats_ : thread_buffer<Purpose + kFallbackPurposeOffset>(floats_);
    }

private:
    std::size_t tile_floats_, floats_, slots_;
    float* base_;
};

}  // namespace attnlab
