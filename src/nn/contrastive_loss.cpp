#include "attnlab/nn/contrastive_loss.hpp"

#include <algorithm>
#include <cmath>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {
constexpr double kEps = 1e-12;  // torch.nn.functional.normalize's

// x: (N, E) -> unit rows (N, E) and their norms max(|x_i|, eps) (N).
void normalize_rows(const Tensor2& x, Tensor2& unit, Tensor1& norm) {
    const std::size_t n = x.shape(0), e = x.shape(1);
    unit = Tensor2::from_shape({n, e});
    norm = Tensor1::from_shape({n});
    for (std::size_t i = 0; i < n; ++i) {
        double s = 0.0;
        for (std::size_t j = 0; j < e; ++j) s += static_cast<double>(x(i, j)) * x(i, j);
        const double r = std::max(std::sqrt(s), kEps);
        norm(i) = static_cast<float>(r);
        for (std::size_t j = 0; j < e; ++j) unit(i, j) = static_cast<float>(x(i, j) / r);
    }
}

// logits: (N, N) -> probs (N, N) the softmax of each row; returns the mean over rows of
// logsumexp(row i) - row_i[i] (in double), and counts the rows whose first maximum is i.
double softmax_diagonal_ce(const Tensor2& logits, Tensor2& probs, std::size_t& correct) {
    const std::size_t n = logits.shape(0);
    probs = Tensor2::from_shape({n, n});
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t arg = 0;
        for (std::size_t j = 1; j < n; ++j) {
            if (logits(i, j) > logits(i, arg)) arg = j;
        }
        const double top = logits(i, arg);
        double sum = 0.0;
        for (std::size_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(logits(i, j)) - top);
        for (std::size_t j = 0; j < n; ++j) {
            probs(i, j) = static_cast<float>(std::exp(static_cast<double>(logits(i, j)) - top) / sum);
        }
        total += top + std::log(sum) - logits(i, i);
        correct += arg == i ? 1 : 0;
    }
    return total / static_cast<double>(n);
}

// The normalisation's backward: dx_i = (du_i - u_i (u_i·du_i)) / norm_i. du, u: (N, E) -> dx (N, E)
void normalize_rows_backward(const Tensor2& du, const Tensor2& unit, const Tensor1& norm, Tensor2& dx) {
    const std::size_t n = unit.shape(0), e = unit.shape(1);
    dx = Tensor2::from_shape({n, e});
    for (std::size_t i = 0; i < n; ++i) {
        double dot = 0.0;
        for (std::size_t j = 0; j < e; ++j) dot += static_cast<double>(unit(i, j)) * du(i, j);
        // Below eps the forward divided by the constant eps: no projection term.
        const bool clamped = norm(i) <= static_cast<float>(kEps);
        for (std::size_t j = 0; j < e; ++j) {
            const double g = clamped ? du(i, j) : du(i, j) - unit(i, j) * dot;
            dx(i, j) = static_cast<float>(g / norm(i));
        }
    }
}
}  // namespace

ContrastiveResult contrastive_forward(const Tensor2& text, const Tensor2& image, float temperature,
                                      ContrastiveCache* cache) {
    constexpr const char* where = "contrastive_forward";
    if (text.shape() != image.shape()) {
        fail<ShapeError>(where, ": text (N, E) and image (N, E) must have one shape, got ", shape_string(text.shape()),
                         " and ", shape_string(image.shape()));
    }
    if (!(std::isfinite(temperature) && temperature > 0.0f)) {
        fail<ValueError>(where, ": the temperature must be positive and finite, got ", temperature);
    }
    require_finite(text, where, "text");
    require_finite(image, where, "image");
    ContrastiveCache local;
    ContrastiveCache& c = cache ? *cache : local;
    c.temperature = temperature;
    const std::size_t n = text.shape(0), e = text.shape(1);
    normalize_rows(text, c.text_unit, c.text_norm);
    normalize_rows(image, c.image_unit, c.image_norm);
    // L = t̂·v̂ᵀ / tau and its transpose
    Tensor2 logits = Tensor2::from_shape({n, n}), logits_t = Tensor2::from_shape({n, n});
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            double s = 0.0;
            for (std::size_t d = 0; d < e; ++d) s += static_cast<double>(c.text_unit(i, d)) * c.image_unit(j, d);
            logits(i, j) = logits_t(j, i) = static_cast<float>(s / temperature);
        }
    }
    ContrastiveResult r;
    r.count = n;
    if (n == 0) return r;
    std::size_t correct_image = 0;
    const double text_ce = softmax_diagonal_ce(logits, c.probs_text, r.correct);
    const double image_ce = softmax_diagonal_ce(logits_t, c.probs_image, correct_image);
    r.loss = static_cast<float>(0.5 * (text_ce + image_ce));
    return r;
}

void contrastive_backward(const ContrastiveCache& c, float dloss, Tensor2& dtext, Tensor2& dimage) {
    const std::size_t n = c.text_unit.shape(0), e = c.text_unit.shape(1);
    if (n == 0) {
        dtext = Tensor2::from_shape({n, e});
        dimage = Tensor2::from_shape({n, e});
        return;
    }
    // dL = ½ dloss [(P - I) + (Pᵀ' - I)ᵀ] / N, P = probs_text, P' = probs_image
    Tensor2 dl = Tensor2::from_shape({n, n});
    const float k = 0.5f * dloss / static_cast<float>(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            const float eye = i == j ? 1.0f : 0.0f;
            dl(i, j) = k * ((c.probs_text(i, j) - eye) + (c.probs_image(j, i) - eye));
        }
    }
    // L = t̂·v̂ᵀ / tau  =>  dt̂ = dL·v̂ / tau, dv̂ = dLᵀ·t̂ / tau
    Tensor2 dtu = Tensor2::from_shape({n, e}), dvu = Tensor2::from_shape({n, e});
    dtu.fill(0.0f);
    dvu.fill(0.0f);
    const float inv_tau = 1.0f / c.temperature;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            const float g = dl(i, j) * inv_tau;
            for (std::size_t d = 0; d < e; ++d) {
                dtu(i, d) += g * c.image_unit(j, d);
                dvu(j, d) += g * c.text_unit(i, d);
            }
        }
    }
    normalize_rows_backward(dtu, c.text_unit, c.text_norm, dtext);
    normalize_rows_backward(dvu, c.image_unit, c.image_norm, dimage);
}

}  // namespace attnlab
