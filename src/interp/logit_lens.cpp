#include "attnlab/interp/logit_lens.hpp"

#include <algorithm>
#include <numeric>

#include "attnlab/core/error.hpp"
#include "attnlab/interp/run.hpp"
#include "attnlab/kernels/matmul.hpp"

namespace attnlab::interp {

Tensor2 logit_lens(const DecoderLM& model, const std::vector<std::int32_t>& tokens, std::size_t position) {
    constexpr const char* where = "interp::logit_lens";
    check_tokens(model, tokens, where);
    if (position >= tokens.size()) fail<ValueError>(where, ": position ", position, " out of range for ", tokens.size(), " tokens");
    const Run r = run(model, tokens);
    const std::size_t layers = model.config().num_layers, c = model.config().d_model;
    Tensor3 stream = Tensor3::from_shape({1, layers + 1, c});  // the position's row of every residual
    for (std::size_t l = 0; l <= layers; ++l) std::copy_n(r.residuals[l].data() + position * c, c, stream.data() + l * c);
    if (model.config().norm == NormPlacement::pre) stream = model.trunk.ln_f.forward(stream);
    const Tensor2& w = model.head_weight();  // (V, C)
    const std::size_t v = w.shape(0);
    Tensor2 out = Tensor2::from_shape({layers + 1, v});
    kernels::matmul_nt(stream.data(), c, w.data(), c, out.data(), v, layers + 1, v, c);
    return out;
}

std::vector<std::int32_t> top_ids(const Tensor2& rows, std::size_t r, std::size_t k) {
    const std::size_t v = rows.shape(1);
    const float* x = rows.data() + r * v;
    std::vector<std::int32_t> ids(v);
    std::iota(ids.begin(), ids.end(), 0);
    k = std::min(k, v);
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                      [&](std::int32_t a, std::int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
    ids.resize(k);
    return ids;
}

}  // namespace attnlab::interp
