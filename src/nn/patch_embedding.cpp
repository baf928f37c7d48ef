#include "attnlab/nn/patch_embedding.hpp"

#include <algorithm>
#include <cmath>

#include "attnlab/core/error.hpp"
#include "attnlab/posenc/sinusoidal.hpp"

namespace attnlab {

void PatchEmbeddingConfig::validate() const {
    constexpr const char* where = "PatchEmbedding";
    if (image_size == 0 || patch_size == 0 || d_model == 0) {
        fail<ConfigError>(where, ": image_size, patch_size and d_model must be positive, got ", image_size, ", ",
                          patch_size, ", ", d_model);
    }
    if (image_size % patch_size != 0) {
        fail<ConfigError>(where, ": patch_size (", patch_size, ") must divide image_size (", image_size, ")");
    }
    if (positional == PositionalKind::rope) {
        fail<ConfigError>(where, ": positions are added to the patches; none, sinusoidal or learned, got rope");
    }
    if (positional == PositionalKind::sinusoidal && d_model % 4 != 0) {
        fail<ConfigError>(where, ": the 2-D sinusoidal table needs d_model % 4 == 0, got ", d_model);
    }
}

Tensor2 sinusoidal_table_2d(std::size_t grid, std::size_t c) {
    if (c % 4 != 0) fail<ConfigError>("sinusoidal_table_2d: the width must be a multiple of 4, got ", c);
    const Tensor2 axis = sinusoidal_table(grid, c / 2);  // (G, C/2)
    Tensor2 table = Tensor2::from_shape({grid * grid, c});
    for (std::size_t gy = 0; gy < grid; ++gy) {
        for (std::size_t gx = 0; gx < grid; ++gx) {
            float* row = table.data() + (gy * grid + gx) * c;
            std::copy(axis.data() + gy * (c / 2), axis.data() + (gy + 1) * (c / 2), row);
            std::copy(axis.data() + gx * (c / 2), axis.data() + (gx + 1) * (c / 2), row + c / 2);
        }
    }
    return table;
}

PatchEmbedding::PatchEmbedding(const PatchEmbeddingConfig& config, Rng& rng) : config_(config) {
    config.validate();
    const std::size_t c = config.d_model, pp = config.patch_size * config.patch_size;
    proj = Linear(pp, c, /*with_bias=*/true, rng);  // U(-1/sqrt(P·P), ..): torch.nn.Conv2d's bound
    if (config.positional == PositionalKind::learned) {
        pos_emb = Tensor2::from_shape({config.positions(), c});
        for (auto& v : pos_emb) v = 0.02f * rng.normal();
    }
    if (config.cls) {
        cls_token = Tensor1::from_shape({c});
        for (auto& v : cls_token) v = 0.02f * rng.normal();
    }
    if (config.positional == PositionalKind::sinusoidal) sin_table = sinusoidal_table_2d(config.grid(), c);
}

void PatchEmbedding::extract_patches(const Tensor3& images, Tensor2& patches) const {
    const std::size_t batch = images.shape(0), s = config_.image_size, p = config_.patch_size, g = config_.grid();
    const std::size_t n = config_.patches();
    if (patches.dimension() != 2 || patches.shape(0) != batch * n || patches.shape(1) != p * p) {
        patches = Tensor2::from_shape({batch * n, p * p});
    }
    for (std::size_t b = 0; b < batch; ++b) {
        const float* image = images.data() + b * s * s;
        for (std::size_t gy = 0; gy < g; ++gy) {
            for (std::size_t gx = 0; gx < g; ++gx) {
                float* row = patches.data() + ((b * n) + gy * g + gx) * p * p;  // (P·P)
                for (std::size_t py = 0; py < p; ++py) {
                    const float* src = image + (gy * p + py) * s + gx * p;
                    std::copy(src, src + p, row + py * p);
                }
            }
        }
    }
}

void PatchEmbedding::forward(const Tensor3& images, PatchEmbeddingCache* cache, Tensor3& out) const {
    constexpr const char* where = "PatchEmbedding::forward";
    const auto s = static_cast<std::ptrdiff_t>(config_.image_size);
    require_shape(images, {-1, s, s}, where, "images (B, S, S)");
    if (images.shape(0) == 0) fail<ShapeError>(where, ": the batch is empty");
    for (float v : images) {
        if (!std::isfinite(v)) fail<ValueError>(where, ": the images hold a non-finite pixel (", v, ")");
    }
    const std::size_t batch = images.shape(0), n = config_.patches(), np = config_.positions(), c = config_.d_model;
    const std::size_t first = config_.cls ? 1 : 0;
    PatchEmbeddingCache local;
    PatchEmbeddingCache& pc = cache ? *cache : local;
    extract_patches(images, pc.patches);
    if (out.dimension() != 3 || out.shape(0) != batch || out.shape(1) != np || out.shape(2) != c) {
        out = Tensor3::from_shape({batch, np, c});
    }
    for (std::size_t b = 0; b < batch; ++b) {
        float* x = out.data() + b * np * c;  // (N', C)
        // The P x P, stride P convolution: each patch row times Wᵀ, plus b.
        proj.forward(pc.patches.data() + b * n * proj.in_features(), n, x + first * c);
        if (config_.cls) std::copy(cls_token.begin(), cls_token.end(), x);
        if (pos_emb.size() > 0) {
            for (std::size_t i = 0; i < np * c; ++i) x[i] += pos_emb.data()[i];
        } else if (sin_table.size() > 0) {
            for (std::size_t i = 0; i < n * c; ++i) x[first * c + i] += sin_table.data()[i];
        }
    }
}

Tensor3 PatchEmbedding::forward(const Tensor3& images, PatchEmbeddingCache* cache) const {
    Tensor3 out;
    forward(images, cache, out);
    return out;
}

void PatchEmbedding::backward(const Tensor3& dout, PatchEmbeddingCache& cache, PatchEmbeddingGrad& grads,
                              Tensor3* dimages) const {
    constexpr const char* where = "PatchEmbedding::backward";
    const std::size_t n = config_.patches(), np = config_.positions(), c = config_.d_model;
    const std::size_t first = config_.cls ? 1 : 0, pp = proj.in_features();
    if (cache.patches.size() == 0) fail<ValueError>(where, ": no forward filled the cache");
    const std::size_t batch = cache.patches.shape(0) / n;
    require_shape(dout, {static_cast<std::ptrdiff_t>(batch), static_cast<std::ptrdiff_t>(np), static_cast<std::ptrdiff_t>(c)},
                  where, "dout (B, N', C)");
    // x = [cls; patches·Wᵀ + b] + pos  =>  dpos += Σ_b dx, dcls += Σ_b dx[0], dproj = dx[first:]
    if (cache.dproj.dimension() != 2 || cache.dproj.shape(0) != batch * n) cache.dproj = Tensor2::from_shape({batch * n, c});
    for (std::size_t b = 0; b < batch; ++b) {
        const float* d = dout.data() + b * np * c;
        std::copy(d + first * c, d + np * c, cache.dproj.data() + b * n * c);
        if (grads.pos_emb.size() > 0) {
            for (std::size_t i = 0; i < np * c; ++i) grads.pos_emb.data()[i] += d[i];
        }
        if (grads.cls_token.size() > 0) {
            for (std::size_t i = 0; i < c; ++i) grads.cls_token(i) += d[i];
        }
    }
    Tensor2 dpatches;
    if (dimages) dpatches = Tensor2::from_shape({batch * n, pp});
    linear_backward(proj, cache.patches.data(), batch * n, cache.dproj.data(), grads.proj,
                    dimages ? dpatches.data() : nullptr);
    if (dimages) {
        // patches = im2col(images): each pixel sits in exactly one patch.
        const std::size_t s = config_.image_size, p = config_.patch_size, g = config_.grid();
        *dimages = Tensor3::from_shape({batch, s, s});
        for (std::size_t b = 0; b < batch; ++b)
            for (std::size_t gy = 0; gy < g; ++gy)
                for (std::size_t gx = 0; gx < g; ++gx)
                    for (std::size_t py = 0; py < p; ++py)
                        for (std::size_t px = 0; px < p; ++px)
                            (*dimages)(b, gy * p + py, gx * p + px) = dpatches((b * n) + gy * g + gx, py * p + px);
    }
}

void PatchEmbedding::parameters(std::vector<ParameterView>& out, const std::string& prefix) {
    out.push_back(view_of(prefix + "proj.weight", proj.weight));
    out.push_back(view_of(prefix + "proj.bias", proj.bias));
    if (pos_emb.size() > 0) out.push_back(view_of(prefix + "pos_emb.weight", pos_emb));
    if (cls_token.size() > 0) out.push_back(view_of(prefix + "cls_token", cls_token));
}

PatchEmbeddingGrad::PatchEmbeddingGrad(const PatchEmbedding& emb) : proj(emb.proj) {
    if (emb.pos_emb.size() > 0) pos_emb = Tensor2::from_shape(emb.pos_emb.shape());
    if (emb.cls_token.size() > 0) cls_token = Tensor1::from_shape(emb.cls_token.shape());
    zero();
}

void PatchEmbeddingGrad::zero() {
    proj.zero();
    pos_emb.fill(0.0f);
    cls_token.fill(0.0f);
}

void PatchEmbeddingGrad::views(std::vector<ParameterView>& out, const std::string& prefix) {
    out.push_back(view_of(prefix + "proj.weight", proj.weight));
    out.push_back(view_of(prefix + "proj.bias", proj.bias));
    if (pos_emb.size() > 0) out.push_back(view_of(prefix + "pos_emb.weight", pos_emb));
    if (cls_token.size() > 0) out.push_back(view_of(prefix + "cls_token", cls_token));
}

}  // namespace attnlab
