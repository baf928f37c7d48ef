// attnlab/nn/patch_embedding.hpp: images -> one vector per P x P patch (ViT's input layer).
//
// What it is for: turning (B, S, S) grayscale images into the (B, N', C) sequence a Transformer
// reads (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words"; article §7.1):
//   images (B, S, S) -> patches (B·N, P·P) -> proj: patches·Wᵀ + b -> (B, N, C)
//   -> [cls_token in front: N' = N + 1] -> + positions -> (B, N', C)
// N = G·G patches, G = S / P per side, in row-major order (patch n = gy·G + gx holds pixels
// (gy·P + py, gx·P + px) as element py·P + px). The projection is the P x P, stride P
// convolution written as one matmul (conv as matmul: each patch is one row). Positions:
//   none        nothing added (Swin's blocks carry a relative position bias instead)
//   sinusoidal  2-D: the first C/2 channels are the 1-D sinusoidal table of the patch's row gy,
//               the last C/2 of its column gx (C % 4 == 0); a fixed table, not a parameter
//   learned     a (N', C) parameter, N(0, 0.02²), the CLS row first
// The CLS vector (optional) gets the row-0 position of a learned table and none of a sinusoidal
// one. Not for: colour channels or overlapping patches.
// Parameter names: proj.weight (C, P·P), proj.bias (C), [pos_emb.weight (N', C)], [cls_token (C)].
//
//   attnlab::PatchEmbedding emb({/*image_size=*/16, /*patch_size=*/4, /*d_model=*/32,
//                                attnlab::PositionalKind::learned, /*cls=*/true}, rng);
//   attnlab::PatchEmbeddingCache cache;
//   attnlab::Tensor3 x = emb.forward(images, &cache);   // (B, 17, 32)
//   attnlab::PatchEmbeddingGrad grads(emb);
//   emb.backward(dx, cache, grads);                      // grads += ...
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/parameter.hpp"
#include "attnlab/posenc/positional_encoding.hpp"

namespace attnlab {

struct PatchEmbeddingConfig {
    std::size_t image_size = 0;  // S: images are (S, S)
    std::size_t patch_size = 0;  // P: S % P == 0
    std::size_t d_model = 0;     // C
    PositionalKind positional = PositionalKind::none;  // none, sinusoidal or learned (rope is refused)
    bool cls = false;            // prepend a learned CLS vector

    std::size_t grid() const { return patch_size == 0 ? 0 : image_size / patch_size; }  // G
    std::size_t patches() const { return grid() * grid(); }                               // N
    std::size_t positions() const { return patches() + (cls ? 1 : 0); }                  // N'
    // ConfigError naming the numbers: zeros, S % P, rope, sinusoidal with C % 4.
    void validate() const;
};

// What backward needs.
struct PatchEmbeddingCache {
    Tensor2 patches;  // (B·N, P·P) the projection's input: dW = dyᵀ·patches
    Tensor2 dproj;    // (B·N, C) backward buffer, kept so a training loop reuses it
};

struct PatchEmbeddingGrad {
    LinearGrad proj;    // (C, P·P), (C)
    Tensor2 pos_emb;    // (N', C) learned positions only, else empty
    Tensor1 cls_token;  // (C) with CLS, else empty

    PatchEmbeddingGrad() = default;
    explicit PatchEmbeddingGrad(const class PatchEmbedding& emb);  // zeros
    void zero();
    // Same names and order as PatchEmbedding::parameters(prefix).
    void views(std::vector<ParameterView>& out, const std::string& prefix = "");
};

class PatchEmbedding {
public:
    PatchEmbedding() = default;
    // Validates config; proj like torch.nn.Conv2d (U(-1/P, 1/P): fan-in P·P), positions and CLS
    // N(0, 0.02²), drawn from rng in that order.
    PatchEmbedding(const PatchEmbeddingConfig& config, Rng& rng);

    const PatchEmbeddingConfig& config() const { return config_; }

    // images: (B, S, S) -> (B, N', C) into out (resized). Fills cache for backward when non-null.
    // ShapeError naming the shapes; ValueError for a non-finite pixel.
    void forward(const Tensor3& images, PatchEmbeddingCache* cache, Tensor3& out) const;
    Tensor3 forward(const Tensor3& images, PatchEmbeddingCache* cache = nullptr) const;
    // dout: (B, N', C) -> grads += (proj, learned positions, CLS). The images get no gradient
    // (they are data); dimages (B, S, S), when non-null, receives it anyway (tests).
    void backward(const Tensor3& dout, PatchEmbeddingCache& cache, PatchEmbeddingGrad& grads,
                  Tensor3* dimages = nullptr) const;

    // images (B, S, S) -> patches (B·N, P·P) in the order at the top (im2col).
    void extract_patches(const Tensor3& images, Tensor2& patches) const;

    // proj.weight, proj.bias, [pos_emb.weight], [cls_token] after prefix.
    void parameters(std::vector<ParameterView>& out, const std::string& prefix = "");

    Linear proj;        // (C, P·P) and (C)
    Tensor2 pos_emb;    // (N', C) learned positions, else empty
    Tensor1 cls_token;  // (C) with CLS, else empty
    Tensor2 sin_table;  // (N, C) the fixed 2-D sinusoidal table (sinusoidal only; not a parameter)

private:
    PatchEmbeddingConfig config_;
};

// The fixed 2-D sinusoidal table for a G x G grid of width C (C % 4 == 0): row gy·G + gx is
// [sin/cos table of gy over C/2 channels, the same of gx]. -> (G·G, C)
Tensor2 sinusoidal_table_2d(std::size_t grid, std::size_t c);

}  // namespace attnlab
