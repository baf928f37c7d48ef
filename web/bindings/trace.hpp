// web/bindings/trace.hpp: the JavaScript `Trace` object returned by MultiHeadAttention.trace().
//
// What it is for: holding the stages one attention call recorded (an attnlab::TraceRecorder)
// and handing each (stage, head, batch) matrix to JavaScript as a copied {shape:[rows, cols],
// data}. Stage names come from attnlab::stage_name / stage_from_name, the engine's one name
// table; this file has none of its own. Not for: running attention (the layer's binding does).
//
//   const tr = mha.trace(x, { causal: true });
//   tr.stageNames();          // ['x', 'q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', ...]
//   tr.stage('weights', 1);   // head 1, batch 0: { shape: [T, S], data: Float32Array }
//   tr.delete();
#pragma once

#include <cstddef>
#include <memory>
#include <tuple>

#include <emscripten/val.h>

#include "attnlab/attention/stage.hpp"

namespace attnlab::web {

class TraceBinding {
public:
    explicit TraceBinding(std::unique_ptr<TraceRecorder> recorder) : recorder_(std::move(recorder)) {}

    // Recorded stages in canonical order (the order of computation).
    emscripten::val stage_names() const;
    // One (rows, cols) matrix. head defaults to 0 for per-head stages and -1 (whole width) for
    // x, concat, output; batch defaults to 0.
    emscripten::val stage(emscripten::val name) const;
    emscripten::val stage(emscripten::val name, emscripten::val head) const;
    emscripten::val stage(emscripten::val name, emscripten::val head, emscripten::val batch) const;
    // Heads recorded for a stage (1 for whole-width stages), and batch entries.
    emscripten::val num_heads(emscripten::val name) const;
    emscripten::val num_batches(emscripten::val name) const;
    // {<stage>: {count, maxAbs, posInf, negInf, nan, flushed}} for every recorded stage, in
    // canonical order (TraceRecorder::numerics).
    emscripten::val numerics() const;
    // The flat indices (row · cols + col) of the cells of one (stage, head, batch) matrix that
    // rounding to an emulated format flushed to ±0, as an ascending Int32Array (empty in fp32);
    // head and batch default as in stage().
    emscripten::val flushed_cells(emscripten::val name) const;
    emscripten::val flushed_cells(emscripten::val name, emscripten::val head) const;
    emscripten::val flushed_cells(emscripten::val name, emscripten::val head, emscripten::val batch) const;

private:
    Stage recorded_stage(const emscripten::val& name, const char* where) const;
    // The recorded (stage, batch, head) key a JS call names, or ConfigError naming what is out of range.
    std::tuple<Stage, std::size_t, std::ptrdiff_t> entry_at(const emscripten::val& name, const emscripten::val* head,
                                                            const emscripten::val* batch, const char* where) const;
    emscripten::val stage_at(const emscripten::val& name, const emscripten::val* head, const emscripten::val* batch) const;
    emscripten::val flushed_at(const emscripten::val& name, const emscripten::val* head, const emscripten::val* batch) const;

    std::unique_ptr<TraceRecorder> recorder_;
};

}  // namespace attnlab::web
