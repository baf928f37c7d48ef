#include "attnlab/interp/run.hpp"

#include <algorithm>
#include <deque>
#include <string>

#include "attnlab/core/error.hpp"

namespace attnlab::interp {
namespace {

// Block `layer`'s concat stage: the edits of its heads applied, then the result copied out.
class HeadOutputHook final : public StageObserver {
public:
    HeadOutputHook(std::size_t head_dim, std::vector<const HeadEdit*> edits, Tensor2& kept)
        : head_dim_(head_dim), edits_(std::move(edits)), kept_(kept) {}
    bool wants(Stage) const override { return false; }  // nothing to copy: the flash path stays open
    void on_stage(const StageView&) override {}
    bool rewrites(Stage stage) const override { return stage == Stage::concat; }
    void on_rewrite(const StageEdit& e) override {
        for (const HeadEdit* edit : edits_) {
            for (std::size_t i = 0; i < e.rows; ++i) {
                std::copy_n(edit->value.data() + i * head_dim_, head_dim_, e.data + i * e.ld + edit->head * head_dim_);
            }
        }
        kept_.resize({e.rows, e.cols});
        for (std::size_t i = 0; i < e.rows; ++i) std::copy_n(e.data + i * e.ld, e.cols, kept_.data() + i * e.cols);
    }

private:
    std::size_t head_dim_;
    std::vector<const HeadEdit*> edits_;
    Tensor2& kept_;  // (T, C)
};

// The residual stream: the edits at each layer applied, then the stream copied out.
class ResidualRecorder final : public ResidualHook {
public:
    ResidualRecorder(const std::vector<ResidualEdit>& edits, std::vector<Tensor2>& kept) : edits_(edits), kept_(kept) {}
    void on_residual(std::size_t layer, Tensor3& x) override {
        const std::size_t t = x.shape(1), c = x.shape(2);
        for (const ResidualEdit& edit : edits_) {
            if (edit.layer == layer) std::copy_n(edit.value.data(), c, x.data() + edit.position * c);
        }
        Tensor2& out = kept_.at(layer);
        out.resize({t, c});
        std::copy_n(x.data(), t * c, out.data());
    }

private:
    const std::vector<ResidualEdit>& edits_;
    std::vector<Tensor2>& kept_;  // L + 1 of (T, C)
};

void check_edits(const DecoderLM& model, std::size_t t, const Edits& edits) {
    constexpr const char* where = "interp::run";
    const ModelConfig& c = model.config();
    const std::size_t d = c.d_model / c.num_heads;
    for (const HeadEdit& e : edits.heads) {
        check_head(model, e.layer, e.head, where);
        if (e.value.shape(0) != t || e.value.shape(1) != d) {
            fail<ShapeError>(where, ": the edit of head ", e.layer, ".", e.head, " must be (T, D) = (", t, ", ", d,
                             "), got ", shape_string(e.value.shape()));
        }
    }
    for (const ResidualEdit& e : edits.residuals) {
        if (e.layer > c.num_layers) {
            fail<ValueError>(where, ": residual layer ", e.layer, " out of range: the stream has layers 0..", c.num_layers,
                             " (", c.num_layers, " is after the last block)");
        }
        if (e.position >= t) fail<ValueError>(where, ": residual position ", e.position, " out of range for ", t, " tokens");
        if (e.value.size() != c.d_model) {
            fail<ShapeError>(where, ": the residual edit must be (C) = (", c.d_model, "), got ", shape_string(e.value.shape()));
        }
    }
}
}  // namespace

void check_layer(const DecoderLM& model, std::size_t layer, const char* where) {
    const std::size_t layers = model.config().num_layers;
    if (layer >= layers) fail<ValueError>(where, ": layer ", layer, " out of range: layers are 0..", layers - 1);
}

void check_head(const DecoderLM& model, std::size_t layer, std::size_t head, const char* where) {
    check_layer(model, layer, where);
    const std::size_t heads = model.config().num_heads;
    if (head >= heads) fail<ValueError>(where, ": head ", head, " out of range: heads are 0..", heads - 1);
}

void check_tokens(const DecoderLM& model, const std::vector<std::int32_t>& tokens, const char* where) {
    const ModelConfig& c = model.config();
    if (tokens.empty()) fail<ValueError>(where, ": the sequence has no tokens");
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i] < 0 || static_cast<std::size_t>(tokens[i]) >= c.vocab_size) {
            fail<ValueError>(where, ": token ", i, " has id ", tokens[i], ", outside the vocabulary 0..", c.vocab_size - 1);
        }
    }
    if (c.positional == PositionalKind::learned && tokens.size() > c.max_len) {
        fail<ValueError>(where, ": ", tokens.size(), " tokens are more than the model's ", c.max_len, " positions");
    }
}

Run run(const DecoderLM& model, const std::vector<std::int32_t>& tokens, const Edits& edits) {
    check_tokens(model, tokens, "interp::run");
    const std::size_t t = tokens.size(), layers = model.config().num_layers;
    check_edits(model, t, edits);
    Run out;
    out.tokens = tokens;
    out.head_outputs.resize(layers);
    out.residuals.resize(layers + 1);
    std::deque<HeadOutputHook> hooks;  // observers are handed out by address
    std::vector<StageObserver*> observers;
    const std::size_t d = model.config().d_model / model.config().num_heads;
    for (std::size_t l = 0; l < layers; ++l) {
        std::vector<const HeadEdit*> mine;
        for (const HeadEdit& e : edits.heads) {
            if (e.layer == l) mine.push_back(&e);
        }
        hooks.emplace_back(d, std::move(mine), out.head_outputs[l]);
        observers.push_back(&hooks.back());
    }
    ResidualRecorder residuals(edits.residuals, out.residuals);
    Index2 ids = Index2::from_shape({1, t});
    std::copy(tokens.begin(), tokens.end(), ids.data());
    const Tensor3 logits = model.forward_hooked(ids, observers, &residuals);  // (1, T, V)
    out.logits = Tensor2::from_shape({t, logits.shape(2)});
    std::copy(logits.begin(), logits.end(), out.logits.begin());
    return out;
}

Tensor2 head_slice(const Tensor2& head_outputs, std::size_t head, std::size_t head_dim) {
    const std::size_t t = head_outputs.shape(0), c = head_outputs.shape(1);
    Tensor2 out = Tensor2::from_shape({t, head_dim});
    for (std::size_t i = 0; i < t; ++i) std::copy_n(head_outputs.data() + i * c + head * head_dim, head_dim, out.data() + i * head_dim);
    return out;
}

}  // namespace attnlab::interp
