// web/bindings/attention_options.hpp: the JavaScript options of one attention call, read from
// AttentionOptions' field table (attention/attention_options.hpp).
//
// What it is for: MultiHeadAttention.forward / trace / backward, lab.sparseLayout and the
// walkthrough's calls (lab.attentionGradients, attentionStats, kvCacheSteps) accept the
// table's options (each call all of them or a subset), read by one loop instead of by hand;
// plus the two inputs the table does not hold: `positional` ('none', 'rope' or 'sinusoidal',
// which adds the sinusoidal table to x) and the masks, whose accepted ranks depend on x.
// Not for: the layer's shape ({dModel, numHeads, ...}: each class reads its own).
//
//   std::vector<const char*> keys = attention_option_keys();       // every row's option
//   keys.push_back("memory");
//   const JsOptions opt(options, keys, where);                       // unknown keys refused
//   AttentionOptions o;
//   attention_options_from_js(opt, o);
#pragma once

#include <initializer_list>
#include <vector>

#include "attnlab/attention/attention_options.hpp"
#include "attnlab/posenc/positional_encoding.hpp"
#include "convert.hpp"

namespace attnlab::web {

// The JavaScript names of the table's rows, in its order.
std::vector<const char*> attention_option_keys();
// Those of `only` (a call that takes a subset), in the table's order; each must be a row's.
std::vector<const char*> attention_option_keys(std::initializer_list<const char*> only);

// Every row's option that `opt` holds, into `o` (the masks excepted: attention_masks_from_js);
// then ConfigError for a block-sparse option with another variant, naming both.
void attention_options_from_js(const JsOptions& opt, AttentionOptions& o);
// keyPaddingMask ((B, S), or (S) when x is unbatched) and attnMask ((T, S)), when given.
void attention_masks_from_js(const JsOptions& opt, bool batched, AttentionOptions& o);

// The `positional` option (default 'none'): 'none', 'rope' (sets o.rope) or 'sinusoidal' (the
// caller adds the table to x); 'learned' and 'time' belong to a Model and are refused by name.
PositionalKind layer_positional_from_js(const JsOptions& opt, AttentionOptions& o);

}  // namespace attnlab::web
