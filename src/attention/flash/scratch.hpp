// src/attention/flash/scratch.hpp (private): the scratch memory of FlashAttention's pool tasks:
// each task's tile buffers in its thread's slot of the call's TileSlots (task_slots.hpp), carved
// into named spans (ForwardScratch, BackwardScratch) and counted while in use.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "../task_slots.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "geometry.hpp"

namespace attnlab::flash {

// Counts tile scratch alive at once over all threads of one call (FlashAttentionStats).
class ScratchMeter {
public:
    void acquire(std::size_t bytes) {
        const std::size_t now = live_.fetch_add(bytes) + bytes;
        std::size_t peak = peak_.load();
        while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
        }
    }
    void release(std::size_t bytes) { live_.fetch_sub(bytes); }
    std::size_t peak() const { return peak_.load(); }

private:
    std::atomic<std::size_t> live_{0}, peak_{0};
};

enum : int { kTileBuffer = kFlashBuffers, kPackedBuffer, kDeltaBuffer };
using TileSlots = TaskSlots<kTileBuffer>;

// Floats of packing scratch the tile products need: B panels of (N <= BC, K <= max(D, Dv)) or
// (N <= max(D, Dv), K <= BC).
inline std::size_t tile_matmul_floats(const Dims& dm) {
    const std::size_t w = std::max(dm.d, dm.dv);
    return std::max(kernels::matmul_scratch_floats(BC, w), kernels::matmul_scratch_floats(w, BC));
}

// One task's tile buffers (its thread's slot), counted by the meter while in use.
class TileScratch {
public:
    TileScratch(ScratchMeter& meter, const TileSlots& slots)
        : meter_(meter), bytes_(slots.floats() * sizeof(float)), data_(slots.slot()),
          matmul_(data_ + slots.tile_floats()) {
        meter_.acquire(bytes_);
    }
    ~TileScratch() { meter_.release(bytes_); }
    TileScratch(const TileScratch&) = delete;
    TileScratch& operator=(const TileScratch&) = delete;
    float* data() { return data_; }
    // Packing scratch for the task's matmul calls.
    float* matmul() { return matmul_; }

private:
    ScratchMeter& meter_;
    std::size_t bytes_;
    float* data_;
    float* matmul_;
};

// A run of floats inside a task's scratch (what std::span<float> is in C++20).
struct FloatSpan {
    float* ptr = nullptr;
    std::size_t len = 0;
    float* data() const { return ptr; }
    std::size_t size() const { return len; }
    float* begin() const { return ptr; }
    float* end() const { return ptr + len; }
};

// Hands out consecutive spans of a task's scratch slot, in the order asked. With a null slot it
// only adds up their sizes (used()), which is how a call sizes its TileSlots.
class ScratchCarver {
public:
    explicit ScratchCarver(float* slot) : slot_(slot) {}
    FloatSpan take(std::size_t floats) {
        const FloatSpan span{slot_ ? slot_ + used_ : nullptr, floats};
        used_ += floats;
        return span;
    }
    std::size_t used() const { return used_; }

private:
    float* slot_;
    std::size_t used_ = 0;
};

}  // namespace attnlab::flash
