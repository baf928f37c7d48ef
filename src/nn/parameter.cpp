#include "attnlab/nn/parameter.hpp"

#include <algorithm>

namespace attnlab {

const ParameterView& find_parameter(const std::vector<ParameterView>& params, const std::string& name,
                                    const char* where) {
    for (const auto& p : params) {
        if (p.name == name) return p;
    }
    std::string names;
    for (const auto& p : params) names += (names.empty() ? "" : ", ") + p.name;
    fail<ConfigError>(where, ": no parameter named '", name, "'; available: ", names);
}

void assign_parameter(const std::vector<ParameterView>& params, const std::string& name,
                      const std::vector<std::size_t>& shape, const float* data, const char* where) {
    const ParameterView& p = find_parameter(params, name, where);
    if (shape != p.shape) {
        fail<ShapeError>(where, ": parameter '", name, "' is ", shape_string(p.shape), ", got ", shape_string(shape));
    }
    std::copy(data, data + p.size(), p.data);
}

}  // namespace attnlab
