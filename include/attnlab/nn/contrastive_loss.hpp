// attnlab/nn/contrastive_loss.hpp: the CLIP-style contrastive loss (symmetric InfoNCE) over
// paired embeddings.
//
// What it is for: pulling the pooled embeddings of matching text and images together and
// pushing the other pairs of the batch apart (Radford et al. 2021, "Learning Transferable Visual
// Models From Natural Language Supervision"; the article's §7.3). With N pairs (t_i, v_i):
//   t̂_i = t_i / max(|t_i|, eps),  v̂_i = v_i / max(|v_i|, eps)     (eps = 1e-12, F.normalize's)
//   L = t̂·v̂ᵀ / tau                                                  (N, N) logits
//   loss = ½ [CE(L, diag) + CE(Lᵀ, diag)]    CE the mean cross-entropy, target of row i is i
// so row i of L asks "which image is t_i's?" and row i of Lᵀ "which text is v_i's?". The
// gradient: dL = ½ [(softmax_rows(L) - I) + (softmax_rows(Lᵀ) - I)ᵀ] / N, dt̂ = dL·v̂ / tau,
// dv̂ = dLᵀ·t̂ / tau, and through the normalisation dt = (dt̂ - t̂ (t̂·dt̂)) / max(|t|, eps).
// Checked against PyTorch (tests/reference/make_fixtures.py) and by finite differences.
// Not for: a learned temperature (tau is a config value here), negatives from other batches.
//
//   attnlab::ContrastiveCache cache;
//   attnlab::ContrastiveResult r = attnlab::contrastive_forward(text, image, 0.1f, &cache);  // (N, E), (N, E)
//   attnlab::Tensor2 dtext, dimage;
//   attnlab::contrastive_backward(cache, /*dloss=*/1.0f, dtext, dimage);                 // (N, E) each
#pragma once

#include <cstddef>

#include "attnlab/core/tensor.hpp"

namespace attnlab {

// What backward needs from the forward pass.
struct ContrastiveCache {
    Tensor2 text_unit, image_unit;  // (N, E) t̂, v̂: dt̂ = dL·v̂ / tau and the normalisation's backward
    Tensor1 text_norm, image_norm;  // (N) max(|t|, eps), max(|v|, eps): the normalisation's backward
    Tensor2 probs_text;             // (N, N) softmax of the rows of L (text -> image)
    Tensor2 probs_image;            // (N, N) softmax of the rows of Lᵀ (image -> text)
    float temperature = 1.0f;       // tau
};

struct ContrastiveResult {
    float loss = 0.0f;        // ½ (CE text->image + CE image->text); 0 for N = 0
    std::size_t count = 0;    // N, the pairs
    std::size_t correct = 0;  // texts whose most similar image (first maximum of L's row) is their own
};

// text, image: (N, E) -> the loss; fills cache when non-null. ShapeError naming both shapes if they
// differ; ValueError for a temperature that is not positive and finite, or a non-finite entry.
ContrastiveResult contrastive_forward(const Tensor2& text, const Tensor2& image, float temperature,
                                      ContrastiveCache* cache = nullptr);
// dtext, dimage: (N, E) (resized, overwritten) = dloss · the gradient of the loss.
void contrastive_backward(const ContrastiveCache& cache, float dloss, Tensor2& dtext, Tensor2& dimage);

}  // namespace attnlab
