// attnlab/nn/embedding.hpp: the token embedding table, forward (gather) and backward (scatter-add).
//
// What it is for: turning token ids into vectors, the first layer of every model (article §1).
// weight is (V, C) exactly like torch.nn.Embedding, so state_dicts map one to one, and a decoder
// can tie its output head to it (the head then reads the same matrix as logits = h·Wᵀ).
// Not for: positional tables (posenc/), or padding_idx semantics (padding rows get gradients
// like any other; models exclude padded positions downstream instead).
//
//   attnlab::Rng rng(1);
//   attnlab::Embedding emb(/*vocab_size=*/10, /*width=*/16, rng);
//   attnlab::Tensor3 x = emb.forward(tokens);           // (B, T) -> (B, T, 16)
//   attnlab::EmbeddingGrad g(emb);
//   emb.backward(tokens, dx, g);                         // g.weight[tokens[b, t]] += dx[b, t]
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab {

struct EmbeddingGrad;

struct Embedding {
    Tensor2 weight;  // (V, C), initialised N(0, 0.02²) like GPT-2's wte

    Embedding() = default;
    Embedding(std::size_t vocab_size, std::size_t width, Rng& rng);

    std::size_t vocab_size() const { return weight.shape(0); }
    std::size_t width() const { return weight.shape(1); }

    // Throws ValueError naming the first id outside [0, V), with its position and V.
    void check_tokens(const Index2& tokens, const char* where) const;
    // tokens: (B, T) -> (B, T, C): row b, t is weight[tokens[b, t]].
    Tensor3 forward(const Index2& tokens) const;
    // The same into out (resized; its buffer kept when the shape is unchanged).
    void forward(const Index2& tokens, Tensor3& out) const;
    // Backward of the gather: the tokens are the whole cache (the forward copies rows, so the
    // gradient of row v is the sum of dout over the positions holding v).
    // tokens: (B, T), dout: (B, T, C); grad.weight (V, C) += scatter.
    void backward(const Index2& tokens, const Tensor3& dout, EmbeddingGrad& grad) const;

    // "<prefix>weight"
    std::vector<ParameterView> parameters(const std::string& prefix = "");
};

struct EmbeddingGrad {
    Tensor2 weight;  // (V, C)

    EmbeddingGrad() = default;
    explicit EmbeddingGrad(const Embedding& layer);  // zeros shaped like layer.weight
    void zero() { weight.fill(0.0f); }
    // Same names and order as Embedding::parameters(prefix).
    std::vector<ParameterView> views(const std::string& prefix = "");
};

}  // namespace attnlab
