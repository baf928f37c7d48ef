// attnlab/attention/variant.hpp: which attention mechanism a layer computes.
//
// What it is for: the article's §5.3 alternatives to O(n²) attention as one switch beside the
// masks. `full` is scaled dot-product attention over every key a query may see (the masks and
// the sliding window restrict it); `linear` replaces softmax(q·kᵀ) by a kernel feature map,
// φ(q)·φ(k)ᵀ, whose sums can be formed once (Katharopoulos et al. 2020); `block_sparse` keeps a
// block layout of local, global and random key blocks (BigBird, Zaheer et al. 2020).
// Not for: the normaliser of full attention's scores (softmax by default).
//
//   attnlab::AttentionVariant v = attnlab::attention_variant_from_name("linear");
//   std::string_view name = attnlab::attention_variant_name(v);   // "linear"
#pragma once

#include <string_view>

#include "attnlab/core/choice.hpp"

namespace attnlab {

#define ATTNLAB_ATTENTION_VARIANT_VALUES(X)                                                           \
    X(full, "scaled dot-product attention over every key the masks leave")                           \
    X(linear, "phi(q) . phi(k), phi = elu + 1 (Katharopoulos et al. 2020): O(T) time, constant state") \
    X(block_sparse, "local, global and random key blocks (BigBird layout, attention/block_sparse.hpp)")
ATTNLAB_CHOICE(AttentionVariant, "attention variant", ATTNLAB_ATTENTION_VARIANT_VALUES,
               "the attention mechanism (article section 5.3)")

// ConfigError "unknown attention variant '<name>'; valid: full, linear, block_sparse".
inline std::string_view attention_variant_name(AttentionVariant variant) { return choice_name(variant); }
inline AttentionVariant attention_variant_from_name(std::string_view name) {
    return choice_from_name<AttentionVariant>(name);
}

}  // namespace attnlab
