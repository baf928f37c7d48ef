// The shared parameter and gradient conversions (parameters.hpp).
#include "parameters.hpp"

#include <algorithm>

#include "attnlab/core/error.hpp"
#include "convert.hpp"

namespace attnlab::web {

namespace {
std::string parameter_name(const val& name, const char* where) {
    if (!name.isString()) fail<ConfigError>(where, ": the parameter name must be a string");
    return name.as<std::string>();
}
}  // namespace

val parameter_names_to_js(const std::vector<ParameterView>& params) {
    std::vector<std::string> names;
    for (const ParameterView& p : params) names.push_back(p.name);
    return strings_to_js(names);
}

val parameter_to_js(const std::vector<ParameterView>& params, const val& name, const char* where) {
    const ParameterView& p = find_parameter(params, parameter_name(name, where), where);
    return tensor_to_js(p.data, p.shape);
}

void set_parameter_from_js(const std::vector<ParameterView>& params, const val& name, const val& tensor,
                           const char* where) {
    const std::string key = parameter_name(name, where);
    const ParameterView& p = find_parameter(params, key, where);
    const std::string what = "'" + key + "'";
    const std::vector<float> data = floats_from_js(tensor, ShapeSpec(p.shape.begin(), p.shape.end()), where, what.c_str());
    assign_parameter(params, key, p.shape, data.data(), where);
}

val gradients_to_js(const std::vector<ParameterView>& grads) {
    val by_name = val::object();
    for (const ParameterView& g : grads) by_name.set(g.name, tensor_to_js(g.data, g.shape));
    return by_name;
}

Tensor3 output_gradient_from_js(const val& t, bool batched, std::size_t batch, std::size_t steps, std::size_t width,
                                const char* where, const char* what) {
    const auto B = static_cast<std::ptrdiff_t>(batch), T = static_cast<std::ptrdiff_t>(steps),
               W = static_cast<std::ptrdiff_t>(width);
    const std::vector<float> data = floats_from_js(t, batched ? ShapeSpec{B, T, W} : ShapeSpec{T, W}, where, what);
    Tensor3 out = Tensor3::from_shape({batch, steps, width});
    std::copy(data.begin(), data.end(), out.begin());
    return out;
}

}  // namespace attnlab::web
