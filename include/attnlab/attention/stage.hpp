// attnlab/attention/stage.hpp: the named stages of an attention call, and the observer that
// can record them.
//
// What it is for: letting a caller (a test, the CLI, the browser page) see every intermediate
// tensor of attention — x, Q, K, V, scores, scaled, masked, weights, context, concat, output —
// without weaving instrumentation into the compute. Kernels make one null-checked call per stage;
// the observer first says whether it wants the stage, so an observer that records only
// `weights` costs one copy per head, and no observer costs nothing.
// Not for: gradients or training metrics (see train/).
//
// Per-head stages carry a head index: q, q_rot, phi_q, scores, scaled, masked, weights, context
// use the query head (0..H-1); k, k_rot, phi_k, v use the key/value head (0..Hkv-1). Linear
// attention (linear_attention.hpp) records phi_q, phi_k, weights and context in place of
// scores, scaled, masked. x, concat, output are
// whole-model-width stages with head = -1.
//
//   attnlab::TraceRecorder trace;
//   mha.forward(x, nullptr, options, &trace);
//   const attnlab::Tensor2& w = trace.get(attnlab::Stage::weights, /*batch=*/0, /*head=*/1);  // (T, S)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>
#include <vector>

#include "attnlab/core/numeric_format.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

// Canonical order = the order of computation. One name table (stage_name) serves C++ and JS.
enum class Stage : std::uint8_t {
    x,        // (T, C)   input of the layer (after additive positional encoding, if any)
    q,        // (T, D)   per query head, x·W_Qᵀ + b_Q split into heads
    k,        // (S, D)   per key/value head
    v,        // (S, D)   per key/value head
    q_rot,    // (T, D)   q after RoPE
    k_rot,    // (S, D)   k after RoPE
    phi_q,    // (T, D)   linear attention: φ(q) = elu(q) + 1 (of q_rot with RoPE)
    phi_k,    // (S, D)   linear attention: φ(k), per key/value head
    scores,   // (T, S)   q·kᵀ
    scaled,   // (T, S)   scores · scale (1/sqrt(D) unless switched off or overridden)
    masked,   // (T, S)   scaled with masked entries set to -inf
    weights,  // (T, S)   softmax of each row of masked; linear attention: φ(q_i)·φ(k_j) / row sum
    context,  // (T, D)   weights·v
    concat,   // (T, C)   all heads' context joined back along the width
    output,   // (T, C)   concat·W_Oᵀ + b_O
};
inline constexpr std::size_t kNumStages = 15;

// "weights" for Stage::weights.
std::string_view stage_name(Stage stage);
// Inverse of stage_name; throws ConfigError listing the valid names for an unknown one.
Stage stage_from_name(std::string_view name);
// All stages in canonical order.
const std::array<Stage, kNumStages>& all_stages();
// True for stages recorded once per head.
bool stage_is_per_head(Stage stage);

// A read-only row-major matrix view of one stage for one (batch, head). Valid only during the
// on_stage call: an observer that keeps data must copy it.
struct StageView {
    Stage stage;
    std::size_t batch;
    std::ptrdiff_t head;  // -1 for x, concat, output
    std::size_t rows;
    std::size_t cols;
    std::size_t ld;  // elements between consecutive rows
    const float* data;
    // The cells of this matrix that rounding to an emulated format (core/numeric_format.hpp)
    // turned from non-zero into ±0, as flat indices row · cols + col; null when none were noted
    // (float32 rounds nothing).
    const FlushedCells* flushed = nullptr;
};

// What a trace saw of one stage's numbers, over every (batch, head) recorded: the article's
// §6.3 monitor (an fp16 overflow shows as +inf, then NaN downstream).
struct StageNumerics {
    Stage stage;
    std::size_t count = 0;     // values recorded
    float max_abs = 0.0f;      // the largest finite |value| (0 if none)
    std::size_t pos_inf = 0;   // +Infinity
    std::size_t neg_inf = 0;   // -Infinity (the masked stage's hidden keys are -inf by design)
    std::size_t nan = 0;       // NaN
    std::size_t flushed = 0;   // non-zero values rounded to ±0 (StageView::flushed)
};

// A writable row-major view of one stage for one batch row, handed to an observer that rewrites
// it (StageObserver::rewrites). Valid only during the on_rewrite call.
struct StageEdit {
    Stage stage;
    std::size_t batch;
    std::size_t rows;
    std::size_t cols;
    std::size_t ld;  // elements between consecutive rows
    float* data;
};

class StageObserver {
public:
    virtual ~StageObserver() = default;
    // Asked before any work is done for the stage. Must be cheap and thread-safe.
    virtual bool wants(Stage stage) const = 0;
    // Called once per (stage, batch, head), possibly from several threads at once.
    virtual void on_stage(const StageView& view) = 0;
    // Hooks of the interpretability tools (interp/: ablation, patching): whether this observer
    // rewrites `stage` in place before the computation goes on. Offered only for concat (every
    // head's output before W_O, one call per batch row, on the calling thread). For inference
    // forwards: a backward of a rewritten forward would treat the new heads as computed.
    virtual bool rewrites(Stage stage) const {
        (void)stage;
        return false;
    }
    virtual void on_rewrite(const StageEdit& edit) { (void)edit; }
};

// Copies every wanted stage into its own (rows, cols) tensor.
class TraceRecorder final : public StageObserver {
public:
    TraceRecorder();  // records every stage
    explicit TraceRecorder(const std::vector<Stage>& only);

    bool wants(Stage stage) const override;
    void on_stage(const StageView& view) override;

    // Stages recorded at least once, in canonical order.
    std::vector<Stage> stages() const;
    bool has(Stage stage, std::size_t batch = 0, std::ptrdiff_t head = -1) const;
    // Throws ValueError naming the stage, batch and head if that entry was not recorded.
    const Tensor2& get(Stage stage, std::size_t batch = 0, std::ptrdiff_t head = -1) const;
    // Number of distinct heads recorded for a stage (0 if none; 1 for whole-width stages).
    std::size_t num_heads(Stage stage) const;
    std::size_t num_batches(Stage stage) const;
    // One entry per recorded stage, in canonical order.
    std::vector<StageNumerics> numerics() const;
    // The flat indices (row · cols + col) of the cells of one entry flushed to ±0 by rounding,
    // ascending (empty in float32). Throws ValueError like get for an entry not recorded.
    const FlushedCells& flushed_cells(Stage stage, std::size_t batch = 0, std::ptrdiff_t head = -1) const;
    void clear();

private:
    using Key = std::tuple<Stage, std::size_t, std::ptrdiff_t>;
    std::array<bool, kNumStages> wanted_{};
    mutable std::mutex mutex_;
    std::map<Key, Tensor2> entries_;
    std::map<Key, FlushedCells> flushed_;
};

// The one null-checked call kernels make: records a (rows, cols) matrix if observer wants it.
inline void observe(StageObserver* observer, Stage stage, std::size_t batch, std::ptrdiff_t head, std::size_t rows,
                    std::size_t cols, std::size_t ld, const float* data, const FlushedCells* flushed = nullptr) {
    if (observer && observer->wants(stage)) {
        observer->on_stage(StageView{stage, batch, head, rows, cols, ld, data, flushed});
    }
}

// The one null-checked call that offers a stage for rewriting: t (B, N, W), one batch row at a time.
inline void offer_rewrite(StageObserver* observer, Stage stage, Tensor3& t) {
    if (!observer || !observer->rewrites(stage)) return;
    const std::size_t n = t.shape(1), w = t.shape(2);
    for (std::size_t b = 0; b < t.shape(0); ++b) observer->on_rewrite(StageEdit{stage, b, n, w, w, t.data() + b * n * w});
}

// data: (rows, cols), contiguous, rounded in place to `format`. When the observer wants `stage`
// the flushed cells are noted in `cells` (cleared first) and returned for observe(); otherwise
// the rounding takes round_span's vector loop and the result is null.
inline const FlushedCells* round_observed(StageObserver* observer, Stage stage, Precision format, float* data,
                                          std::size_t rows, std::size_t cols, FlushedCells& cells) {
    cells.clear();
    if (observer && observer->wants(stage)) {
        round_rows_marking(format, data, rows, cols, cols, cells);
        return &cells;
    }
    round_span(format, data, rows * cols);
    return nullptr;
}

}  // namespace attnlab
