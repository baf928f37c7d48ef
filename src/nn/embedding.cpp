#include "attnlab/nn/embedding.hpp"

#include <algorithm>

#include <xtensor/xbuilder.hpp>

namespace attnlab {

Embedding::Embedding(std::size_t vocab_size, std::size_t width, Rng& rng) {
    if (vocab_size == 0 || width == 0) {
        fail<ConfigError>("Embedding: vocab_size and width must be positive, got ", vocab_size, " and ", width);
    }
    require_allocatable({vocab_size, width}, "Embedding", "the table");
    weight = Tensor2::from_shape({vocab_size, width});
    for (auto& w : weight) w = 0.02f * rng.normal();
}

void Embedding::check_tokens(const Index2& tokens, const char* where) const {
    const std::size_t v = vocab_size(), t = tokens.shape(1);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::int32_t id = tokens.data()[i];
        if (id < 0 || static_cast<std::size_t>(id) >= v) {
            fail<ValueError>(where, ": token id ", id, " at (", i / t, ", ", i % t, ") is outside the vocabulary [0, ",
                             v, ") (vocab_size ", v, ")");
        }
    }
}

Tensor3 Embedding::forward(const Index2& tokens) const {
    Tensor3 out;
    forward(tokens, out);
    return out;
}

void Embedding::forward(const Index2& tokens, Tensor3& out) const {
    check_tokens(tokens, "Embedding::forward");
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1), c = width();
    out.resize({batch, t, c});  // (B, T, C)
    for (std::size_t i = 0; i < batch * t; ++i) {
        const float* row = weight.data() + static_cast<std::size_t>(tokens.data()[i]) * c;
        std::copy(row, row + c, out.data() + i * c);
    }
}

void Embedding::backward(const Index2& tokens, const Tensor3& dout, EmbeddingGrad& grad) const {
    constexpr const char* where = "Embedding::backward";
    require_shape(dout, {static_cast<std::ptrdiff_t>(tokens.shape(0)), static_cast<std::ptrdiff_t>(tokens.shape(1)),
                         static_cast<std::ptrdiff_t>(width())},
                  where, "dout (B, T, C)");
    check_tokens(tokens, where);
    const std::size_t c = width();
    // out[b, t] = weight[tokens[b, t]]  =>  dweight[v] += Σ_{(b, t): tokens[b, t] = v} dout[b, t]
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        float* drow = grad.weight.data() + static_cast<std::size_t>(tokens.data()[i]) * c;
        const float* g = dout.data() + i * c;
        for (std::size_t j = 0; j < c; ++j) drow[j] += g[j];
    }
}

std::vector<ParameterView> Embedding::parameters(const std::string& prefix) {
    return {view_of(prefix + "weight", weight)};
}

EmbeddingGrad::EmbeddingGrad(const Embedding& layer) : weight(xt::zeros<float>(layer.weight.shape())) {}

std::vector<ParameterView> EmbeddingGrad::views(const std::string& prefix) {
    return {view_of(prefix + "weight", weight)};
}

}  // namespace attnlab
