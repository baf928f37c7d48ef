// attnlab/attention/mask.hpp: which keys each query may not attend to.
//
// What it is for: the three masks of article §6 — causal (no peeking at the future), key padding
// (ignore the padded tail of short sequences in a batch) and an explicit boolean mask — combined
// by logical OR: a key is hidden from a query if ANY component hides it — plus one additive
// component, score_bias (Swin's relative position bias and shifted-window mask, article §7.1),
// added to the scaled scores before the softmax.
//
// Masked scores become -infinity, not a large negative number such as -1e9 or -10000:
//  * exp(-inf) is exactly 0, so a masked weight is exactly 0, not merely tiny (the article's
//    invariant, tested bit-exactly), and no "large negative" value can overflow in fp16 (-1e9 is
//    -inf in half precision anyway, and -10000 is not small enough after scaling by large d_k).
//  * a row whose keys are ALL masked has max = -inf; the softmax kernel detects that and writes
//    zeros (zero weights, hence zero context) instead of exp(-inf - -inf) = NaN. With a large
//    negative constant such a row would silently become a uniform average over padding.
//
// Causal alignment: query i may see key j iff j <= i + (S - T) — bottom-right aligned. With
// S == T that is the usual lower triangle; with a KV cache (T new queries after S - T cached
// keys) each new query sees everything before it.
//
// Sliding window with global tokens (Longformer: Beltagy et al. 2020; article §5.3): with
// window = W > 0, query i may see key j only if |pos_i - pos_j| <= W, positions bottom-right
// aligned as above (pos_i = i + S - T, pos_j = j). Each row then has at most 2W + 1 visible keys
// (W + 1 with causal: a causal local window), so the useful work is O(T·W) instead of O(T·S);
// stacking L layers widens the receptive field to L·W. The first G = global_tokens positions are
// global: keys at positions < G are visible to every query and queries at positions < G see every
// key, which carries information across the whole sequence in two hops. Globals are exempt from
// the window only: causal, padding and the explicit mask still hide by the OR rule (a causal
// global query sees only keys before it). Globals are positions, not rows, so a
// KV-cached decoder and an uncached one mask the same pairs. global_tokens without a window is
// allowed and changes nothing (everything is visible already).
//
// Block layout (block-sparse attention, attention/block_sparse.hpp): with a block_layout of
// block size b, query i may see key j only if block_layout((i + block_row_offset) / b, j / b)
// is 1 (live). The offset places T new queries after cached ones (KV-cached generation: the
// layout is the whole sequence's, the offset the cached length); it is 0 otherwise.
// Score bias: score_bias (G, H, T, S) is added to batch row b's scaled scores of head h as
// bias[b % G][h] (G = 1: one bias for the batch; Swin: G = windows per image, so every image's
// window w shares bias[w]); an entry of -inf hides the pair like a boolean mask. It is not
// owned: the tensor must outlive the forward and the backward. The backward adds dL/dbias, the
// sum of the score gradients over the batch rows sharing a g, to *score_bias_grad (same shape)
// when it is non-null. Both the recorded path and every flash path honour it (the flash tiles
// add it where they apply the mask).
//
//   attnlab::AttentionMask mask;
//   mask.causal = true;
//   mask.key_padding = attnlab::padding_mask_from_lengths({5, 3}, 5);   // (B=2, S=5)
#pragma once

#include <cstddef>
#include <vector>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

struct AttentionMask {
    bool causal = false;
    Mask2 key_padding;    // (B, S), 1 = padding; empty (size 0) = none
    Mask2 explicit_mask;  // (T, S), 1 = masked, shared by the batch; empty = none
    std::size_t window = 0;         // W: 0 = no window; else hide keys with |pos_i - pos_j| > W
    std::size_t global_tokens = 0;  // G: positions < G are exempt from the window (see above)
    Mask2 block_layout;             // (>= ⌈(offset + T)/b⌉, ⌈S/b⌉), 1 = live block; empty = none
    std::size_t block_size = 0;     // b of block_layout
    std::size_t block_row_offset = 0;  // query i lies in layout row (i + offset) / b
    const Tensor4* score_bias = nullptr;  // (G, H, T, S) additive, see above; null = none
    Tensor4* score_bias_grad = nullptr;   // (G, H, T, S) backward adds dL/dscore_bias here; null = not wanted

    // True if any component is set.
    bool any() const {
        return causal || window > 0 || key_padding.size() > 0 || explicit_mask.size() > 0 || block_layout.size() > 0 ||
               score_bias != nullptr;
    }
    // True if no component but the causal flag is set (or none is).
    bool at_most_causal() const {
        return window == 0 && key_padding.size() == 0 && explicit_mask.size() == 0 && block_layout.size() == 0 &&
               score_bias == nullptr;
    }
    // True if the block layout alone hides key j from query i.
    bool outside_layout(std::size_t i, std::size_t j) const {
        return block_layout.size() > 0 && !block_layout((i + block_row_offset) / block_size, j / block_size);
    }
    // True if the window component alone hides key j from query i (T queries, S keys).
    bool outside_window(std::size_t i, std::size_t j, std::size_t t, std::size_t s) const;
    // Throws ShapeError naming `where` and both shapes if a component does not fit (B, T, S) and,
    // for score_bias and its gradient, H heads (heads = 0: not checked).
    void validate(std::size_t batch, std::size_t t, std::size_t s, const char* where, std::size_t heads = 0) const;
    // True if query i of batch b may not see key j.
    bool is_masked(std::size_t b, std::size_t i, std::size_t j, std::size_t t, std::size_t s) const;
    // scores: (T, S) with leading dimension ld; writes -inf where is_masked.
    void apply(float* scores, std::size_t b, std::size_t t, std::size_t s, std::size_t ld) const;
    // scores: (rows, cols) with leading dimension ld, the queries i0.. and keys j0.. of batch row
    // b, head h (S = the key count): += multiplier · score_bias[b % G][h] (a no-op without one).
    // The multiplier puts the bias in the units of the scores it is added to (1/scale for raw
    // q·kᵀ that are scaled later).
    void add_score_bias(float* scores, std::size_t b, std::size_t h, std::size_t i0, std::size_t rows,
                        std::size_t j0, std::size_t cols, std::size_t ld, float multiplier) const;
    // dscores: (B, H, T, S), the gradient of the loss w.r.t. the biased scores of every batch row
    // -> *score_bias_grad (G, H, T, S) += the sum over the rows b with b % G == g, in increasing b
    // (deterministic). A no-op when score_bias_grad is null.
    void accumulate_score_bias_grad(const float* dscores, std::size_t batch) const;
};

// lengths: (B) valid lengths -> (B, max_len) with 1 on positions >= length.
// Throws ValueError if a length exceeds max_len.
Mask2 padding_mask_from_lengths(const std::vector<std::size_t>& lengths, std::size_t max_len);

}  // namespace attnlab
