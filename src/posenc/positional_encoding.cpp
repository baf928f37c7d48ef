#include "attnlab/posenc/positional_encoding.hpp"

#include "attnlab/core/error.hpp"

namespace attnlab {

std::string_view positional_name(PositionalKind kind) {
    switch (kind) {
        case PositionalKind::none: return "none";
        case PositionalKind::sinusoidal: return "sinusoidal";
        case PositionalKind::learned: return "learned";
        case PositionalKind::rope: return "rope";
        case PositionalKind::time: return "time";
    }
    return "none";
}

PositionalKind positional_from_name(std::string_view name) {
    for (auto kind : {PositionalKind::none, PositionalKind::sinusoidal, PositionalKind::learned, PositionalKind::rope,
                      PositionalKind::time}) {
        if (positional_name(kind) == name) return kind;
    }
    fail<ConfigError>("unknown positional encoding '", name, "'; valid: none, sinusoidal, learned, rope, time");
}

}  // namespace attnlab
