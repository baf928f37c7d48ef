#include "trunk.hpp"

#include <algorithm>
#include <utility>

#include "attnlab/posenc/sinusoidal.hpp"

namespace attnlab::detail {

AttentionOptions attention_options(const ModelConfig& config) {
    AttentionOptions options;
    set_attention_options(config, options);
    return options;
}

void set_attention_options(const ModelConfig& config, AttentionOptions& options) {
    options.rope = config.positional == PositionalKind::rope;
    options.scale = config.scale_options();
    options.mask.causal = false;
    options.mask.window = config.attention_window;
    options.mask.global_tokens = config.global_tokens;
}

void add_positional(Tensor3& x, PositionalKind kind, const LearnedPositionalEmbedding& table, std::size_t offset) {
    if (kind == PositionalKind::sinusoidal) add_sinusoidal(x, offset);
    if (kind == PositionalKind::learned) table.add_to(x, offset);
}

void learned_positional_backward(const Tensor3& dx, std::size_t offset, Tensor2& dtable) {
    const std::size_t batch = dx.shape(0), t = dx.shape(1), c = dx.shape(2);
    ATTNLAB_DEBUG_ASSERT(dtable.shape(1) == c && offset + t <= dtable.shape(0));
    float* rows = dtable.data() + offset * c;
    for (std::size_t b = 0; b < batch; ++b) {
        const float* g = dx.data() + b * t * c;
        for (std::size_t i = 0; i < t * c; ++i) rows[i] += g[i];
    }
}

Tensor3 blocks_forward(const std::vector<TransformerBlock>& blocks, Tensor3 x, const AttentionOptions& options,
                       const std::vector<StageObserver*>& observers) {
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        x = blocks[l].forward(x, options, observers.empty() ? nullptr : observers[l]);
    }
    return x;
}

const Tensor3& blocks_forward(const std::vector<TransformerBlock>& blocks, const Tensor3& x,
                              const AttentionOptions& options, const std::vector<StageObserver*>& observers,
                              std::vector<TransformerBlockCache>& caches, Rng* dropout_rng, TrunkBuffers& buffers) {
    caches.resize(blocks.size());
    const Tensor3* in = &x;
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        StageObserver* observer = observers.empty() ? nullptr : observers[l];
        // A post-LN block keeps its input in its attention's cache (attn.x, for dW_Q = dqᵀ·x):
        // the block before it writes there directly, and the attention then has nothing to copy
        // (512 KiB per block at the tiny encoder's shape; memmove 1.13% -> 0.86% of its 1-thread
        // training step). Not with checkpointing, whose block keeps only its input
        // (TransformerBlockCache::x) and rebuilds the sub-layer caches; not pre-LN, whose
        // attention input is ln1's output, written there by ln1.
        const bool next_keeps_input = l + 1 < blocks.size() && blocks[l + 1].norm() == NormPlacement::post &&
                                      !blocks[l + 1].gradient_checkpointing();
        Tensor3& out = next_keeps_input ? caches[l + 1].attn.x : buffers.stream[l % 2];
        blocks[l].forward(*in, options, observer, &caches[l], dropout_rng, out);
        in = &out;
    }
    return *in;
}

void blocks_backward(const std::vector<TransformerBlock>& blocks, const Tensor3& dout,
                     const std::vector<TransformerBlockCache>& caches, const AttentionOptions& options,
                     std::vector<TransformerBlockGrad>& grads, Tensor3& dx, TrunkBuffers& buffers) {
    // The gradient between blocks alternates between two buffers (a block's dout and dx must
    // differ); the first block writes straight into dx.
    Tensor3& even = buffers.dstream[0];
    Tensor3& odd = buffers.dstream[1];
    const Tensor3* d = &dout;
    for (std::size_t l = blocks.size(); l-- > 0;) {
        Tensor3& out = l == 0 ? dx : (d == &even ? odd : even);
        blocks[l].backward(*d, caches[l], options, grads[l], out);
        d = &out;
    }
    if (blocks.empty()) dx = dout;
}

void set_input_tables(const ModelConfig& config, const std::vector<TransformerBlock>& blocks, const Embedding& tok_emb,
                      const LearnedPositionalEmbedding& pos_emb, const Index2& tokens,
                      std::vector<TransformerBlockCache>& caches, TrunkBuffers& trunk) {
    caches.resize(blocks.size());
    if (blocks.empty()) return;
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1), c = config.d_model, v = tok_emb.vocab_size();
    const bool additive = config.positional == PositionalKind::sinusoidal || config.positional == PositionalKind::learned;
    const std::size_t table_rows = v + (additive ? t : 0);
    const bool use = config.norm == NormPlacement::post && !blocks[0].gradient_checkpointing() &&
                     config.positional != PositionalKind::rope &&
                     kRowsPerTableRow * table_rows <= batch * t;
    MultiHeadAttentionCache& first = caches[0].attn;
    if (!use) {
        first.input.tables = nullptr;
        return;
    }
    TableRows& tables = trunk.input_tables;
    tables = TableRows{};
    tables.a = tok_emb.weight.data();
    tables.a_rows = v;
    tables.ia = tokens.data();
    tables.rows = batch * t;
    tables.width = c;
    if (config.positional == PositionalKind::sinusoidal) {
        if (trunk.positions.shape(0) != t || trunk.positions.shape(1) != c) trunk.positions = sinusoidal_table(t, c);
        tables.b = trunk.positions.data();
        tables.b_rows = t;
    } else if (config.positional == PositionalKind::learned) {
        tables.b = pos_emb.table.data();  // rows 0 .. T - 1
        tables.b_rows = t;
    }
    first.input.tables = &tables;
}

void clear_input_tables(std::vector<TransformerBlockCache>& caches) {
    for (auto& cache : caches) cache.attn.input.tables = nullptr;
}

void set_input_table_gradients(TrunkBuffers& trunk, Tensor2& dtok, Tensor2* dpos) {
    trunk.input_tables.da = dtok.data();
    trunk.input_tables.db = dpos ? dpos->data() : nullptr;
}

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

AttentionMapRecorder::AttentionMapRecorder(std::size_t num_layers) {
    for (std::size_t l = 0; l < num_layers; ++l) recorders_.emplace_back(std::vector<Stage>{Stage::weights});
}

std::vector<StageObserver*> AttentionMapRecorder::observers() {
    std::vector<StageObserver*> out;
    for (auto& r : recorders_) out.push_back(&r);
    return out;
}

Tensor4 AttentionMapRecorder::maps(std::size_t batch, std::size_t num_heads) const {
    const Tensor2& first = recorders_.at(0).get(Stage::weights, batch, 0);
    const std::size_t t = first.shape(0), s = first.shape(1);
    Tensor4 out = Tensor4::from_shape({recorders_.size(), num_heads, t, s});  // (L, H, T, S)
    for (std::size_t l = 0; l < recorders_.size(); ++l) {
        for (std::size_t h = 0; h < num_heads; ++h) {
            const Tensor2& w = recorders_[l].get(Stage::weights, batch, static_cast<std::ptrdiff_t>(h));
            std::copy(w.begin(), w.end(), out.data() + (l * num_heads + h) * t * s);
        }
    }
    return out;
}

}  // namespace attnlab::detail
