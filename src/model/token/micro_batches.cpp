#include "micro_batches.hpp"

#include <utility>

namespace attnlab::detail {

std::size_t micro_batch_count(std::size_t batch, std::size_t positions, std::size_t threads) {
    threads = std::max<std::size_t>(1, threads);
    const std::size_t rows = batch * positions;
    std::size_t n = (rows + kMicroBatchRows - 1) / kMicroBatchRows;
    if (n < 2) return 1;  // one micro-batch's rows: the layers split them over the threads
    n = (n + threads - 1) / threads * threads;
    if (n > batch) n = batch / threads * threads;  // whole sequences, every thread as many
    return n < 2 ? 1 : n;
}

void add_gradients(float* into, const float* from, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) into[i] += from[i];
}

void add_gradients(LinearGrad& into, const LinearGrad& from) {
    add_gradient_tensor(into.weight, from.weight);
    add_gradient_tensor(into.bias, from.bias);
}

void add_gradients(LayerNormGrad& into, const LayerNormGrad& from) {
    add_gradient_tensor(into.weight, from.weight);
    add_gradient_tensor(into.bias, from.bias);
}

void add_gradients(TransformerBlockGrad& into, const TransformerBlockGrad& from) {
    add_gradients(into.ln1, from.ln1);
    for (auto [a, b] : {std::pair{&into.attn.q_proj, &from.attn.q_proj}, std::pair{&into.attn.k_proj, &from.attn.k_proj},
                        std::pair{&into.attn.v_proj, &from.attn.v_proj},
                        std::pair{&into.attn.out_proj, &from.attn.out_proj}, std::pair{&into.ffn.fc1, &from.ffn.fc1},
                        std::pair{&into.ffn.fc2, &from.ffn.fc2}}) {
        add_gradients(*a, *b);
    }
    add_gradients(into.ln2, from.ln2);
}

}  // namespace attnlab::detail
