#include "attnlab/attention/variant.hpp"

#include <string>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {
constexpr AttentionVariant kVariants[] = {AttentionVariant::full, AttentionVariant::linear,
                                          AttentionVariant::block_sparse};
}  // namespace

std::string_view attention_variant_name(AttentionVariant variant) {
    switch (variant) {
        case AttentionVariant::full: return "full";
        case AttentionVariant::linear: return "linear";
        case AttentionVariant::block_sparse: return "block_sparse";
    }
    return "full";
}

AttentionVariant attention_variant_from_name(std::string_view name) {
    std::string valid;
    for (AttentionVariant v : kVariants) {
        if (attention_variant_name(v) == name) return v;
        valid += (valid.empty() ? "" : ", ") + std::string(attention_variant_name(v));
    }
    fail<ConfigError>("unknown attention variant '", name, "'; valid: ", valid);
}

}  // namespace attnlab
