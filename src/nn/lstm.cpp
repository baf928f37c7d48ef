// The LSTM, forward and backward through time (attnlab/nn/lstm.hpp).
//
// Legend: B batch, T time steps, I input width, H hidden width, L layers, G = 4H gates
// (i, f, g, o, each H wide, PyTorch's order), In a layer's input width (I for layer 0, else H).
// Inside the cache everything is time-major, (T, B, ·): the B rows of one step are contiguous,
// so every step's products and cell are plain (B, ·) matrices, and the rows of all steps
// together are one (T·B, ·) matrix for the products that do not depend on the recurrence.
#include "attnlab/nn/lstm.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "attnlab/core/column_sums.hpp"
#include "attnlab/kernels/elementwise.hpp"
#include "attnlab/kernels/matmul.hpp"

namespace attnlab {
namespace {

// src: (outer, inner, width) -> dst: (inner, outer, width), the batch-first <-> time-major swap.
void swap_outer_axes(const float* src, float* dst, std::size_t outer, std::size_t inner, std::size_t width) {
    for (std::size_t i = 0; i < outer; ++i) {
        for (std::size_t j = 0; j < inner; ++j) {
            std::memcpy(dst + (j * outer + i) * width, src + (i * inner + j) * width, width * sizeof(float));
        }
    }
}

// src: (R, C) -> dst: (C, R)
void transpose(const float* src, float* dst, std::size_t rows, std::size_t cols) {
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
    }
}

template <std::size_t N>
void resize(Array<float, N>& t, const std::array<std::size_t, N>& shape) {
    t.resize(shape);
}

}  // namespace

Lstm::Lstm(const LstmConfig& config, Rng& rng) : config_(config) {
    if (config.input_size == 0 || config.hidden_size == 0) {
        fail<ConfigError>("Lstm: input_size and hidden_size must be positive, got input_size=", config.input_size,
                          ", hidden_size=", config.hidden_size);
    }
    if (config.num_layers == 0) fail<ConfigError>("Lstm: num_layers must be >= 1, got 0");
    const std::size_t H = config.hidden_size, G = 4 * H;
    require_allocatable({G, std::max(config.input_size, H)}, "Lstm", "a layer's weight");
    // torch.nn.LSTM.reset_parameters: every parameter ~ U(-1/√H, 1/√H).
    const float bound = 1.0f / std::sqrt(static_cast<float>(H));
    layers.resize(config.num_layers);
    for (std::size_t l = 0; l < config.num_layers; ++l) {
        LstmLayer& layer = layers[l];
        layer.weight_ih = Tensor2::from_shape({G, l == 0 ? config.input_size : H});
        layer.weight_hh = Tensor2::from_shape({G, H});
        if (config.bias) {
            layer.bias_ih = Tensor1::from_shape({G});
            layer.bias_hh = Tensor1::from_shape({G});
        }
    }
    for (const ParameterView& p : parameters()) {
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] = rng.uniform(-bound, bound);
    }
}

std::vector<ParameterView> Lstm::parameters(const std::string& prefix) {
    std::vector<ParameterView> views;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const std::string k = std::to_string(l);
        views.push_back(view_of(prefix + "weight_ih_l" + k, layers[l].weight_ih));
        views.push_back(view_of(prefix + "weight_hh_l" + k, layers[l].weight_hh));
        if (config_.bias) {
            views.push_back(view_of(prefix + "bias_ih_l" + k, layers[l].bias_ih));
            views.push_back(view_of(prefix + "bias_hh_l" + k, layers[l].bias_hh));
        }
    }
    return views;
}

std::size_t Lstm::parameter_count() const {
    std::size_t n = 0;
    for (const LstmLayer& layer : layers) {
        n += layer.weight_ih.size() + layer.weight_hh.size() + layer.bias_ih.size() + layer.bias_hh.size();
    }
    return n;
}

LstmGrad::LstmGrad(const Lstm& lstm) {
    layers.resize(lstm.layers.size());
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const LstmLayer& p = lstm.layers[l];
        layers[l].weight_ih = xt::zeros<float>(p.weight_ih.shape());
        layers[l].weight_hh = xt::zeros<float>(p.weight_hh.shape());
        layers[l].bias_ih = xt::zeros<float>(p.bias_ih.shape());
        layers[l].bias_hh = xt::zeros<float>(p.bias_hh.shape());
    }
}

void LstmGrad::zero() {
    for (LstmLayer& g : layers) {
        g.weight_ih.fill(0.0f);
        g.weight_hh.fill(0.0f);
        g.bias_ih.fill(0.0f);
        g.bias_hh.fill(0.0f);
    }
}

std::vector<ParameterView> LstmGrad::views(const std::string& prefix) {
    std::vector<ParameterView> out;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const std::string k = std::to_string(l);
        out.push_back(view_of(prefix + "weight_ih_l" + k, layers[l].weight_ih));
        out.push_back(view_of(prefix + "weight_hh_l" + k, layers[l].weight_hh));
        if (layers[l].bias_ih.size() > 0) {
            out.push_back(view_of(prefix + "bias_ih_l" + k, layers[l].bias_ih));
            out.push_back(view_of(prefix + "bias_hh_l" + k, layers[l].bias_hh));
        }
    }
    return out;
}

// s: (L, B, H) or null.
void Lstm::check_state(const Tensor3* s, std::size_t batch, const char* where, const char* what) const {
    if (!s) return;
    const std::size_t L = config_.num_layers, H = config_.hidden_size;
    if (s->shape(0) != L || s->shape(1) != batch || s->shape(2) != H) {
        fail<ShapeError>(where, ": ", what, " must be (num_layers, B, H) = (", L, ", ", batch, ", ", H, "), got ",
                         shape_string(s->shape()));
    }
}

// x: (B, T, I); h0, c0: (L, B, H) or null -> out.output (B, T, H), out.h, out.c (L, B, H).
void Lstm::forward(const Tensor3& x, const Tensor3* h0, const Tensor3* c0, LstmCache& cache, LstmOutput& out) const {
    constexpr const char* where = "Lstm::forward";
    if (layers.empty()) fail<ConfigError>(where, ": the LSTM has no layers (default-constructed)");
    const std::size_t B = x.shape(0), T = x.shape(1), I = config_.input_size, H = config_.hidden_size;
    const std::size_t L = config_.num_layers, G = 4 * H;
    if (x.shape(2) != I) {
        fail<ShapeError>(where, ": x must be (B, T, input_size) = (B, T, ", I, "), got ", shape_string(x.shape()));
    }
    if (B == 0 || T == 0) fail<ShapeError>(where, ": x must have B >= 1 and T >= 1, got ", shape_string(x.shape()));
    check_state(h0, B, where, "h0");
    check_state(c0, B, where, "c0");

    resize<3>(cache.x, {T, B, I});
    swap_outer_axes(x.data(), cache.x.data(), B, T, I);
    cache.layers.resize(L);
    for (std::size_t l = 0; l < L; ++l) {
        const LstmLayer& p = layers[l];
        LstmLayerCache& lc = cache.layers[l];
        const std::size_t In = l == 0 ? I : H;
        // (T, B, In): x, or the layer below's h_0 .. h_{T-1} (its h rows after h0)
        const float* in = l == 0 ? cache.x.data() : cache.layers[l - 1].h.data() + B * H;
        resize<3>(lc.gates, {T, B, G});
        resize<3>(lc.h, {T + 1, B, H});
        resize<3>(lc.c, {T + 1, B, H});
        resize<3>(lc.tanh_c, {T, B, H});
        resize<2>(lc.weight_hh_t, {H, G});
        transpose(p.weight_hh.data(), lc.weight_hh_t.data(), G, H);
        if (h0) {
            std::copy_n(h0->data() + l * B * H, B * H, lc.h.data());
        } else {
            std::fill_n(lc.h.data(), B * H, 0.0f);
        }
        if (c0) {
            std::copy_n(c0->data() + l * B * H, B * H, lc.c.data());
        } else {
            std::fill_n(lc.c.data(), B * H, 0.0f);
        }

        // a_t = x_t·W_ihᵀ + b_ih + b_hh for all t at once: (T·B, G). b_ih goes in with the
        // matmul's store, b_hh as a pass of its own (as PyTorch, which adds both).
        kernels::matmul_nt(in, In, p.weight_ih.data(), In, lc.gates.data(), G, T * B, G, In, Accumulate::no,
                           config_.bias ? p.bias_ih.data() : nullptr);
        if (config_.bias) {
            float* a = lc.gates.data();
            const float* b = p.bias_hh.data();
            for (std::size_t r = 0; r < T * B; ++r) {
                for (std::size_t j = 0; j < G; ++j) a[r * G + j] += b[j];
            }
        }
        for (std::size_t t = 0; t < T; ++t) {
            float* a = lc.gates.data() + t * B * G;          // (B, G)
            const float* h_prev = lc.h.data() + t * B * H;  // (B, H)
            // a_t += h_{t-1}·W_hhᵀ, with W_hhᵀ (H, G) read in place
            kernels::matmul_nn(h_prev, H, lc.weight_hh_t.data(), G, a, G, B, G, H, Accumulate::yes);
            kernels::lstm_cell_forward(a, lc.c.data() + t * B * H, lc.c.data() + (t + 1) * B * H,
                                       lc.tanh_c.data() + t * B * H, lc.h.data() + (t + 1) * B * H, B, H);
        }
    }

    resize<3>(out.output, {B, T, H});
    swap_outer_axes(cache.layers[L - 1].h.data() + B * H, out.output.data(), T, B, H);
    resize<3>(out.h, {L, B, H});
    resize<3>(out.c, {L, B, H});
    for (std::size_t l = 0; l < L; ++l) {
        std::copy_n(cache.layers[l].h.data() + T * B * H, B * H, out.h.data() + l * B * H);
        std::copy_n(cache.layers[l].c.data() + T * B * H, B * H, out.c.data() + l * B * H);
    }
}

LstmOutput Lstm::forward(const Tensor3& x, const Tensor3* h0, const Tensor3* c0, LstmCache* cache) const {
    LstmCache local;
    LstmOutput out;
    forward(x, h0, c0, cache ? *cache : local, out);
    return out;
}

// x: (T, I); h0, c0: (L, H) or null -> output (T, H), h, c (L, H): the batch of one.
LstmOutputUnbatched Lstm::forward(const Tensor2& x, const Tensor2* h0, const Tensor2* c0) const {
    constexpr const char* where = "Lstm::forward";
    const std::size_t L = config_.num_layers, H = config_.hidden_size;
    const auto batch_of_one = [&](const Tensor2* s, const char* what, Tensor3& into) -> const Tensor3* {
        if (!s) return nullptr;
        if (s->shape(0) != L || s->shape(1) != H) {
            fail<ShapeError>(where, ": unbatched ", what, " must be (num_layers, H) = (", L, ", ", H, "), got ",
                             shape_string(s->shape()));
        }
        into = Tensor3::from_shape({L, 1, H});
        std::copy_n(s->data(), s->size(), into.data());
        return &into;
    };
    Tensor3 xb = Tensor3::from_shape({1, x.shape(0), x.shape(1)});
    std::copy_n(x.data(), x.size(), xb.data());
    Tensor3 h0b, c0b;
    const Tensor3* h0p = batch_of_one(h0, "h0", h0b);
    const Tensor3* c0p = batch_of_one(c0, "c0", c0b);
    const LstmOutput out = forward(xb, h0p, c0p);
    LstmOutputUnbatched result;
    result.output = Tensor2::from_shape({out.output.shape(1), H});
    std::copy_n(out.output.data(), out.output.size(), result.output.data());
    result.h = Tensor2::from_shape({L, H});
    std::copy_n(out.h.data(), out.h.size(), result.h.data());
    result.c = Tensor2::from_shape({L, H});
    std::copy_n(out.c.data(), out.c.size(), result.c.data());
    return result;
}

// dout: (B, T, H); dh, dc: (L, B, H) or null -> dx: (B, T, I), dh0, dc0: (L, B, H) or null;
// grads += the parameter gradients.
void Lstm::backward(const Tensor3& dout, const Tensor3* dh, const Tensor3* dc, LstmCache& cache, LstmGrad& grads,
                    Tensor3& dx, Tensor3* dh0, Tensor3* dc0) const {
    constexpr const char* where = "Lstm::backward";
    const std::size_t L = config_.num_layers, I = config_.input_size, H = config_.hidden_size, G = 4 * H;
    if (cache.empty() || cache.layers.size() != L) {
        fail<ConfigError>(where, ": the cache holds ", cache.layers.size(), " layers, expected ", L,
                          " (run forward with this cache first)");
    }
    const std::size_t B = cache.batch(), T = cache.steps();
    require_shape(dout, {std::ptrdiff_t(B), std::ptrdiff_t(T), std::ptrdiff_t(H)}, where, "dout");
    check_state(dh, B, where, "dh");
    check_state(dc, B, where, "dc");
    if (grads.layers.size() != L) {
        fail<ShapeError>(where, ": grads hold ", grads.layers.size(), " layers, expected ", L);
    }
    for (std::size_t l = 0; l < L; ++l) {
        require_shape_like(grads.layers[l].weight_ih, layers[l].weight_ih, where, "a grads weight_ih");
        require_shape_like(grads.layers[l].weight_hh, layers[l].weight_hh, where, "a grads weight_hh");
        require_shape_like(grads.layers[l].bias_ih, layers[l].bias_ih, where, "a grads bias_ih");
    }

    LstmCache::Scratch& s = cache.scratch;
    resize<3>(s.dgates, {T, B, G});
    resize<3>(s.dh, {T, B, H});
    resize<2>(s.dc, {B, H});
    swap_outer_axes(dout.data(), s.dh.data(), B, T, H);
    if (dh0) resize<3>(*dh0, {L, B, H});
    if (dc0) resize<3>(*dc0, {L, B, H});

    for (std::size_t l = L; l-- > 0;) {
        const LstmLayer& p = layers[l];
        LstmLayer& g = grads.layers[l];
        const LstmLayerCache& lc = cache.layers[l];
        const std::size_t In = l == 0 ? I : H;
        const float* in = l == 0 ? cache.x.data() : cache.layers[l - 1].h.data() + B * H;  // (T, B, In)
        float* const da = s.dgates.data();                                                  // (T, B, G)

        // The final state's gradients enter at the last step.
        if (dh) {
            float* d = s.dh.data() + (T - 1) * B * H;
            const float* e = dh->data() + l * B * H;
            for (std::size_t k = 0; k < B * H; ++k) d[k] += e[k];
        }
        if (dc) {
            std::copy_n(dc->data() + l * B * H, B * H, s.dc.data());
        } else {
            s.dc.fill(0.0f);
        }
        for (std::size_t t = T; t-- > 0;) {
            float* dh_t = s.dh.data() + t * B * H;  // (B, H)
            // h_t also fed a_{t+1} = ... + h_t·W_hhᵀ: dh_t += da_{t+1}·W_hh
            if (t + 1 < T) {
                kernels::matmul_nn(da + (t + 1) * B * G, G, p.weight_hh.data(), H, dh_t, H, B, H, G, Accumulate::yes);
            }
            kernels::lstm_cell_backward(lc.gates.data() + t * B * G, lc.c.data() + t * B * H,
                                        lc.tanh_c.data() + t * B * H, dh_t, s.dc.data(), da + t * B * G, B, H);
        }
        // a_0 = ... + h0·W_hhᵀ, c_0 = f·c0 + ...
        if (dh0) kernels::matmul_nn(da, G, p.weight_hh.data(), H, dh0->data() + l * B * H, H, B, H, G);
        if (dc0) std::copy_n(s.dc.data(), B * H, dc0->data() + l * B * H);

        // Over all T·B rows at once: dW_ih += daᵀ·input, dW_hh += daᵀ·h_{t-1}, db += Σ da.
        kernels::matmul_tn(da, G, in, In, g.weight_ih.data(), In, G, In, T * B, Accumulate::yes);
        kernels::matmul_tn(da, G, lc.h.data(), H, g.weight_hh.data(), H, G, H, T * B, Accumulate::yes);
        if (config_.bias) {
            float* const outputs[2] = {g.bias_ih.data(), g.bias_hh.data()};
            column_sums<float, 2>(T * B, G, outputs, [&](std::size_t r, std::size_t j0, std::size_t w, auto& sums) {
                for (std::size_t j = 0; j < w; ++j) {
                    const float d = da[r * G + j0 + j];
                    sums[0][j] += d;
                    sums[1][j] += d;
                }
            });
        }
        // The input's gradient da·W_ih: (T·B, In). Above layer 0 it is the dh of the layer
        // below (the two (T, B, H) buffers trade places, so neither is reallocated).
        if (l > 0) {
            resize<3>(s.dinput, {T, B, H});
            kernels::matmul_nn(da, G, p.weight_ih.data(), In, s.dinput.data(), In, T * B, In, G);
            std::swap(s.dh, s.dinput);
        } else {
            resize<3>(s.dx, {T, B, I});
            kernels::matmul_nn(da, G, p.weight_ih.data(), In, s.dx.data(), In, T * B, In, G);
        }
    }
    resize<3>(dx, {B, T, I});
    swap_outer_axes(s.dx.data(), dx.data(), T, B, I);
}

}  // namespace attnlab
