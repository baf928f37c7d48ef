// attnlab/nn/lstm.hpp: a multi-layer LSTM (Hochreiter & Schmidhuber 1997) with torch.nn.LSTM's
// semantics, forward and backward through time.
//
// What it is for: the recurrent baseline the article compares attention with (§1.1, §5.1: an
// LSTM carries everything it knows about the past in (h, c), so the start of a long sequence
// fades; §7.2). Per layer k and time step t, gates in PyTorch's order i, f, g, o:
//   a = x_t·W_ihᵀ + b_ih + h_{t-1}·W_hhᵀ + b_hh                     (B, 4H)
//   i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o)
//   c_t = f·c_{t-1} + i·g,  h_t = o·tanh(c_t)
// and layer k > 0 reads layer k-1's h_t as its x_t. Parameters carry PyTorch's names and shapes
// (weight_ih_l{k} (4H, I or H), weight_hh_l{k} (4H, H), bias_ih_l{k}, bias_hh_l{k} (4H)), so a
// torch state_dict maps one to one. Not for: dropout between layers, projections (proj_size),
// bidirectional LSTMs or packed sequences.
//
// How it runs: the input-to-hidden products of all time steps of a layer are one matmul; each
// step then adds h_{t-1}·W_hhᵀ (a matmul kernel reading a transposed copy of W_hh in place) and
// runs the cell kernel (kernels/elementwise.hpp). Time-major buffers inside the cache make every
// step's rows contiguous; with a cache and outputs reused at the same shapes nothing allocates.
//
//   attnlab::Rng rng(1);
//   attnlab::Lstm lstm({/*input_size=*/5, /*hidden_size=*/7, /*num_layers=*/2, /*bias=*/true}, rng);
//   attnlab::LstmCache cache;
//   attnlab::LstmOutput out = lstm.forward(x, nullptr, nullptr, &cache);   // x (B, T, 5) -> (B, T, 7)
//   attnlab::LstmGrad g(lstm);
//   lstm.backward(dout, nullptr, nullptr, cache, g, dx, nullptr, nullptr); // dx (B, T, 5); g += ...
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab {

// Dimension letters of this file: B batch, T time steps, I input width, H hidden width,
// L layers (num_layers), G = 4H the four gates.
struct LstmConfig {
    std::size_t input_size = 0;   // I, the width of x (>= 1)
    std::size_t hidden_size = 0;  // H, the width of h and c (>= 1)
    std::size_t num_layers = 1;   // L (>= 1)
    bool bias = true;             // with bias_ih_l{k} and bias_hh_l{k}
};

// The parameters of one layer, PyTorch's shapes (In = I for layer 0, H above).
struct LstmLayer {
    Tensor2 weight_ih;  // (4H, In) rows i, f, g, o
    Tensor2 weight_hh;  // (4H, H)
    Tensor1 bias_ih;    // (4H) or empty without bias
    Tensor1 bias_hh;    // (4H) or empty without bias
};

// What one layer's backward needs from the forward, time-major.
struct LstmLayerCache {
    Tensor3 gates;   // (T, B, 4H) the activations i, f, g, o: each gate's derivative is a function of it
    Tensor3 h;       // (T + 1, B, H) h0 then h_0 .. h_{T-1}: dW_hh = Σ_t da_tᵀ·h_{t-1}; rows 1.. feed the next layer
    Tensor3 c;       // (T + 1, B, H) c0 then c_0 .. c_{T-1}: da_f = dc·c_{t-1}·f(1 - f)
    Tensor3 tanh_c;  // (T, B, H) tanh(c_t): dh reaches c and o through it
    Tensor2 weight_hh_t;  // (H, 4H) W_hhᵀ, the recurrence's right operand read in place (forward only)
};

// Filled by forward, read (and its scratch used) by backward.
struct LstmCache {
    Tensor3 x;  // (T, B, I) the input, time-major: dW_ih of layer 0 = Σ da_tᵀ·x_t
    std::vector<LstmLayerCache> layers;  // (L)
    // Backward's working buffers, not part of what it needs from the forward; kept here so that
    // a backward at the same shapes allocates nothing.
    struct Scratch {
        Tensor3 dgates;  // (T, B, 4H) pre-activation gradients of the current layer
        Tensor3 dh;      // (T, B, H) gradient of the current layer's h_t (from above and from t + 1)
        Tensor3 dinput;  // (T, B, H) gradient of a layer's input above layer 0 (the dh of the layer below)
        Tensor3 dx;      // (T, B, I) gradient of x, time-major
        Tensor2 dc;      // (B, H) gradient of c_t, carried backwards through time
    } scratch;

    std::size_t batch() const { return x.shape(1); }
    std::size_t steps() const { return x.shape(0); }
    bool empty() const { return layers.empty(); }
};

// The forward's results.
struct LstmOutput {
    Tensor3 output;  // (B, T, H) the last layer's h_t for every t
    Tensor3 h;       // (L, B, H) each layer's h at the last step
    Tensor3 c;       // (L, B, H) each layer's c at the last step
};

// Unbatched results (x given as (T, I)).
struct LstmOutputUnbatched {
    Tensor2 output;  // (T, H)
    Tensor2 h;       // (L, H)
    Tensor2 c;       // (L, H)
};

class Lstm;

// Gradients of every layer, same shapes and names as the parameters; backward adds into them.
struct LstmGrad {
    std::vector<LstmLayer> layers;

    LstmGrad() = default;
    explicit LstmGrad(const Lstm& lstm);  // zeros
    void zero();
    // Same names and order as Lstm::parameters(prefix).
    std::vector<ParameterView> views(const std::string& prefix = "");
};

class Lstm {
public:
    Lstm() = default;
    // torch.nn.LSTM's initialisation: every weight and bias ~ U(-1/√H, 1/√H), drawn in the order
    // of parameters(). Throws ConfigError for a zero size or num_layers.
    Lstm(const LstmConfig& config, Rng& rng);

    const LstmConfig& config() const { return config_; }

    // x: (B, T, I); h0, c0: (L, B, H) or nullptr for zeros -> output (B, T, H), h, c (L, B, H).
    // Fills cache when non-null. ShapeError naming the shapes on a wrong width, an empty x or a
    // wrong h0/c0.
    LstmOutput forward(const Tensor3& x, const Tensor3* h0 = nullptr, const Tensor3* c0 = nullptr,
                       LstmCache* cache = nullptr) const;
    // The same into `out` (resized): with the cache and out reused at the same shapes, nothing
    // allocates.
    void forward(const Tensor3& x, const Tensor3* h0, const Tensor3* c0, LstmCache& cache, LstmOutput& out) const;
    // Unbatched, as torch.nn.LSTM on a 2-D input: x: (T, I); h0, c0: (L, H) or nullptr ->
    // output (T, H), h, c (L, H).
    LstmOutputUnbatched forward(const Tensor2& x, const Tensor2* h0 = nullptr, const Tensor2* c0 = nullptr) const;

    // Backpropagation through time of the forward that filled `cache`.
    // dout: (B, T, H) gradient of output; dh, dc: (L, B, H) gradients of the final h and c, or
    // nullptr for zero -> dx: (B, T, I) (resized, overwritten), dh0, dc0: (L, B, H) (resized,
    // overwritten; skipped when null); parameter gradients accumulate into grads (+=).
    void backward(const Tensor3& dout, const Tensor3* dh, const Tensor3* dc, LstmCache& cache, LstmGrad& grads,
                  Tensor3& dx, Tensor3* dh0, Tensor3* dc0) const;

    // weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0 (biases only with bias), then l1, ...,
    // each with `prefix` prepended: torch.nn.LSTM's state_dict order.
    std::vector<ParameterView> parameters(const std::string& prefix = "");
    // Floats in all parameters.
    std::size_t parameter_count() const;

    std::vector<LstmLayer> layers;  // (L)

private:
    void check_state(const Tensor3* s, std::size_t batch, const char* where, const char* what) const;

    LstmConfig config_;
};

}  // namespace attnlab
