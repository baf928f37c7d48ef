// FlashAttention's tile geometry (flash/geometry.hpp): validation of a call's shapes and the
// query tile's height.
#include "geometry.hpp"

#include <string>

#include "attnlab/core/error.hpp"

namespace attnlab {

std::size_t flash_query_tile() {
    const std::size_t strip = kernels::flash_strip();
    return flash::ceil_div(kFlashQueryRows, strip) * strip;
}

namespace flash {
namespace {

// "(B, H, N, D)" of a view, for error messages.
std::string shape_of(const ConstHeadsView& x) {
    return "(" + std::to_string(x.batch) + ", " + std::to_string(x.heads) + ", " + std::to_string(x.n) + ", " +
           std::to_string(x.d) + ")";
}

}  // namespace

Dims validate(const ConstHeadsView& q, const ConstHeadsView& k, const ConstHeadsView& v, const AttentionMask& mask,
              const char* where) {
    if (k.batch != q.batch || k.d != q.d) {
        fail<ShapeError>(where, ": k (B, Hkv, S, D) must match q (B, H, T, D) = ", shape_of(q), ", got ", shape_of(k));
    }
    if (v.batch != k.batch || v.heads != k.heads || v.n != k.n) {
        fail<ShapeError>(where, ": v (B, Hkv, S, Dv) must match k ", shape_of(k), ", got ", shape_of(v));
    }
    if (k.heads == 0 || q.heads % k.heads != 0) {
        fail<ConfigError>(where, ": query heads (", q.heads, ") must be a multiple of key/value heads (", k.heads, ")");
    }
    mask.validate(q.batch, q.n, k.n, where, q.heads);
    return Dims{q.batch, q.heads, k.heads, q.heads / k.heads, q.n, k.n, q.d, v.d,
                static_cast<std::ptrdiff_t>(k.n) - static_cast<std::ptrdiff_t>(q.n)};
}

Dims validate(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask, const char* where) {
    const auto batch = static_cast<std::ptrdiff_t>(q.shape(0)), d = static_cast<std::ptrdiff_t>(q.shape(3));
    require_shape(k, {batch, -1, -1, d}, where, "k (B, Hkv, S, D) matching q (B, H, T, D)");
    require_shape(v, {batch, static_cast<std::ptrdiff_t>(k.shape(1)), static_cast<std::ptrdiff_t>(k.shape(2)), -1},
                  where, "v (B, Hkv, S, Dv) matching k");
    return validate(heads_of(q), heads_of(k), heads_of(v), mask, where);
}

void require_heads(const ConstHeadsView& x, std::size_t batch, std::size_t heads, std::size_t n, std::size_t d,
                   const char* where, const char* what) {
    if (x.batch != batch || x.heads != heads || x.n != n || x.d != d) {
        fail<ShapeError>(where, ": ", what, " must be (", batch, ", ", heads, ", ", n, ", ", d, "), got ", shape_of(x));
    }
}

std::size_t query_tile_rows(const AttentionMask& mask) {
    const std::size_t rows = flash_query_tile(), b = mask.block_size;
    if (mask.block_layout.size() == 0 || b >= rows || b % kernels::flash_strip() != 0 ||
        mask.block_row_offset % b != 0) {
        return rows;
    }
    return b;
}

}  // namespace flash
}  // namespace attnlab
