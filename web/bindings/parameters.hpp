// web/bindings/parameters.hpp: the parameter and gradient conversions every bound layer shares.
//
// What it is for: a layer's parameterNames / getParameter / setParameter, and the `grads` object
// of its backward, written once over the engine's ParameterView lists (nn/parameter.hpp), so
// each binding only says where its views come from. Not for: anything that needs the layer itself.
//
//   val names = parameter_names_to_js(mha.parameters());
//   set_parameter_from_js(mha.parameters(), name, tensor, "MultiHeadAttention.setParameter");
//   result.set("grads", gradients_to_js(grads.views()));
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <emscripten/val.h>

#include "attnlab/core/tensor.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab::web {

using emscripten::val;

// ['q_proj.weight', ...] in the views' order.
val parameter_names_to_js(const std::vector<ParameterView>& params);
// A copy of the parameter `name` (a JS string; Error listing the valid names otherwise).
val parameter_to_js(const std::vector<ParameterView>& params, const val& name, const char* where);
// Copies {shape, data} into the parameter `name`; its shape must match exactly (Error naming both).
void set_parameter_from_js(const std::vector<ParameterView>& params, const val& name, const val& tensor,
                           const char* where);
// { name: {shape, data}, ... } holding a copy of every view (gradients under parameter names).
val gradients_to_js(const std::vector<ParameterView>& grads);

// An upstream gradient shaped like a layer's output: {shape: [B, T, W]} when the input was
// batched, else {shape: [T, W]} -> (B, T, W) (B = 1 unbatched). Error naming both shapes otherwise.
Tensor3 output_gradient_from_js(const val& t, bool batched, std::size_t batch, std::size_t steps, std::size_t width,
                                const char* where, const char* what);

}  // namespace attnlab::web
