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

namespace attnlab {

enum class AttentionVariant { full, linear, block_sparse };

std::string_view attention_variant_name(AttentionVariant variant);
// ConfigError "unknown attention variant '<name>'; valid: full, linear, block_sparse".
AttentionVariant attention_variant_from_name(std::string_view name);

}  // namespace attnlab
