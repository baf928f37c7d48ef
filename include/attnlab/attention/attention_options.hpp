// attnlab/attention/attention_options.hpp: the switches of one attention call, and their field
// table.
//
// What it is for: AttentionOptions is what MultiHeadAttention::forward / backward (and the
// scaled dot-product and flash paths under them) read per call: the mask, the scale, the
// variant, RoPE, the normaliser, the emulated number format. Its field table
// (ATTNLAB_ATTENTION_OPTION_FIELDS) names each field once for the JavaScript options of
// MultiHeadAttention.forward / trace / backward and the walkthrough's calls
// (web/bindings/attention_options.cpp), the flags of `attnlab demo` (src/cli/demo.cpp) and the
// TypeScript AttentionOptions (scripts/gen_types.mjs), which all derive from it, like
// ModelConfig's table (model/config_fields.hpp).
// Not for: the layer's shape (MultiHeadAttentionConfig) or inputs that are not options of the
// layer: additive positions (the caller adds them to x; JavaScript's `positional`, which also
// sets `rope`) and cross-attention's memory.
//
//   attnlab::AttentionOptions opt;
//   opt.mask.causal = true; opt.normalizer = attnlab::Normalizer::sigmoid;
//   attnlab::for_each_attention_option(opt, [](const attnlab::AttentionOptionField& f, const auto& value) {
//       std::printf("%s = %s\n", f.js, attnlab::format_field(value).c_str());   // model/field_text.hpp
//   });
#pragma once

#include <cstddef>

#include "attnlab/attention/block_sparse.hpp"
#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/normalizer.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/attention/variant.hpp"
#include "attnlab/core/numeric_format.hpp"
#include "attnlab/posenc/rope.hpp"

namespace attnlab {

// Per-call switches.
struct AttentionOptions {
    AttentionMask mask;
    ScaleOptions scale;
    AttentionVariant variant = AttentionVariant::full;  // attention/variant.hpp
    // With variant block_sparse: the layout's options (attention/block_sparse.hpp). The layout
    // is built per call for (T, S), random blocks drawn among j <= i when mask.causal, and
    // joins the mask (AttentionMask::block_layout). Refused with it: a window (mask.window).
    BlockSparseOptions block_sparse;
    bool rope = false;                   // rotate q and k per head (posenc/rope.hpp)
    double rope_base = kRopeDefaultBase;
    std::size_t position_offset = 0;     // absolute position of the first query (and key) row
    bool check_finite = false;           // throw ValueError on NaN/Inf in x or memory
    Normalizer normalizer = Normalizer::softmax;  // weights = softmax, sigmoid or relu (normalizer.hpp)
    // Number format emulation (core/numeric_format.hpp): q, k, v (and after RoPE), the stages of
    // scaled_dot_product_attention, concat and output rounded when stored; in backward dconcat,
    // the attention gradients, dq, dk, dv and dx. Anything but plain float32 takes the recorded
    // path (split heads and scaled_dot_product_attention's math path), never the flash path.
    PrecisionOptions precision;
};

// ---- The field table ----
// Every AttentionOptions field a caller sets by name, once: X(member, JS option, CLI flag, flags,
// doc). The default is the struct's own (AttentionOptions{}).
//   member     the field, a path into AttentionOptions ("mask.causal")
//   JS option  the camelCase key of the JavaScript calls' options
//   CLI flag   the flag of `attnlab demo`, or nullptr; a bool's flag is a switch that sets the
//              opposite of its default
//   flags      kBlockSparseOnly: refused unless variant is block_sparse; kFromTensor: a mask,
//              read from a JavaScript tensor by the caller, which knows x's rank
//   doc        what the field means (a choice's values come from its table, core/choice.hpp)
// Not in the table: score_bias (a model's Swin bias), the block layout (built from block_sparse)
// and rope (set from the caller's positional option). A new field is one line here, with its
// member above; a field of a choice type needs nothing more.
#define ATTNLAB_ATTENTION_OPTION_FIELDS(X)                                                                             \
    X(mask.causal, "causal", nullptr, 0, "hide future keys: query i sees keys j <= i + S - T (bottom-right aligned)") \
    X(mask.key_padding, "keyPaddingMask", nullptr, kFromTensor,                                                        \
      "(B, S), 1 = padded key; (S) also accepted for unbatched x")                                                    \
    X(mask.explicit_mask, "attnMask", nullptr, kFromTensor, "(T, S), 1 = a forbidden (query, key) pair, shared by the batch") \
    X(mask.window, "window", nullptr, 0,                                                                              \
      "sliding window (Longformer): hide keys more than this many positions away; 0 = none")                         \
    X(mask.global_tokens, "globalTokens", nullptr, 0,                                                                 \
      "with window: the first positions see every key and are seen by every query")                                   \
    X(scale, "scale", "scale", 0,                                                                                     \
      "the scores' factor: 1/sqrt(D) (JavaScript true, the command line's auto), none (false, off) or this number") \
    X(variant, "variant", nullptr, 0, "the attention mechanism (article section 5.3)")                                \
    X(block_sparse.block_size, "blockSize", nullptr, kBlockSparseOnly, "block_sparse: b, positions per block (> 0)")   \
    X(block_sparse.window_blocks, "windowBlocks", nullptr, kBlockSparseOnly,                                           \
      "block_sparse: w, query block i sees key blocks i-w .. i+w")                                                    \
    X(block_sparse.global_blocks, "globalBlocks", nullptr, kBlockSparseOnly,                                           \
      "block_sparse: g, the first g blocks see and are seen by every block")                                          \
    X(block_sparse.random_blocks, "randomBlocks", nullptr, kBlockSparseOnly,                                           \
      "block_sparse: r, extra random key blocks per query block (causal: among blocks j <= i)")                       \
    X(block_sparse.seed, "sparseSeed", nullptr, kBlockSparseOnly, "block_sparse: seed of the random blocks' draw")      \
    X(rope_base, "ropeBase", nullptr, 0, "RoPE base")                                                                  \
    X(position_offset, "positionOffset", nullptr, 0, "absolute position of the first query (and key) row")            \
    X(check_finite, "checkFinite", nullptr, 0, "an Error on NaN or Inf in x or memory")                               \
    X(normalizer, "normalizer", "normalizer", 0,                                                                      \
      "weights from the scaled, masked scores s (n_i = keys query i may see); masked keys weigh 0")                   \
    X(precision.format, "precision", "precision", 0,                                                                  \
      "emulate this number format: every stored stage (and in backward every gradient) rounded to it, products "     \
      "accumulated in fp32 (article section 6.3)")                                                                    \
    X(precision.softmax, "softmaxPrecision", "softmax-precision", 0, "with fp16/bf16: where the softmax computes")     \
    X(precision.stable_softmax, "stableSoftmax", "unstable-softmax", 0,                                               \
      "subtract each row's max before exp; false is the naive exp(s)/sum exp(s), which overflows fp16 for scores "   \
      "above 11.09")

// AttentionOptionField::flags
inline constexpr unsigned kBlockSparseOnly = 1;  // refused unless variant is block_sparse
inline constexpr unsigned kFromTensor = 2;       // a mask: converted by the caller

// One row of the table.
struct AttentionOptionField {
    const char* name;  // the member's path: "mask.causal"
    const char* js;    // JavaScript option
    const char* cli;   // `attnlab demo` flag, or nullptr
    unsigned flags;    // kBlockSparseOnly | kFromTensor
    const char* doc;
};

// The table's rows, in its order.
inline constexpr AttentionOptionField kAttentionOptionFields[] = {
#define ATTNLAB_ATTENTION_OPTION_ROW(member, js, cli, flags, doc) {#member, js, cli, flags, doc},
    ATTNLAB_ATTENTION_OPTION_FIELDS(ATTNLAB_ATTENTION_OPTION_ROW)
#undef ATTNLAB_ATTENTION_OPTION_ROW
};

// Calls f(const AttentionOptionField&, member) for every row in the table's order; the member
// is const for const options.
template <class Options, class F>
void for_each_attention_option(Options& options, F&& f) {
    std::size_t i = 0;
#define ATTNLAB_ATTENTION_OPTION_VISIT(member, js, cli, flags, doc) f(kAttentionOptionFields[i++], options.member);
    ATTNLAB_ATTENTION_OPTION_FIELDS(ATTNLAB_ATTENTION_OPTION_VISIT)
#undef ATTNLAB_ATTENTION_OPTION_VISIT
}

}  // namespace attnlab
