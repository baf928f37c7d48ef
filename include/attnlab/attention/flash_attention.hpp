// attnlab/attention/flash_attention.hpp: tiled scaled dot-product attention that never holds
// more than one tile of the (T, S) score matrix (FlashAttention: Dao et al. 2022; the backward's
// work split follows FlashAttention-2, Dao 2023).
//
// What it is for: the same function as scaled_dot_product_attention (same inputs, masks, scale
// options, grouped-query heads; results equal to 1e-5), in O(T) extra memory instead of
// O(T·S), and faster because each score tile stays in cache. Queries are cut into tiles of
// flash_query_tile() rows and keys into tiles of kFlashKeyTile; per query tile, an online softmax
// (running max m and sum l per query) rescales the partial output as each key tile arrives
// (the forward stores a score tile keys by queries, so these run down its columns):
//   s = q_i·k_jᵀ·scale (masked -> -inf),  m' = max(m, rowmax s),  p = exp(s - m'),
//   l = exp(m - m')·l + rowsum p,          o = exp(m - m')·o + p·v_j,     finally o /= l.
// Where the kernel table prefers it (WebAssembly), key tiles after the first take p against the
// reference m of the tiles before, inside the score product (no pass over the stored scores),
// and m moves only when a tile's max exceeds it by more than a margin (FlashAttentionStats::lazy_tiles).
// Causal tiles above the diagonal are skipped, and so are tiles wholly outside a sliding window
// (AttentionMask::window; no global row or key in the tile). A row with no visible key gets
// zeros (never NaN) and logsumexp -inf. The backward recomputes each tile from q, k, v and the per-row
// logsumexp = m + log(l) (B, H, T) that the forward returns, with delta = rowsum(dO ⊙ O), so it
// too never holds the (T, S) matrix.
// With the sigmoid or relu normaliser (attention/normalizer.hpp) no row is normalised, so there
// is no online softmax: per key tile w = f(scale·q_i·k_jᵀ) with the row's n_i, o += w·v_j; the
// backward recomputes w per tile and takes ds = scale·f'(w) ⊙ (dO·vᵀ) (no logsumexp, no delta).
// Not for: observing stages (no scores or weights exist to record: scaled_dot_product_attention
// picks the recorded "math" path when a StageObserver asks for them, see can_use_flash).
//
//   attnlab::AttentionMask mask; mask.causal = true;
//   attnlab::Tensor3 lse;                                                   // (B, H, T)
//   attnlab::Tensor4 ctx = attnlab::flash_attention_forward(q, k, v, mask, {}, &lse);
//   attnlab::Tensor4 dq, dk, dv;
//   attnlab::flash_attention_backward(dctx, q, k, v, ctx, lse, mask, {}, dq, dk, dv);
#pragma once

#include <cstddef>

#include "attnlab/attention/heads.hpp"
#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

// Tile shape: a (flash_query_tile(), kFlashKeyTile) score tile of floats fits the L1 cache.
inline constexpr std::size_t kFlashKeyTile = 128;
// Query rows of a tile for the active kernel table: kFlashQueryRows rounded up to a whole
// number of the tile kernels' query strips (kernels::flash_strip()), so no strip is padding:
// 48 with SSE2, AVX2 and WebAssembly (strips of 8, 16 and 8), 64 with AVX-512 (one strip of
// 64, of which 48 rows would leave a quarter padding). Tiles of 32 to 64 rows run alike where
// the strips allow them (docs/performance.md).
inline constexpr std::size_t kFlashQueryRows = 48;
std::size_t flash_query_tile();

// What a call used besides its inputs and outputs (test-visible; see the memory tests).
struct FlashAttentionStats {
    std::size_t peak_scratch_bytes = 0;  // tile buffers alive at once, over all threads
    std::size_t row_stat_bytes = 0;      // per-row vectors: logsumexp (forward), delta (backward)
    // Forward with more than one key tile: K (and V unless its rows are a whole number of
    // strips) packed once per (batch, kv head) for the tile kernels (kernels/flash_tiles.hpp);
    // backward with more than one key tile: K and V. About the size of K and V themselves:
    // linear in S. 0 when all keys fit one tile (each tile product then reads them in place).
    std::size_t packed_bytes = 0;
    // Forward key tiles (one query tile each) taken by the lazy-reference kernels (where the
    // active kernel table prefers them, kernels::flash_lazy_exp(): after a query tile's first
    // key tile, when no mask hides a pair of the tile, the exponentials are taken in the score
    // product against the previous tiles' reference m); of them, the query rows whose scores rose
    // more than the margin above m (their p rescaled), and the tiles recomputed by the two-pass
    // kernels (a rise too large to rescale, or a row with no reference yet).
    std::size_t lazy_tiles = 0;
    std::size_t lazy_rescaled_rows = 0;
    std::size_t lazy_recomputed_tiles = 0;
};

// q: (B, H, T, D), k: (B, Hkv, S, D), v: (B, Hkv, S, Dv) -> context (B, H, T, Dv).
// Writes logsumexp (B, H, T) when non-null (the backward needs it; with sigmoid or relu it holds
// ln n_i, the log of each row's visible key count: -inf for a row that sees none). H % Hkv == 0.
// Throws ShapeError / ConfigError naming the shapes, like scaled_dot_product_attention.
Tensor4 flash_attention_forward(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask = {},
                                const ScaleOptions& scale = {}, Tensor3* logsumexp = nullptr,
                                FlashAttentionStats* stats = nullptr);
// The same, writing into `context` (resized; its buffer is kept when the shape is unchanged, so
// a training loop that passes the same tensor each step allocates nothing). Its packed keys and
// tile buffers are per-thread and grow-only, for the same reason.
void flash_attention_forward(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                             const ScaleOptions& scale, Tensor3* logsumexp, FlashAttentionStats* stats,
                             Tensor4& context, Tensor2* one_tile_weights = nullptr,
                             Normalizer normalizer = Normalizer::softmax);
// one_tile_weights (optional, for the backward): when the call takes the fused one-tile path
// (all keys in one tile, no mask but a causal one, keys and head dims the fused kernels take:
// the tiny models' training), resized to (B·H·T, kOneTileLd) and filled with the softmax
// weights, row (b·H + h)·T + i holding query i's weights over keys [0, S) (0 for masked keys);
// otherwise resized to no rows. Given back to flash_attention_backward, it lets the backward
// read the weights instead of recomputing q·kᵀ and exp: O(B·H·T·kOneTileLd) memory to save
// the backward's score product and exponentials.

// Backward of flash_attention_forward (same q, k, v, mask, scale; context and logsumexp from it):
//   p = exp(scale·q·kᵀ - lse) per tile, dv += pᵀ·dO, dp = dO·vᵀ, ds = p ⊙ (dp - delta)·scale,
//   dq += ds·k, dk += dsᵀ·q.
// dk and dv are accumulated by one task per (batch, kv head, key tile), dq by one task per
// (batch, head, query tile): no two threads write one element, and each element's sum runs in a
// fixed order, so results are bit-identical for any thread count. When all keys fit one tile
// (S <= kFlashKeyTile, as in the tiny models' training), the dk/dv task also writes dq, and
// s and dp are computed once instead of twice (five tile products instead of seven).
// dcontext: (B, H, T, Dv) -> dq: (B, H, T, D), dk: (B, Hkv, S, D), dv: (B, Hkv, S, Dv)
// (overwritten, resized as needed).
// one_tile_weights: the forward's (see above), or null; used when it holds the call's B·H·T
// rows and the backward takes the fused one-tile path, ignored otherwise.
// normalizer: the forward's (softmax by default).
void flash_attention_backward(const Tensor4& dcontext, const Tensor4& q, const Tensor4& k, const Tensor4& v,
                              const Tensor4& context, const Tensor3& logsumexp, const AttentionMask& mask,
                              const ScaleOptions& scale, Tensor4& dq, Tensor4& dk, Tensor4& dv,
                              FlashAttentionStats* stats = nullptr, const Tensor2* one_tile_weights = nullptr,
                              Normalizer normalizer = Normalizer::softmax);

// The same two on heads addressed by strides (attention/heads.hpp), e.g. heads_in_rows of the
// projections' (B, T, H·D) rows: no split_heads before or merge_heads after (what
// MultiHeadAttention does on its flash path). The views must have the shapes above (ShapeError
// otherwise); the outputs' memory must already hold them and must not overlap the inputs.
// Results are bit-identical to the Tensor4 calls on the split heads.
void flash_attention_forward(const ConstHeadsView& q, const ConstHeadsView& k, const ConstHeadsView& v,
                             const AttentionMask& mask, const ScaleOptions& scale, Tensor3* logsumexp,
                             FlashAttentionStats* stats, const HeadsView& context,
                             Tensor2* one_tile_weights = nullptr, Normalizer normalizer = Normalizer::softmax);
void flash_attention_backward(const ConstHeadsView& dcontext, const ConstHeadsView& q, const ConstHeadsView& k,
                              const ConstHeadsView& v, const ConstHeadsView& context, const Tensor3& logsumexp,
                              const AttentionMask& mask, const ScaleOptions& scale, const HeadsView& dq,
                              const HeadsView& dk, const HeadsView& dv, FlashAttentionStats* stats = nullptr,
                              const Tensor2* one_tile_weights = nullptr, Normalizer normalizer = Normalizer::softmax);

}  // namespace attnlab
