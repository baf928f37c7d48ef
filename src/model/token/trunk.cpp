#include "attnlab/model/token/trunk.hpp"

#include <algorithm>
#include <deque>
#include <utility>

#include <xtensor/xbuilder.hpp>

#include "attnlab/posenc/sinusoidal.hpp"
#include "input_tables.hpp"
#include "micro_batches.hpp"

namespace attnlab {

namespace {
// x: (B, T, C) += the sinusoidal or learned rows of positions offset .. offset + T - 1;
// nothing for none and rope (rope acts inside attention).
void add_positional(Tensor3& x, PositionalKind kind, const LearnedPositionalEmbedding& table, std::size_t offset) {
    if (kind == PositionalKind::sinusoidal) add_sinusoidal(x, offset);
    if (kind == PositionalKind::learned) table.add_to(x, offset);
}

// Backward of table.add_to(x, offset): x[b, t] += table[offset + t]  =>  dtable[offset + t] += Σ_b dx[b, t].
// dx: (B, T, C), dtable: (max_len, C)
void learned_positional_backward(const Tensor3& dx, std::size_t offset, Tensor2& dtable) {
    const std::size_t batch = dx.shape(0), t = dx.shape(1), c = dx.shape(2);
    ATTNLAB_DEBUG_ASSERT(dtable.shape(1) == c && offset + t <= dtable.shape(0));
    float* rows = dtable.data() + offset * c;
    for (std::size_t b = 0; b < batch; ++b) {
        const float* g = dx.data() + b * t * c;
        for (std::size_t i = 0; i < t * c; ++i) rows[i] += g[i];
    }
}

// Inference: x (B, T', C) through the blocks, no caches, no dropout; the residual stream shown
// to `residuals` (when given) before each block and after the last.
Tensor3 blocks_inference(const std::vector<TransformerBlock>& blocks, Tensor3 x, const AttentionOptions& options,
                         const std::vector<StageObserver*>& observers, ResidualHook* residuals) {
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        if (residuals) residuals->on_residual(l, x);
        x = blocks[l].forward(x, options, observers.empty() ? nullptr : observers[l]);
    }
    if (residuals) residuals->on_residual(blocks.size(), x);
    return x;
}

// Records Stage::weights of one batch row in every block and stacks them: (L, H, T, S).
class AttentionMapRecorder {
public:
    explicit AttentionMapRecorder(std::size_t num_layers) {
        for (std::size_t l = 0; l < num_layers; ++l) recorders_.emplace_back(std::vector<Stage>{Stage::weights});
    }
    std::vector<StageObserver*> observers() {
        std::vector<StageObserver*> out;
        for (auto& r : recorders_) out.push_back(&r);
        return out;
    }
    Tensor4 maps(std::size_t batch, std::size_t num_heads) const {
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

private:
    std::deque<TraceRecorder> recorders_;  // deque: recorders hold a mutex and never move
};
}  // namespace

// ---- TrunkGrad ----

TrunkGrad::TrunkGrad(const Trunk& trunk) : tok_emb(trunk.tok_emb) {
    if (trunk.pos_emb.table.size() > 0) pos_emb = xt::zeros<float>(trunk.pos_emb.table.shape());
    if (trunk.cls_token.size() > 0) cls_token = xt::zeros<float>(trunk.cls_token.shape());
    for (const auto& block : trunk.blocks) blocks.emplace_back(block);
    if (trunk.ln_f.width() > 0) ln_f = LayerNormGrad(trunk.ln_f);
}

void TrunkGrad::zero() {
    tok_emb.zero();
    pos_emb.fill(0.0f);
    cls_token.fill(0.0f);
    for (auto& block : blocks) block.zero();
    ln_f.zero();
}

void TrunkGrad::add(const TrunkGrad& other) {
    detail::add_gradient_tensor(tok_emb.weight, other.tok_emb.weight);
    detail::add_gradient_tensor(pos_emb, other.pos_emb);
    detail::add_gradient_tensor(cls_token, other.cls_token);
    for (std::size_t l = 0; l < blocks.size(); ++l) detail::add_gradients(blocks[l], other.blocks[l]);
    detail::add_gradients(ln_f, other.ln_f);
}

void TrunkGrad::views(std::vector<ParameterView>& out) {
    const auto emb = tok_emb.views("tok_emb.");
    out.insert(out.end(), emb.begin(), emb.end());
    if (pos_emb.size() > 0) out.push_back(view_of("pos_emb.weight", pos_emb));
    if (cls_token.size() > 0) out.push_back(view_of("cls_token", cls_token));
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        const auto block = blocks[l].views("blocks." + std::to_string(l) + ".");
        out.insert(out.end(), block.begin(), block.end());
    }
    if (ln_f.weight.size() > 0) {
        const auto norm = ln_f.views("ln_f.");
        out.insert(out.end(), norm.begin(), norm.end());
    }
}

// ---- Trunk ----

Trunk::Trunk(const ModelConfig& config, Rng& rng) : config_(config) {
    config_.validate();
    const std::size_t c = config_.d_model;
    tok_emb = Embedding(config_.vocab_size, c, rng);
    if (config_.positional == PositionalKind::learned) pos_emb = LearnedPositionalEmbedding(config_.max_len, c, rng);
    if (config_.kind == ModelKind::encoder && config_.pooling == Pooling::cls) {
        cls_token = Tensor1::from_shape({c});
        for (auto& v : cls_token) v = 0.02f * rng.normal();
    }
    for (std::size_t l = 0; l < config_.num_layers; ++l) blocks.emplace_back(config_, rng);
    if (config_.norm == NormPlacement::pre) ln_f = LayerNorm(c, config_.layer_norm_eps);
}

void Trunk::set_gradient_checkpointing(bool on) {
    config_.gradient_checkpointing = on;
    for (auto& block : blocks) block.set_gradient_checkpointing(on);
}

AttentionOptions Trunk::attention_options() const {
    AttentionOptions options;
    set_attention_switches(options);
    return options;
}

void Trunk::set_attention_switches(AttentionOptions& options) const { attnlab::set_attention_switches(config_, options); }

void set_attention_switches(const ModelConfig& config, AttentionOptions& options) {
    options.rope = config.positional == PositionalKind::rope;
    options.scale = config.scale_options();
    options.variant = config.variant;
    options.normalizer = config.normalizer;
    options.mask.window = config.attention_window;
    options.mask.global_tokens = config.global_tokens;
    options.precision = config.precision_options();
    options.block_sparse.block_size = config.sparse_block_size;
    options.block_sparse.window_blocks = config.sparse_window_blocks;
    options.block_sparse.global_blocks = config.sparse_global_blocks;
    options.block_sparse.random_blocks = config.sparse_random_blocks;
    options.block_sparse.seed = config.sparse_seed;
}

void Trunk::check_input(const Index2& tokens, const Mask2& padding, const char* where) const {
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1);
    if (batch == 0 || t == 0) fail<ShapeError>(where, ": tokens must be non-empty (B, T), got ", shape_string(tokens.shape()));
    if (padding.size() > 0) {
        require_shape(padding, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(t)}, where,
                      "padding (B, T) matching tokens");
        for (std::size_t b = 0; b < batch; ++b) {
            std::size_t valid = 0;
            for (std::size_t i = 0; i < t; ++i) valid += padding(b, i) == 0;
            if (valid == 0) fail<ValueError>(where, ": row ", b, " of the batch is all padding (T = ", t, ")");
        }
    }
    if (config_.positional == PositionalKind::learned) pos_emb.check_range(positions(t), 0, where);
}

const Tensor3& Trunk::forward(const Index2& tokens, const Mask2& padding, bool causal,
                              const std::vector<StageObserver*>& observers, TrunkCache& cache, bool training,
                              Rng* dropout_rng, ResidualHook* residuals) const {
    if (training && residuals) {
        fail<ConfigError>("Trunk::forward: a residual hook runs in inference forwards only (a training forward is differentiated)");
    }
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1), c = config_.d_model;
    const bool cls = cls_token.size() > 0;
    const std::size_t positions = this->positions(t);  // T'
    AttentionOptions& options = cache.options;
    // The config's settings; the mask tensors keep their buffers from step to step.
    set_attention_switches(options);
    options.mask.causal = causal;
    Mask2& key_padding = options.mask.key_padding;  // (B, T')
    // x = tok_emb(tokens), with the CLS vector in front: (B, T', C)
    Tensor3& x = cache.x;
    if (!cls) {
        tok_emb.forward(tokens, x);
        key_padding = padding;
    } else {
        tok_emb.forward(tokens, cache.embedded);
        x.resize({batch, positions, c});
        for (std::size_t b = 0; b < batch; ++b) {
            float* dst = x.data() + b * positions * c;
            std::copy(cls_token.begin(), cls_token.end(), dst);
            std::copy_n(cache.embedded.data() + b * t * c, t * c, dst + c);
        }
        if (padding.size() == 0) {
            key_padding = padding;
        } else {
            key_padding.resize({batch, positions});
            for (std::size_t b = 0; b < batch; ++b) {
                key_padding(b, 0) = 0;
                for (std::size_t i = 0; i < t; ++i) key_padding(b, i + 1) = padding(b, i);
            }
        }
    }
    add_positional(x, config_.positional, pos_emb, 0);
    cache.positions = positions;
    if (!training) {
        Tensor3 h = blocks_inference(blocks, std::move(x), options, observers, residuals);
        if (config_.norm != NormPlacement::pre) return cache.out = std::move(h);
        ln_f.forward(h, nullptr, cache.normed);
        return cache.normed;
    }
    cache.tokens = tokens;  // the first block's input tables point into this copy
    if (cls) detail::clear_input_tables(cache.blocks);
    else detail::set_input_tables(*this, cache);
    const Tensor3& h = blocks_forward(x, observers, cache, dropout_rng);
    if (config_.norm != NormPlacement::pre) return h;
    ln_f.forward(h, &cache.ln_f, cache.normed);
    return cache.normed;
}

const Tensor3& Trunk::blocks_forward(const Tensor3& x, const std::vector<StageObserver*>& observers,
                                     TrunkCache& cache, Rng* dropout_rng) const {
    std::vector<TransformerBlockCache>& caches = cache.blocks;
    caches.resize(blocks.size());
    const Tensor3* in = &x;
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        StageObserver* observer = observers.empty() ? nullptr : observers[l];
        // A post-LN block keeps its input in its attention's cache (attn.x, for dW_Q = dqᵀ·x):
        // the block before it writes there directly, and the attention then has nothing to copy.
        // Not with checkpointing, whose block keeps only its input (TransformerBlockCache::x) and
        // rebuilds the sub-layer caches; not pre-LN, whose attention input is ln1's output,
        // written there by ln1.
        const bool next_keeps_input = l + 1 < blocks.size() && blocks[l + 1].norm() == NormPlacement::post &&
                                      !blocks[l + 1].gradient_checkpointing();
        Tensor3& out = next_keeps_input ? caches[l + 1].attn.x : cache.stream[l % 2];
        blocks[l].forward(*in, cache.options, observer, &caches[l], dropout_rng, out);
        in = &out;
    }
    return *in;
}

const Tensor3& Trunk::output(const TrunkCache& cache) const {
    // The last block writes stream[(L - 1) % 2] (no block after it keeps its output).
    if (config_.norm == NormPlacement::pre) return cache.normed;
    return cache.stream[(blocks.size() - 1) % 2];
}

void Trunk::backward(TrunkCache& cache, TrunkGrad& grads) const {
    const std::size_t batch = cache.tokens.shape(0), t = cache.tokens.shape(1), c = config_.d_model;
    const Tensor3* dblocks = &cache.dh;  // (B, T', C)
    if (config_.norm == NormPlacement::pre) {
        ln_f.backward(cache.dh, cache.ln_f, grads.ln_f, cache.dnorm);
        dblocks = &cache.dnorm;
    }
    const bool learned = config_.positional == PositionalKind::learned;
    detail::set_input_table_gradients(cache, grads.tok_emb.weight, learned ? &grads.pos_emb : nullptr);
    blocks_backward(*dblocks, cache, grads.blocks);
    const Tensor3& dx = cache.dx;  // (B, T', C)
    if (learned) learned_positional_backward(dx, 0, grads.pos_emb);
    if (cls_token.size() == 0) {
        tok_emb.backward(cache.tokens, dx, grads.tok_emb);
        return;
    }
    // x[b, 0] = cls_token  =>  dcls += Σ_b dx[b, 0]; the token rows are x[:, 1:]
    const std::size_t positions = cache.positions;
    Tensor3& dtok = cache.dtokens;  // (B, T, C)
    dtok.resize({batch, t, c});
    for (std::size_t b = 0; b < batch; ++b) {
        const float* src = dx.data() + b * positions * c;
        for (std::size_t j = 0; j < c; ++j) grads.cls_token(j) += src[j];
        std::copy_n(src + c, t * c, dtok.data() + b * t * c);
    }
    tok_emb.backward(cache.tokens, dtok, grads.tok_emb);
}

void Trunk::blocks_backward(const Tensor3& dout, TrunkCache& cache, std::vector<TransformerBlockGrad>& grads) const {
    // The gradient between blocks alternates between two buffers (a block's dout and dx must
    // differ); the first block writes straight into dx.
    Tensor3& even = cache.dstream[0];
    Tensor3& odd = cache.dstream[1];
    Tensor3& dx = cache.dx;
    const Tensor3* d = &dout;
    for (std::size_t l = blocks.size(); l-- > 0;) {
        Tensor3& out = l == 0 ? dx : (d == &even ? odd : even);
        blocks[l].backward(*d, cache.blocks[l], cache.options, grads[l], out);
        d = &out;
    }
    if (blocks.empty()) dx = dout;
}

Tensor3 Trunk::forward_incremental(const Index2& tokens, std::size_t offset, std::vector<KvCache>& kv) const {
    const AttentionOptions options = attention_options();
    kv.resize(blocks.size());
    Tensor3 x = tok_emb.forward(tokens);  // (1, T_new, C)
    add_positional(x, config_.positional, pos_emb, offset);
    for (std::size_t l = 0; l < blocks.size(); ++l) x = blocks[l].forward_incremental(x, kv[l], options);
    if (config_.norm == NormPlacement::pre) x = ln_f.forward(x);
    return x;
}

Tensor4 Trunk::attention_maps(const Index2& tokens, const Mask2& padding, bool causal, std::size_t batch,
                              const char* where, const char* forward_where) const {
    if (batch >= tokens.shape(0)) fail<ValueError>(where, ": batch ", batch, " out of range for B = ", tokens.shape(0));
    check_input(tokens, padding, forward_where);
    AttentionMapRecorder recorder(blocks.size());
    TrunkCache local;
    forward(tokens, padding, causal, recorder.observers(), local, /*training=*/false);
    return recorder.maps(batch, config_.num_heads);
}

const std::vector<StageObserver*>& Trunk::start_attention_stats(std::size_t positions) {
    static const std::vector<StageObserver*> kNone;
    if (!record_stats_) return kNone;
    return stats_collector_.start(blocks.size(), config_.num_heads, positions * positions);
}

void Trunk::finish_attention_stats() {
    if (record_stats_) stats_collector_.finish(stats_);
}

void Trunk::parameters(std::vector<ParameterView>& out) {
    const auto emb = tok_emb.parameters("tok_emb.");
    out.insert(out.end(), emb.begin(), emb.end());
    if (pos_emb.table.size() > 0) out.push_back(view_of("pos_emb.weight", pos_emb.table));
    if (cls_token.size() > 0) out.push_back(view_of("cls_token", cls_token));
    for (std::size_t l = 0; l < blocks.size(); ++l) {
        const auto views = blocks[l].parameters("blocks." + std::to_string(l) + ".");
        out.insert(out.end(), views.begin(), views.end());
    }
    if (ln_f.width() > 0) {
        const auto views = ln_f.parameters("ln_f.");
        out.insert(out.end(), views.begin(), views.end());
    }
}

}  // namespace attnlab
