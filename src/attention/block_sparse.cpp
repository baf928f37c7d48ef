#include "attnlab/attention/block_sparse.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {

std::size_t block_count(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// mix64 is SplitMix64's finaliser (Steele et al. 2014): a bijection on 64-bit words whose outputs of
// consecutive inputs are statistically independent.
std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The priority of key block j for query block i: lower is drawn first.
std::uint64_t random_priority(std::uint64_t seed, std::size_t i, std::size_t j) {
    return mix64(mix64(mix64(seed) ^ i) ^ j);
}

}  // namespace

void BlockSparseOptions::validate(const char* where) const {
    if (block_size == 0) fail<ConfigError>(where, ": block-sparse attention needs a block size > 0, got 0");
}

Mask2 sparse_layout(std::size_t t, std::size_t s, const BlockSparseOptions& options, bool causal) {
    options.validate("sparse_layout");
    const std::size_t b = options.block_size, rows = block_count(t, b), cols = block_count(s, b);
    Mask2 layout = Mask2::from_shape({rows, cols});  // (⌈T/b⌉, ⌈S/b⌉), 1 = live
    std::fill(layout.begin(), layout.end(), std::uint8_t{0});
    const std::size_t w = options.window_blocks, g = options.global_blocks;
    std::vector<std::pair<std::uint64_t, std::size_t>> dead;  // (priority, key block)
    for (std::size_t i = 0; i < rows; ++i) {
        std::uint8_t* row = layout.data() + i * cols;
        if (i < g) {  // a global query block sees every key block
            std::fill(row, row + cols, std::uint8_t{1});
            continue;
        }
        for (std::size_t j = 0; j < std::min(g, cols); ++j) row[j] = 1;  // every block sees the globals
        const std::size_t lo = i > w ? i - w : 0, hi = std::min(cols, i + std::min(w, cols) + 1);
        for (std::size_t j = lo; j < hi; ++j) row[j] = 1;
        if (options.random_blocks == 0) continue;
        const std::size_t candidates = causal ? std::min(cols, i + 1) : cols;
        dead.clear();
        for (std::size_t j = 0; j < candidates; ++j) {
            if (!row[j]) dead.emplace_back(random_priority(options.seed, i, j), j);
        }
        const std::size_t take = std::min(options.random_blocks, dead.size());
        std::partial_sort(dead.begin(), dead.begin() + static_cast<std::ptrdiff_t>(take), dead.end());
        for (std::size_t k = 0; k < take; ++k) row[dead[k].second] = 1;
    }
    return layout;
}

Mask2 expand_sparse_layout(const Mask2& layout, std::size_t block_size, std::size_t t, std::size_t s) {
    constexpr const char* where = "expand_sparse_layout";
    if (block_size == 0) fail<ConfigError>(where, ": block size must be > 0, got 0");
    if (layout.shape(0) != block_count(t, block_size) || layout.shape(1) != block_count(s, block_size)) {
        fail<ShapeError>(where, ": a layout for T=", t, ", S=", s, ", b=", block_size, " must be (",
                         block_count(t, block_size), ", ", block_count(s, block_size), "), got ",
                         shape_string(layout.shape()));
    }
    Mask2 mask = Mask2::from_shape({t, s});  // (T, S), 1 = hidden
    for (std::size_t i = 0; i < t; ++i)
        for (std::size_t j = 0; j < s; ++j) mask(i, j) = layout(i / block_size, j / block_size) ? 0 : 1;
    return mask;
}

double live_block_fraction(const Mask2& layout) {
    if (layout.size() == 0) return 0.0;
    std::size_t live = 0;
    for (std::uint8_t x : layout) live += x != 0;
    return static_cast<double>(live) / static_cast<double>(layout.size());
}

}  // namespace attnlab
