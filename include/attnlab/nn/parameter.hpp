// attnlab/nn/parameter.hpp: a named, mutable view of one parameter tensor.
//
// What it is for: listing a module's parameters under PyTorch state_dict names
// ("q_proj.weight", "blocks.0.attn.out_proj.bias", ...) so checkpoints, optimisers and the
// JavaScript setParameter/getParameter share one mechanism. Not for: owning data — the view is
// valid while its module lives and its tensors are not reassigned.
//
//   for (const auto& p : mha.parameters()) std::cout << p.name << " " << p.size() << "\n";
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

struct ParameterView {
    std::string name;
    float* data;
    std::vector<std::size_t> shape;

    std::size_t size() const {
        std::size_t n = 1;
        for (auto d : shape) n *= d;
        return n;
    }
};

template <std::size_t N>
ParameterView view_of(const std::string& name, Array<float, N>& t) {
    return ParameterView{name, t.data(), std::vector<std::size_t>(t.shape().begin(), t.shape().end())};
}

// Finds `name` in params; throws ConfigError listing the available names if absent.
const ParameterView& find_parameter(const std::vector<ParameterView>& params, const std::string& name,
                                    const char* where);
// Copies `data` (of `shape`) into the parameter `name`; throws ShapeError naming both shapes if
// they differ. The parameter is untouched on error.
void assign_parameter(const std::vector<ParameterView>& params, const std::string& name,
                      const std::vector<std::size_t>& shape, const float* data, const char* where);

}  // namespace attnlab
