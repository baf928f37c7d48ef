#include "attnlab/interp/detectors.hpp"

#include <cstdint>

#include "attnlab/core/error.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/interp/run.hpp"

namespace attnlab::interp {

Tensor2 detection_pattern(HeadPattern pattern, const std::vector<std::int32_t>& tokens) {
    const std::size_t t = tokens.size();
    Tensor2 p = xt::zeros<float>({t, t});  // (T, T)
    for (std::size_t i = 0; i < t; ++i) {
        switch (pattern) {
            case HeadPattern::previous_token:
                if (i > 0) p(i, i - 1) = 1.0f;
                break;
            case HeadPattern::duplicate_token:
                for (std::size_t j = 0; j < i; ++j) {
                    if (tokens[j] == tokens[i]) p(i, j) = 1.0f;
                }
                break;
            case HeadPattern::induction:
                // j < i, so the key after it, j + 1, is at most i: still a key query i sees.
                for (std::size_t j = 0; j < i; ++j) {
                    if (tokens[j] == tokens[i]) p(i, j + 1) = 1.0f;
                }
                break;
            case HeadPattern::first_token:
                p(i, 0) = 1.0f;
                break;
            case HeadPattern::self:
                p(i, i) = 1.0f;
                break;
        }
    }
    return p;
}

std::optional<double> pattern_score(const Tensor2& weights, const Tensor2& pattern) {
    if (weights.shape() != pattern.shape()) {
        fail<ShapeError>("interp::pattern_score: weights ", shape_string(weights.shape()), " and pattern ",
                         shape_string(pattern.shape()), " must have one shape (T, S)");
    }
    const std::size_t t = weights.shape(0), s = weights.shape(1);
    double sum = 0.0;
    std::size_t rows = 0;
    for (std::size_t i = 1; i < t; ++i) {  // row 0: causal attention puts its whole weight on key 0
        double on = 0.0, all = 0.0;
        bool any = false;
        for (std::size_t j = 0; j < s; ++j) {
            all += weights(i, j);
            if (pattern(i, j) != 0.0f) {
                any = true;
                on += weights(i, j);
            }
        }
        if (!any || !(all > 0.0)) continue;
        sum += on / all;
        ++rows;
    }
    if (rows == 0) return std::nullopt;
    return sum / static_cast<double>(rows);
}

std::vector<HeadScores> detect_heads(const Tensor4& maps, const std::vector<std::int32_t>& tokens) {
    const std::size_t layers = maps.shape(0), heads = maps.shape(1), t = maps.shape(2);
    if (t != tokens.size() || maps.shape(3) != t) {
        fail<ShapeError>("interp::detect_heads: maps must be (L, H, T, T) for ", tokens.size(), " tokens, got ",
                         shape_string(maps.shape()));
    }
    std::array<Tensor2, kNumHeadPatterns> patterns;
    for (const auto& v : choice_values<HeadPattern>()) patterns[static_cast<std::size_t>(v.value)] = detection_pattern(v.value, tokens);
    std::vector<HeadScores> out;
    Tensor2 w = Tensor2::from_shape({t, t});
    for (std::size_t l = 0; l < layers; ++l) {
        for (std::size_t h = 0; h < heads; ++h) {
            std::copy_n(maps.data() + (l * heads + h) * t * t, t * t, w.data());
            HeadScores s;
            s.layer = l;
            s.head = h;
            for (std::size_t p = 0; p < kNumHeadPatterns; ++p) s.scores[p] = pattern_score(w, patterns[p]);
            out.push_back(s);
        }
    }
    return out;
}

std::vector<HeadScores> detect_heads(const DecoderLM& model, const std::vector<std::int32_t>& tokens) {
    check_tokens(model, tokens, "interp::detect_heads");
    if (!model.config().causal) {
        fail<ConfigError>("interp::detect_heads: the detectors score causal attention; this decoder's attention is not causal");
    }
    Index2 ids = Index2::from_shape({1, tokens.size()});
    std::copy(tokens.begin(), tokens.end(), ids.data());
    return detect_heads(model.attention_maps(ids), tokens);
}

std::vector<std::int32_t> random_repeat(std::size_t n, std::size_t vocab, std::uint64_t seed) {
    if (n == 0) fail<ValueError>("interp::random_repeat: n must be at least 1 (n random tokens, then the same n again)");
    if (vocab == 0 || vocab > UINT32_MAX) fail<ValueError>("interp::random_repeat: vocabulary of ", vocab, " ids (1..2^32-1 drawn from)");
    Rng rng(seed);
    std::vector<std::int32_t> out(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = out[n + i] = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(vocab)));
    }
    return out;
}

}  // namespace attnlab::interp
