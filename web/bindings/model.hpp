// web/bindings/model.hpp: the JavaScript `Model` object (model.cpp) and what the Trainer binding
// needs of it.
//
// What it is for: holding one attnlab::Model (any of its seven model classes) in shared
// ownership, so that a Trainer built on it keeps it alive: deleting the JavaScript Model while a
// Trainer still uses it is safe (the C++ model dies with the last of the two). Not for: training
// (trainer.cpp) or task data (task.hpp).
//
//   const model = new lab.Model({ kind: 'decoder', vocabSize: 11, dModel: 32, numHeads: 4, seed: 1 });
//   model.generate([3, 1, 4, 10], 4, { temperature: 0 });   // Int32Array
//   const again = lab.Model.load(model.save());
//   again.delete(); model.delete();
#pragma once

#include <memory>

#include <emscripten/val.h>

#include "attnlab/facade/model.hpp"
#include "trace.hpp"

namespace attnlab::web {

class ModelBinding {
public:
    explicit ModelBinding(std::shared_ptr<Model> model) : model_(std::move(model)) {}

    static ModelBinding* create(emscripten::val options);
    static ModelBinding* create_without_options();
    static ModelBinding load(emscripten::val bytes);
    static emscripten::val checkpoint_notes(emscripten::val bytes);

    emscripten::val config() const;
    emscripten::val kind() const;
    emscripten::val num_parameters() const;
    emscripten::val parameter_names() const;
    emscripten::val get_parameter(emscripten::val name) const;
    void set_parameter(emscripten::val name, emscripten::val tensor);

    emscripten::val logits(emscripten::val tokens) const;
    emscripten::val logits(emscripten::val tokens, emscripten::val options) const;
    emscripten::val predict(emscripten::val tokens) const;
    emscripten::val predict(emscripten::val tokens, emscripten::val options) const;
    // Forecasters: values (T, F) | (B, T, F), time (T') | (B, T') -> (B, horizon) (rank kept).
    emscripten::val forecast(emscripten::val values) const;
    emscripten::val forecast(emscripten::val values, emscripten::val time) const;
    emscripten::val attention_maps(emscripten::val tokens) const;
    emscripten::val attention_maps(emscripten::val tokens, emscripten::val options) const;
    // Every stage of block options.layer (a Trace, as MultiHeadAttention.trace returns).
    TraceBinding trace(emscripten::val tokens) const;
    TraceBinding trace(emscripten::val tokens, emscripten::val options) const;
    // Image models: where attention layer `layer`'s windows sit ({ grid, window, shift,
    // windowsPerSide, patchSize, cls }).
    emscripten::val window_layout(emscripten::val layer) const;
    emscripten::val generate(emscripten::val prompt, emscripten::val max_new) const;
    emscripten::val generate(emscripten::val prompt, emscripten::val max_new, emscripten::val options) const;

    // The tokenizer the model carries (a new Tokenizer handle), or null; setTokenizer(tok | null).
    emscripten::val tokenizer() const;
    void set_tokenizer(emscripten::val tokenizer);
    // Text <-> ids with the model's tokenizer (Error when it has none).
    emscripten::val encode(emscripten::val text) const;
    emscripten::val decode(emscripten::val ids) const;
    // The continuation of a text prompt with the model's tokenizer (train/text_task.hpp
    // continue_text: a character model reads <bos> first and stops at <eos>). Options:
    // temperature (0 = greedy), seed.
    emscripten::val continue_text(emscripten::val prompt, emscripten::val max_new, emscripten::val options) const;

    // The interpretability tools (interp.cpp; include/attnlab/interp/), for Transformer decoders.
    emscripten::val head_scores(emscripten::val tokens) const;
    // Without options, the ones that need some say which (an Error naming the missing key).
    emscripten::val ablate(emscripten::val tokens) const;
    emscripten::val ablate(emscripten::val tokens, emscripten::val options) const;
    emscripten::val patch(emscripten::val clean, emscripten::val corrupted) const;
    emscripten::val patch(emscripten::val clean, emscripten::val corrupted, emscripten::val options) const;
    emscripten::val logit_lens(emscripten::val tokens) const;
    emscripten::val logit_lens(emscripten::val tokens, emscripten::val options) const;
    emscripten::val residuals(emscripten::val tokens) const;
    emscripten::val logit_attribution(emscripten::val tokens) const;
    emscripten::val logit_attribution(emscripten::val tokens, emscripten::val options) const;

    emscripten::val save() const;
    emscripten::val save(emscripten::val notes) const;
    void load_parameters(emscripten::val bytes);

    const std::shared_ptr<Model>& shared() const { return model_; }

private:
    std::shared_ptr<Model> model_;
};

}  // namespace attnlab::web
