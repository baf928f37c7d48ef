#include "attention_options.hpp"

#include <cstring>
#include <string>
#include <type_traits>

#include "attnlab/core/error.hpp"
#include "fields.hpp"

namespace attnlab::web {

std::vector<const char*> attention_option_keys() {
    std::vector<const char*> keys;
    for (const AttentionOptionField& field : kAttentionOptionFields) keys.push_back(field.js);
    return keys;
}

std::vector<const char*> attention_option_keys(std::initializer_list<const char*> only) {
    std::vector<const char*> keys;
    for (const AttentionOptionField& field : kAttentionOptionFields) {
        for (const char* key : only) {
            if (std::strcmp(key, field.js) == 0) keys.push_back(field.js);
        }
    }
    if (keys.size() != only.size()) fail<Error>("attention_option_keys: a key that is not an AttentionOptions option");
    return keys;
}

void attention_options_from_js(const JsOptions& opt, AttentionOptions& o) {
    for_each_attention_option(o, [&](const AttentionOptionField& field, auto& value) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(value)>, Mask2>) field_from_js(opt, field.js, value);
    });
    if (o.variant == AttentionVariant::block_sparse) return;
    for (const AttentionOptionField& field : kAttentionOptionFields) {
        if ((field.flags & kBlockSparseOnly) && opt.has(field.js)) {
            fail<ConfigError>(opt.where(), ": option '", field.js, "' applies only with variant 'block_sparse', got variant '",
                              choice_name(o.variant), "'");
        }
    }
}

void attention_masks_from_js(const JsOptions& opt, bool batched, AttentionOptions& o) {
    const char* where = opt.where();
    if (!opt.is_null("keyPaddingMask")) o.mask.key_padding = mask_from_js(opt.get("keyPaddingMask"), where, "keyPaddingMask", !batched);
    if (!opt.is_null("attnMask")) o.mask.explicit_mask = mask_from_js(opt.get("attnMask"), where, "attnMask", false);
}

PositionalKind layer_positional_from_js(const JsOptions& opt, AttentionOptions& o) {
    const PositionalKind positional = choice_from_name<PositionalKind>(opt.string("positional", "none"), opt.where());
    if (positional == PositionalKind::learned || positional == PositionalKind::time) {
        fail<ConfigError>(opt.where(), ": positional '", choice_name(positional), "' needs ",
                          positional == PositionalKind::learned ? "a trained table, which belongs to a Model"
                                                                : "timestamps, which a forecaster Model reads",
                          "; use 'none', 'rope' or 'sinusoidal'");
    }
    o.rope = positional == PositionalKind::rope;
    return positional;
}

}  // namespace attnlab::web
