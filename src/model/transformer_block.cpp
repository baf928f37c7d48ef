#include "attnlab/model/transformer_block.hpp"

#include <algorithm>
#include <cmath>

#include "attnlab/core/thread_pool.hpp"

namespace attnlab {

namespace {
// Elements per chunk of the residual sums before they are split across threads.
constexpr std::size_t kAddGrain = std::size_t{1} << 15;

// a += b elementwise (same shape): the residual connections.
void add_in_place(Tensor3& a, const Tensor3& b) {
    float* pa = a.data();
    const float* pb = b.data();
    parallel_for(
        0, a.size(),
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) pa[i] += pb[i];
        },
        kAddGrain);
}

std::size_t mha_cache_bytes(const MultiHeadAttentionCache& c) {
    return (c.x.size() + c.memory.size() + c.q.size() + c.k.size() + c.v.size() + c.attention.weights.size() +
            c.concat.size()) *
               sizeof(float) +
           c.linear.bytes();
}

// out = a + b elementwise (same shape; out may be a or b): a residual connection.
void add(const Tensor3& a, const Tensor3& b, Tensor3& out) {
    if (&out != &a && &out != &b) out.resize(a.shape());
    const float* pa = a.data();
    const float* pb = b.data();
    float* po = out.data();
    parallel_for(
        0, a.size(),
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) po[i] = pa[i] + pb[i];
        },
        kAddGrain);
}
// Dropout on a sub-layer output, in place: identity (and an empty mask) unless training with p > 0.
void maybe_dropout(Tensor3& y, float p, Rng* rng, DropoutCache* cache) {
    if (rng && p > 0.0f) {
        dropout_forward(y, p, *rng, cache, y);
        return;
    }
    if (cache) *cache = DropoutCache{};
}
// The gradient through maybe_dropout: dout itself when the forward was the identity (no copy),
// else dropout_backward's result in tmp.
const Tensor3& dropout_gradient(const Tensor3& dout, const DropoutCache& cache, Tensor3& tmp) {
    if (cache.keep.size() == 0) return dout;
    dropout_backward(dout, cache, tmp);
    return tmp;
}
}  // namespace

std::size_t TransformerBlockCache::cache_bytes() const {
    return x.size() * sizeof(float) + sizeof(Rng) + ln1.bytes() + mha_cache_bytes(attn) + attn_drop.bytes() +
           ln2.bytes() + ffn.bytes() + ffn_drop.bytes();
}

TransformerBlock::TransformerBlock(const ModelConfig& config, Rng& rng)
    : norm_(config.norm), dropout_(config.dropout), checkpointing_(config.gradient_checkpointing),
      attention_only_(config.attention_only) {
    config.validate();
    ln1 = LayerNorm(config.d_model, config.layer_norm_eps);
    attn = MultiHeadAttention(config.attention_config(), rng);
    if (attention_only_) return;  // no ln2, no feed-forward: nothing more drawn from rng
    ln2 = LayerNorm(config.d_model, config.layer_norm_eps);
    ffn = FeedForward(config.d_model, config.ff_dim, config.activation, config.bias, rng);
}

Tensor3 TransformerBlock::forward(const Tensor3& x, const AttentionOptions& options, StageObserver* observer,
                                  TransformerBlockCache* cache, Rng* dropout_rng) const {
    Tensor3 y;
    forward(x, options, observer, cache, dropout_rng, y);
    return y;
}

void TransformerBlock::forward(const Tensor3& x, const AttentionOptions& options, StageObserver* observer,
                               TransformerBlockCache* cache, Rng* dropout_rng, Tensor3& y) const {
    if (!cache) {
        forward_full(x, options, observer, nullptr, dropout_rng, y);
        return;
    }
    const bool dropout = dropout_rng != nullptr && dropout_ > 0.0f;
    const Rng rng_before = dropout ? *dropout_rng : Rng(0);
    if (!checkpointing_) {
        // The sub-layer caches are overwritten in place: a training loop reuses their buffers.
        cache->checkpointed = false;
        cache->x = Tensor3();
        cache->dropout = dropout;
        cache->dropout_rng = rng_before;
        forward_full(x, options, observer, cache, dropout_rng, y);
        return;
    }
    // Checkpointing: run without sub-layer caches and keep only what recomputation needs.
    *cache = TransformerBlockCache();
    cache->dropout = dropout;
    cache->dropout_rng = rng_before;
    forward_full(x, options, observer, nullptr, dropout_rng, y);
    cache->checkpointed = true;
    cache->x = x;
}

void TransformerBlock::forward_full(const Tensor3& x, const AttentionOptions& options, StageObserver* observer,
                                    TransformerBlockCache* cache, Rng* dropout_rng, Tensor3& y) const {
    TransformerBlockCache local;  // inference and checkpointing: this call's own
    TransformerBlockCache& c = cache ? *cache : local;
    TransformerBlockCache::Scratch& w = c.scratch;
    // Without dropout each residual sum r = a + sublayer(..) is made in the store of the
    // sub-layer's last product (W_O, fc2), not in a pass of its own; the same sums, bit for bit.
    // With dropout the sub-layer's output is dropped out first, then added.
    const bool dropping = dropout_rng != nullptr && dropout_ > 0.0f;
    // out = residual + drop(sublayer output): the sub-layer has written its output to w.sub
    const auto add_dropped = [&](const Tensor3& residual, DropoutCache& drop, Tensor3& out) {
        maybe_dropout(w.sub, dropout_, dropout_rng, &drop);
        add(residual, w.sub, out);
    };
    // A sub-layer keeps its input in its cache (c.attn.x, c.ffn.x): a LayerNorm in front of
    // it writes there directly, and the sub-layer then has nothing to copy.
    if (norm_ == NormPlacement::pre) {
        // h = x + drop(attn(ln1(x))); h is kept as ln2's input in its cache
        Tensor3& normed1 = c.attn.x;
        ln1.forward(x, &c.ln1, normed1);  // (B, T, C)
        Tensor3& h = attention_only_ ? y : c.ln2.x;  // attention_only: y = h
        if (dropping) {
            attn.forward(normed1, nullptr, options, observer, &c.attn, w.sub);  // (B, T, C)
            add_dropped(x, c.attn_drop, h);
        } else {
            attn.forward(normed1, nullptr, options, observer, &c.attn, h, &x);
            c.attn_drop = DropoutCache{};
        }
        if (attention_only_) return;
        // y = h + drop(ffn(ln2(h)))
        Tensor3& normed2 = c.ffn.x;
        ln2.forward_cached_input(c.ln2, normed2);
        if (dropping) {
            ffn.forward(normed2, &c.ffn, w.sub);
            add_dropped(h, c.ffn_drop, y);
        } else {
            ffn.forward(normed2, &c.ffn, y, &h);
            c.ffn_drop = DropoutCache{};
        }
        return;
    }
    // h = ln1(r1), r1 = x + drop(attn(x)); r1 is computed straight into ln1's cache
    if (dropping) {
        attn.forward(x, nullptr, options, observer, &c.attn, w.sub);
        add_dropped(x, c.attn_drop, c.ln1.x);
    } else {
        attn.forward(x, nullptr, options, observer, &c.attn, c.ln1.x, &x);
        c.attn_drop = DropoutCache{};
    }
    if (attention_only_) {
        ln1.forward_cached_input(c.ln1, y);  // y = h = ln1(r1)
        return;
    }
    Tensor3& h = c.ffn.x;
    ln1.forward_cached_input(c.ln1, h);
    // y = ln2(r2), r2 = h + drop(ffn(h)); r2 straight into ln2's cache
    if (dropping) {
        ffn.forward(h, &c.ffn, w.sub);
        add_dropped(h, c.ffn_drop, c.ln2.x);
    } else {
        ffn.forward(h, &c.ffn, c.ln2.x, &h);
        c.ffn_drop = DropoutCache{};
    }
    ln2.forward_cached_input(c.ln2, y);
}

void TransformerBlock::backward(const Tensor3& dout, const TransformerBlockCache& cache,
                                const AttentionOptions& options, TransformerBlockGrad& grads, Tensor3& dx) const {
    if (cache.checkpointed) {
        // Recompute the forward from the kept input with the same dropout masks, then differentiate.
        TransformerBlockCache full;
        Rng rng = cache.dropout_rng;
        Tensor3 y;
        forward_full(cache.x, options, nullptr, &full, cache.dropout ? &rng : nullptr, y);
        backward(dout, full, options, grads, dx);
        return;
    }
    // Intermediate gradients in the cache's scratch: no allocation from step to step.
    TransformerBlockCache::Scratch& w = cache.scratch;
    if (attention_only_) {
        backward_attention_only(dout, cache, options, grads, dx);
        return;
    }
    if (norm_ == NormPlacement::pre) {
        // y = h + drop(ffn(ln2(h)))  =>  dh = dy + ln2ᵀ(ffnᵀ(dropᵀ(dy)))
        ffn.backward(dropout_gradient(dout, cache.ffn_drop, w.tmp), cache.ffn, grads.ffn, w.dsub);
        ln2.backward(w.dsub, cache.ln2, grads.ln2, w.dh);
        add_in_place(w.dh, dout);
        // h = x + drop(attn(ln1(x)))  =>  dx = dh + ln1ᵀ(attnᵀ(dropᵀ(dh)))
        attn.backward(dropout_gradient(w.dh, cache.attn_drop, w.tmp), cache.attn, options, grads.attn, w.dsub);
        ln1.backward(w.dsub, cache.ln1, grads.ln1, dx);
        add_in_place(dx, w.dh);
        return;
    }
    // y = ln2(r2), r2 = h + drop(ffn(h))  =>  dh = dr2 + ffnᵀ(dropᵀ(dr2)), the sum made in the
    // store of fc1's dx (the same sum as a pass of its own, bit for bit)
    ln2.backward(dout, cache.ln2, grads.ln2, w.dr2);
    ffn.backward(dropout_gradient(w.dr2, cache.ffn_drop, w.tmp), cache.ffn, grads.ffn, w.dh, &w.dr2);
    // h = ln1(r1), r1 = x + drop(attn(x))  =>  dx = dr1 + attnᵀ(dropᵀ(dr1)), summed in W_V's dx store
    ln1.backward(w.dh, cache.ln1, grads.ln1, w.dr1);
    attn.backward(dropout_gradient(w.dr1, cache.attn_drop, w.tmp), cache.attn, options, grads.attn, dx, nullptr,
                  &w.dr1);
}

void TransformerBlock::backward_attention_only(const Tensor3& dout, const TransformerBlockCache& cache,
                                               const AttentionOptions& options, TransformerBlockGrad& grads,
                                               Tensor3& dx) const {
    TransformerBlockCache::Scratch& w = cache.scratch;
    if (norm_ == NormPlacement::pre) {
        // y = x + drop(attn(ln1(x)))  =>  dx = dy + ln1ᵀ(attnᵀ(dropᵀ(dy)))
        attn.backward(dropout_gradient(dout, cache.attn_drop, w.tmp), cache.attn, options, grads.attn, w.dsub);
        ln1.backward(w.dsub, cache.ln1, grads.ln1, dx);
        add_in_place(dx, dout);
        return;
    }
    // y = ln1(r1), r1 = x + drop(attn(x))  =>  dx = dr1 + attnᵀ(dropᵀ(dr1)), summed in W_V's dx store
    ln1.backward(dout, cache.ln1, grads.ln1, w.dr1);
    attn.backward(dropout_gradient(w.dr1, cache.attn_drop, w.tmp), cache.attn, options, grads.attn, dx, nullptr,
                  &w.dr1);
}

Tensor3 TransformerBlock::forward_incremental(const Tensor3& x, KvCache& kv, const AttentionOptions& options,
                                              StageObserver* observer) const {
    if (norm_ == NormPlacement::pre) {
        Tensor3 h = attn.forward_incremental(ln1.forward(x), kv, options, observer);
        add_in_place(h, x);
        if (attention_only_) return h;
        Tensor3 y = ffn.forward(ln2.forward(h));
        add_in_place(y, h);
        return y;
    }
    Tensor3 r1 = attn.forward_incremental(x, kv, options, observer);
    add_in_place(r1, x);
    const Tensor3 h = ln1.forward(r1);
    if (attention_only_) return h;
    Tensor3 r2 = ffn.forward(h);
    add_in_place(r2, h);
    return ln2.forward(r2);
}

std::vector<ParameterView> TransformerBlock::parameters(const std::string& prefix) {
    std::vector<ParameterView> out = ln1.parameters(prefix + "ln1.");
    if (attention_only_) {
        const std::vector<ParameterView> a = attn.parameters(prefix + "attn.");
        out.insert(out.end(), a.begin(), a.end());
        return out;
    }
    for (auto& list : {attn.parameters(prefix + "attn."), ln2.parameters(prefix + "ln2."),
                       ffn.parameters(prefix + "ffn.")}) {
        out.insert(out.end(), list.begin(), list.end());
    }
    return out;
}

TransformerBlockGrad::TransformerBlockGrad(const TransformerBlock& block)
    : ln1(block.ln1), attn(block.attn), ln2(block.ln2), ffn(block.ffn), attention_only(block.attention_only()) {}

void TransformerBlockGrad::zero() {
    ln1.zero();
    attn.zero();
    ln2.zero();
    ffn.zero();
}

std::vector<ParameterView> TransformerBlockGrad::views(const std::string& prefix) {
    std::vector<ParameterView> out = ln1.views(prefix + "ln1.");
    if (attention_only) {
        const std::vector<ParameterView> a = attn.views(prefix + "attn.");
        out.insert(out.end(), a.begin(), a.end());
        return out;
    }
    for (auto& list : {attn.views(prefix + "attn."), ln2.views(prefix + "ln2."), ffn.views(prefix + "ffn.")}) {
        out.insert(out.end(), list.begin(), list.end());
    }
    return out;
}

}  // namespace attnlab
