#include "fields.hpp"

#include <utility>

#include "attnlab/core/error.hpp"

namespace attnlab::web {

void field_from_js(const JsOptions& opt, const char* key, std::size_t& value) { value = opt.size(key, value); }
void field_from_js(const JsOptions& opt, const char* key, bool& value) { value = opt.boolean(key, value); }
void field_from_js(const JsOptions& opt, const char* key, float& value) { value = opt.float32(key, value); }
void field_from_js(const JsOptions& opt, const char* key, double& value) { value = opt.number(key, value); }
void field_from_js(const JsOptions& opt, const char* key, std::optional<float>& value) {
    if (!opt.is_null(key)) value = opt.float32(key, 1.0f);
}
void field_from_js(const JsOptions& opt, const char* key, std::vector<std::size_t>& value) {
    if (!opt.has(key)) return;
    const val array = opt.get(key);
    if (!array.instanceof(val::global("Array"))) {
        fail<ConfigError>(opt.where(), ": option '", key, "' must be an array of non-negative integers");
    }
    std::vector<std::size_t> out;
    const std::size_t n = array["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) out.push_back(size_from_js(array[i], opt.where(), key));
    value = std::move(out);
}
void field_from_js(const JsOptions& opt, const char* key, ScaleOptions& value) {
    const val v = opt.get(key);
    if (v.isFalse()) {
        value.enabled = false;
    } else if (v.isNumber()) {
        value.factor = opt.float32(key, 0.0f);
    } else if (!v.isUndefined() && !v.isTrue()) {
        fail<ConfigError>(opt.where(), ": option '", key, "' must be true, false or a number");
    }
}

val field_to_js(std::size_t value) { return val(value); }
val field_to_js(bool value) { return val(value); }
val field_to_js(float value) { return val(value); }
val field_to_js(double value) { return val(value); }
val field_to_js(const std::optional<float>& value) { return value ? val(*value) : val::null(); }
val field_to_js(const std::vector<std::size_t>& value) {
    val out = val::array();
    for (std::size_t v : value) out.call<void>("push", static_cast<double>(v));
    return out;
}
val field_to_js(const ScaleOptions& value) {
    if (!value.enabled) return val(false);
    return value.factor ? val(*value.factor) : val(true);
}
val field_to_js(const Mask2& value) { return value.size() == 0 ? val::null() : mask_to_js(value); }

}  // namespace attnlab::web
