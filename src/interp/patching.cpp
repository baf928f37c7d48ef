#include "attnlab/interp/patching.hpp"

#include <cmath>

#include "attnlab/interp/run.hpp"

namespace attnlab::interp {
namespace {

double logit_diff(const Run& r, std::int32_t answer, std::int32_t wrong) {
    const std::size_t last = r.tokens.size() - 1;
    return double(r.logits(last, static_cast<std::size_t>(answer))) - double(r.logits(last, static_cast<std::size_t>(wrong)));
}

void check_patch_input(const DecoderLM& model, const std::vector<std::int32_t>& clean,
                       const std::vector<std::int32_t>& corrupted, std::int32_t answer, std::int32_t wrong) {
    constexpr const char* where = "interp::patch";
    if (clean.size() != corrupted.size()) {
        fail<PatchingError>(where, ": the clean prompt has ", clean.size(), " tokens and the corrupted one ", corrupted.size(),
                            "; patching needs prompts of the same length (position t of one is position t of the other)");
    }
    check_tokens(model, clean, where);
    check_tokens(model, corrupted, where);
    const std::size_t v = model.config().vocab_size;
    for (const auto& [name, id] : {std::pair{"answer", answer}, std::pair{"wrong", wrong}}) {
        if (id < 0 || static_cast<std::size_t>(id) >= v) fail<ValueError>(where, ": ", name, " token ", id, " is outside the vocabulary 0..", v - 1);
    }
    if (answer == wrong) fail<ValueError>(where, ": the answer and the wrong token are both ", answer, "; their logit difference is 0");
}
}  // namespace

Patching patch(const DecoderLM& model, const std::vector<std::int32_t>& clean, const std::vector<std::int32_t>& corrupted,
               std::int32_t answer, std::int32_t wrong) {
    check_patch_input(model, clean, corrupted, answer, wrong);
    const ModelConfig& c = model.config();
    const std::size_t layers = c.num_layers, heads = c.num_heads, d = c.d_model / c.num_heads, t = clean.size();
    const Run clean_run = run(model, clean);
    Patching p;
    p.clean_diff = logit_diff(clean_run, answer, wrong);
    p.corrupted_diff = logit_diff(run(model, corrupted), answer, wrong);
    const double span = p.clean_diff - p.corrupted_diff;
    if (!(std::abs(span) > 0.0)) {
        fail<PatchingError>("interp::patch: the clean and corrupted prompts give the same logit difference (", p.clean_diff,
                            "): there is nothing for a patch to restore");
    }
    const auto restored = [&](const Edits& edits) {
        return static_cast<float>((logit_diff(run(model, corrupted, edits), answer, wrong) - p.corrupted_diff) / span);
    };
    p.heads = Tensor2::from_shape({layers, heads});
    for (std::size_t l = 0; l < layers; ++l) {
        for (std::size_t h = 0; h < heads; ++h) {
            Edits e;
            e.heads.push_back({l, h, head_slice(clean_run.head_outputs[l], h, d)});
            p.heads(l, h) = restored(e);
        }
    }
    p.residual = Tensor2::from_shape({layers, t});
    for (std::size_t l = 0; l < layers; ++l) {
        for (std::size_t i = 0; i < t; ++i) {
            Edits e;
            Tensor1 row = Tensor1::from_shape({c.d_model});
            std::copy_n(clean_run.residuals[l].data() + i * c.d_model, c.d_model, row.data());
            e.residuals.push_back({l, i, std::move(row)});
            p.residual(l, i) = restored(e);
        }
    }
    return p;
}

}  // namespace attnlab::interp
