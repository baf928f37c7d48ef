// attnlab/core/flop_counter.hpp: the multiply-adds the engine's products run, counted on request.
//
// What it is for: measuring the work of a forward or backward pass from the engine itself rather
// than from a formula (the `cost` experiment, article §3.2). Every product kernel — the blocked
// matmul (kernels/matmul.hpp) and the attention tiles of the flash path (kernels/flash_tiles.hpp)
// — reports the multiply-adds of each call with count_multiply_adds(); the count is kept only
// while a FlopScope is open. What is counted is what the kernel computes: a flash tile padded to
// its strip width counts its padding, a product the engine skips (a fully masked tile) counts
// nothing. One FLOP is half a multiply-add (FLOPs = 2 × multiply-adds, the usual convention).
// Not for: timing or elementwise work (softmax, layer norm, activations are not products).
//
// Off, a kernel call pays one relaxed atomic load. On, one relaxed atomic add per kernel call
// (not per element). The counter is process-wide and thread-safe: products run by the thread
// pool's workers count toward the scope their caller opened. Scopes may nest; two scopes open at
// once on different threads each see the other's products.
//
//   attnlab::FlopScope scope;
//   mha.forward(x, nullptr, options, nullptr, &cache, out);
//   std::uint64_t macs = scope.multiply_adds();   // 4·B·T·C² + 2·B·T·S·C for self-attention
#pragma once

#include <atomic>
#include <cstdint>

namespace attnlab {

namespace detail {
extern std::atomic<int> g_flop_scopes;              // open FlopScopes
extern std::atomic<std::uint64_t> g_multiply_adds;  // counted since the process started (while any scope was open)
}  // namespace detail

// Called by the product kernels: adds `macs` multiply-adds while a FlopScope is open.
inline void count_multiply_adds(std::uint64_t macs) {
    if (detail::g_flop_scopes.load(std::memory_order_relaxed) > 0) {
        detail::g_multiply_adds.fetch_add(macs, std::memory_order_relaxed);
    }
}

// Counts from construction until destruction (or the next reset()).
class FlopScope {
public:
    FlopScope();
    ~FlopScope();
    FlopScope(const FlopScope&) = delete;
    FlopScope& operator=(const FlopScope&) = delete;

    // Multiply-adds since the scope opened or was last reset.
    std::uint64_t multiply_adds() const;
    std::uint64_t flops() const { return 2 * multiply_adds(); }
    void reset();

private:
    std::uint64_t start_ = 0;
};

}  // namespace attnlab
