// attnlab/model/attention_stats.hpp: attention diagnostics gathered while a model runs.
//
// What it is for: the numbers a trainer reports each step when asked (Model::set_record_attention_stats):
// per block, the largest |scaled score| and the mean entropy of the attention rows per head. They
// are StageObservers (attention/stage.hpp): the attention kernels hand them the tiles they compute
// anyway, so recording costs no second pass. Not for: recording whole tensors (TraceRecorder).
//
//   attnlab::AttentionStatsCollector collector;
//   const std::vector<attnlab::StageObserver*>& observers = collector.start(layers, heads, t * t);
//   ... run the blocks, block l reporting to observers[l] ...
//   attnlab::AttentionStats stats;
//   collector.finish(stats);            // stats.max_abs_score (L), stats.entropy (L, H)
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

#include "attnlab/attention/stage.hpp"
#include "attnlab/core/tensor.hpp"

namespace attnlab {

// Attention diagnostics the trainer reports each step (when asked): the largest |scaled score|
// (the article's fp16 warning sign: scores beyond ~65504 overflow half precision) and the mean
// entropy of the attention rows per head (near 0: each query looks at one key; near log S:
// uniform attention). Attach one per block as its StageObserver; it wants Stage::scaled, masked
// and weights, the (T, S) tiles the SDPA kernel computes anyway.
//
// The entropy needs no logarithm per weight: the weights of a row are softmax(x) of its masked
// scores x, so ln w_j = x_j - lse and -Σ_j w_j ln w_j = lse - Σ_j w_j x_j, with lse = x_k - ln w_k
// for the row's largest weight w_k (one log per row). The masked tile is copied into the
// running thread's slot (reserve_score_slots; one per pool thread, so no worker allocates) to
// have x when the weights arrive; weights seen without their masked tile (no slot, or another
// caller's order) take the direct -Σ w ln w. (A logarithm per weight would cost a tenth of a
// training step with the diagnostics on.)
class AttentionStatsRecorder final : public StageObserver {
public:
    explicit AttentionStatsRecorder(std::size_t num_heads = 0);

    bool wants(Stage stage) const override {
        return stage == Stage::scaled || stage == Stage::masked || stage == Stage::weights;
    }
    void on_stage(const StageView& view) override;

    // max |scaled| over every (batch, head, query, key) seen, masked keys included (they are
    // computed before masking); 0 if nothing was recorded.
    float max_abs_score() const;
    // (H) mean over (batch, query rows) of -Σ_j w_j log w_j, in nats; rows with no visible key
    // (all weights 0) are skipped.
    Tensor1 mean_entropy() const;
    // mean_entropy() of one head, without allocating; 0 for a head outside the recorder.
    float mean_entropy(std::size_t head) const;
    void clear();
    // Room for one masked (T, S) tile of tile_floats per default-pool thread (grow-only; not
    // while a forward runs). Without it, or for a larger tile, the entropy takes the direct sum.
    void reserve_score_slots(std::size_t tile_floats);

private:
    struct ScoreSlot {  // the masked tile a thread saw last, and the call it came from
        bool valid = false;
        std::size_t batch = 0;
        std::ptrdiff_t head = -1;
        std::size_t rows = 0, cols = 0;
    };
    std::vector<float> slot_scores_;  // (threads, slot_floats_)
    std::vector<ScoreSlot> slots_;    // (threads)
    std::size_t slot_floats_ = 0;
    mutable std::mutex mutex_;
    float max_abs_ = 0.0f;
    std::vector<double> entropy_sum_;    // (H)
    std::vector<std::size_t> row_count_;  // (H)
};

// One step's diagnostics of a whole model.
struct AttentionStats {
    Tensor1 max_abs_score;  // (L) largest |scaled score| per layer
    Tensor2 entropy;        // (L, H) mean attention entropy per layer and head, nats

    // The largest over all layers.
    float max_abs() const;
};

// A model's per-layer AttentionStatsRecorders, kept from one forward to the next so recording
// the statistics allocates nothing once they exist. Copying a model gives its copy an empty
// collector (the recorders are scratch of one forward, and hold mutexes).
//
//   const std::vector<StageObserver*>& observers = collector.start(layers, heads, t * t);  // one per block
//   ... run the blocks with observers[l] ...
//   collector.finish(stats);
class AttentionStatsCollector {
public:
    AttentionStatsCollector() = default;
    AttentionStatsCollector(const AttentionStatsCollector&) {}
    AttentionStatsCollector& operator=(const AttentionStatsCollector&) { return *this; }

    // Clears the recorders (made on first use, or again if the shape changed), gives them room
    // for (T, S) tiles of tile_floats (AttentionStatsRecorder::reserve_score_slots) and returns
    // one observer per layer, valid until the next start().
    const std::vector<StageObserver*>& start(std::size_t num_layers, std::size_t num_heads, std::size_t tile_floats);
    // The statistics gathered since start(), written into out (its tensors reused when their
    // shapes already fit).
    void finish(AttentionStats& out) const;

private:
    std::deque<AttentionStatsRecorder> recorders_;  // deque: recorders hold a mutex and never move
    std::vector<StageObserver*> observers_;
    std::size_t num_heads_ = 0;
};

}  // namespace attnlab
