#include "attnlab/interp/direct_logit_attribution.hpp"

#include <cmath>

#include "attnlab/core/error.hpp"
#include "attnlab/interp/run.hpp"

namespace attnlab::interp {
namespace {

// The frozen final LayerNorm followed by the unembedding row, as a linear map of one part p (C):
// Σ_k u_k γ_k (p_k - mean(p)) / σ.
struct FrozenReadout {
    std::vector<double> coef;  // (C) u_k γ_k / σ
    double operator()(const float* p) const {
        const std::size_t c = coef.size();
        double mean = 0.0, dot = 0.0, coef_sum = 0.0;
        for (std::size_t k = 0; k < c; ++k) mean += p[k];
        mean /= static_cast<double>(c);
        for (std::size_t k = 0; k < c; ++k) dot += coef[k] * p[k], coef_sum += coef[k];
        return dot - mean * coef_sum;
    }
};
}  // namespace

double Attribution::total() const {
    double s = embed + ln_bias;
    for (double x : heads) s += x;
    for (double x : attn_bias) s += x;
    for (double x : mlp) s += x;
    return s;
}

Attribution direct_logit_attribution(const DecoderLM& model, const std::vector<std::int32_t>& tokens,
                                     std::size_t position, std::int32_t token) {
    constexpr const char* where = "interp::direct_logit_attribution";
    const ModelConfig& cfg = model.config();
    if (cfg.norm != NormPlacement::pre) {
        fail<ConfigError>(where, ": a post-LN model normalises its stream inside every block, so its logit is not a sum "
                                 "of the heads' outputs; direct logit attribution needs a pre-LN model");
    }
    check_tokens(model, tokens, where);
    if (position >= tokens.size()) fail<ValueError>(where, ": position ", position, " out of range for ", tokens.size(), " tokens");
    if (token < 0 || static_cast<std::size_t>(token) >= cfg.vocab_size) {
        fail<ValueError>(where, ": token ", token, " is outside the vocabulary 0..", cfg.vocab_size - 1);
    }
    const Run r = run(model, tokens);
    const std::size_t layers = cfg.num_layers, heads = cfg.num_heads, c = cfg.d_model, d = c / heads;
    const LayerNorm& ln = model.trunk.ln_f;
    const float* x = r.residuals[layers].data() + position * c;  // the final stream (C)
    double mean = 0.0, var = 0.0;
    for (std::size_t k = 0; k < c; ++k) mean += x[k];
    mean /= static_cast<double>(c);
    for (std::size_t k = 0; k < c; ++k) var += (x[k] - mean) * (x[k] - mean);
    const double sigma = std::sqrt(var / static_cast<double>(c) + double(ln.eps()));
    const float* u = model.head_weight().data() + static_cast<std::size_t>(token) * c;  // W_U[token] (C)
    FrozenReadout read{std::vector<double>(c)};
    Attribution a;
    for (std::size_t k = 0; k < c; ++k) {
        read.coef[k] = double(u[k]) * double(ln.weight(k)) / sigma;
        a.ln_bias += double(u[k]) * double(ln.bias(k));
    }
    a.logit = double(r.logits(position, static_cast<std::size_t>(token)));
    a.embed = read(r.residuals[0].data() + position * c);
    a.heads = Tensor2::from_shape({layers, heads});
    std::vector<float> part(c), attn_out(c);
    for (std::size_t l = 0; l < layers; ++l) {
        const Linear& wo = model.trunk.blocks[l].attn.out_proj;  // (C, C): out = z · W_Oᵀ + b_O
        const float* z = r.head_outputs[l].data() + position * c;
        std::fill(attn_out.begin(), attn_out.end(), 0.0f);
        for (std::size_t h = 0; h < heads; ++h) {
            for (std::size_t o = 0; o < c; ++o) {
                double s = 0.0;
                for (std::size_t k = h * d; k < (h + 1) * d; ++k) s += double(wo.weight(o, k)) * z[k];
                part[o] = static_cast<float>(s);
                attn_out[o] += part[o];
            }
            a.heads(l, h) = static_cast<float>(read(part.data()));
        }
        const bool bias = wo.has_bias();
        for (std::size_t o = 0; o < c; ++o) part[o] = bias ? wo.bias(o) : 0.0f;
        a.attn_bias.push_back(read(part.data()));
        for (std::size_t o = 0; o < c; ++o) {
            attn_out[o] += part[o];
            const std::size_t at = position * c + o;
            part[o] = r.residuals[l + 1].data()[at] - r.residuals[l].data()[at] - attn_out[o];
        }
        a.mlp.push_back(read(part.data()));
    }
    return a;
}

}  // namespace attnlab::interp
