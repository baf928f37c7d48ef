#include "attnlab/interp/ablation.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "attnlab/core/error.hpp"
#include "attnlab/interp/run.hpp"

namespace attnlab::interp {
namespace {

// log Σ exp(row), in double: logits (T, V) row r.
double log_sum_exp(const Tensor2& logits, std::size_t r) {
    const std::size_t v = logits.shape(1);
    const float* x = logits.data() + r * v;
    const double top = *std::max_element(x, x + v);
    double s = 0.0;
    for (std::size_t i = 0; i < v; ++i) s += std::exp(double(x[i]) - top);
    return top + std::log(s);
}

// The replacement of one head's output: zeros, or its clean output's mean over positions.
Tensor2 ablated_value(const Run& clean, std::size_t layer, std::size_t head, std::size_t d, AblationMethod method) {
    const Tensor2 z = head_slice(clean.head_outputs[layer], head, d);  // (T, D)
    Tensor2 out = xt::zeros<float>(z.shape());
    if (method == AblationMethod::zero) return out;
    const std::size_t t = z.shape(0);
    for (std::size_t k = 0; k < d; ++k) {
        double s = 0.0;
        for (std::size_t i = 0; i < t; ++i) s += z(i, k);
        for (std::size_t i = 0; i < t; ++i) out(i, k) = static_cast<float>(s / static_cast<double>(t));
    }
    return out;
}

Ablation compare(const Run& clean, const Run& ablated) {
    const std::size_t t = clean.tokens.size();
    Ablation a;
    a.loss_clean = next_token_loss(clean.logits, clean.tokens);
    a.loss_ablated = next_token_loss(ablated.logits, clean.tokens);
    double kl = 0.0;
    for (std::size_t i = 0; i < t; ++i) kl += kl_divergence(clean.logits, ablated.logits, i);
    a.kl_mean = kl / static_cast<double>(t);
    a.kl_last = kl_divergence(clean.logits, ablated.logits, t - 1);
    a.probs_clean = softmax_row(clean.logits, t - 1);
    a.probs_ablated = softmax_row(ablated.logits, t - 1);
    return a;
}

Ablation ablate_after(const DecoderLM& model, const Run& clean, const std::vector<HeadId>& heads, AblationMethod method) {
    const std::size_t d = model.config().d_model / model.config().num_heads;
    Edits edits;
    for (const auto& [layer, head] : heads) edits.heads.push_back({layer, head, ablated_value(clean, layer, head, d, method)});
    return compare(clean, run(model, clean.tokens, edits));
}

void check_ablation_input(const DecoderLM& model, const std::vector<std::int32_t>& tokens, const char* where) {
    check_tokens(model, tokens, where);
    if (tokens.size() < 2) fail<ValueError>(where, ": needs at least 2 tokens (the loss scores each next token), got ", tokens.size());
}
}  // namespace

double next_token_loss(const Tensor2& logits, const std::vector<std::int32_t>& tokens) {
    const std::size_t t = tokens.size(), v = logits.shape(1);
    double s = 0.0;
    for (std::size_t i = 0; i + 1 < t; ++i) s += log_sum_exp(logits, i) - double(logits.data()[i * v + tokens[i + 1]]);
    return s / static_cast<double>(t - 1);
}

Tensor1 softmax_row(const Tensor2& logits, std::size_t row) {
    const std::size_t v = logits.shape(1);
    const double lse = log_sum_exp(logits, row);
    Tensor1 p = Tensor1::from_shape({v});
    for (std::size_t i = 0; i < v; ++i) p(i) = static_cast<float>(std::exp(double(logits(row, i)) - lse));
    return p;
}

double kl_divergence(const Tensor2& a, const Tensor2& b, std::size_t row) {
    const std::size_t v = a.shape(1);
    const double la = log_sum_exp(a, row), lb = log_sum_exp(b, row);
    double kl = 0.0;
    for (std::size_t i = 0; i < v; ++i) {
        const double lpa = double(a(row, i)) - la, lpb = double(b(row, i)) - lb;
        kl += std::exp(lpa) * (lpa - lpb);
    }
    return std::max(kl, 0.0);  // rounding can leave -1e-17 for equal rows
}

Ablation ablate(const DecoderLM& model, const std::vector<std::int32_t>& tokens, const std::vector<HeadId>& heads,
                AblationMethod method) {
    constexpr const char* where = "interp::ablate";
    check_ablation_input(model, tokens, where);
    if (heads.empty()) fail<ValueError>(where, ": name at least one head to ablate");
    std::set<HeadId> seen;
    for (const auto& [layer, head] : heads) {
        check_head(model, layer, head, where);
        if (!seen.insert({layer, head}).second) fail<ValueError>(where, ": head ", layer, ".", head, " is named twice");
    }
    return ablate_after(model, run(model, tokens), heads, method);
}

std::vector<Ablation> ablate_each(const DecoderLM& model, const std::vector<std::int32_t>& tokens, AblationMethod method) {
    check_ablation_input(model, tokens, "interp::ablate_each");
    const Run clean = run(model, tokens);
    std::vector<Ablation> out;
    for (std::size_t l = 0; l < model.config().num_layers; ++l)
        for (std::size_t h = 0; h < model.config().num_heads; ++h) out.push_back(ablate_after(model, clean, {{l, h}}, method));
    return out;
}

}  // namespace attnlab::interp
