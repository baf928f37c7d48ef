// src/model/trunk.hpp (internal): the pieces EncoderClassifier and DecoderLM share — additive
// positional encodings with their backward, the per-model attention options, and the loops over
// the blocks. Not installed: the public headers are encoder_classifier.hpp and decoder_lm.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/transformer_block.hpp"
#include "attnlab/nn/embedding.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/posenc/learned.hpp"

namespace attnlab::detail {

// Masks left empty; rope and the scale from the config.
AttentionOptions attention_options(const ModelConfig& config);
// The same settings written into `options`, whose mask tensors are left alone (so a cached
// key-padding mask keeps its buffer); causal is set false.
void set_attention_options(const ModelConfig& config, AttentionOptions& options);

// x: (B, T, C) += the sinusoidal or learned rows of positions offset .. offset + T - 1;
// nothing for none and rope (rope acts inside attention).
void add_positional(Tensor3& x, PositionalKind kind, const LearnedPositionalEmbedding& table, std::size_t offset);

// Backward of table.add_to(x, offset): x[b, t] += table[offset + t]  =>  dtable[offset + t] += Σ_b dx[b, t].
// dx: (B, T, C), dtable: (max_len, C)
void learned_positional_backward(const Tensor3& dx, std::size_t offset, Tensor2& dtable);

// Inference: runs x: (B, T, C) through the blocks, no caches, no dropout. observers: one per
// block (entries may be null) or empty.
Tensor3 blocks_forward(const std::vector<TransformerBlock>& blocks, Tensor3 x, const AttentionOptions& options,
                       const std::vector<StageObserver*>& observers);
// Training (dropout_rng non-null applies dropout): every block's cache filled, so a loop that
// passes the same caches and buffers allocates nothing. A block's output goes to the next
// block's attention cache input (caches[l + 1].attn.x) when that block is post-LN without
// checkpointing (it keeps its input there for the backward, and so copies nothing), else to
// buffers.stream; a block reads its input only during its forward, its cache keeping what
// backward needs. x must not be one of buffers.stream. Returns the last block's output.
const Tensor3& blocks_forward(const std::vector<TransformerBlock>& blocks, const Tensor3& x,
                              const AttentionOptions& options, const std::vector<StageObserver*>& observers,
                              std::vector<TransformerBlockCache>& caches, Rng* dropout_rng, TrunkBuffers& buffers);
// dout: (B, T, C) of the last block's output -> dx: (B, T, C) of the first block's input; the
// gradients between blocks go through buffers.dstream (neither may be dout or dx).
void blocks_backward(const std::vector<TransformerBlock>& blocks, const Tensor3& dout,
                     const std::vector<TransformerBlockCache>& caches, const AttentionOptions& options,
                     std::vector<TransformerBlockGrad>& grads, Tensor3& dx, TrunkBuffers& buffers);

// ---- The first block's input as tables ----
// In a post-LN model the first block's attention projects x = tok_emb[tokens] + positions
// itself, so its q, k, v products can run over the vocabulary's and the positions' rows instead
// of every row of the batch (nn/linear.hpp TableRows), forward and backward: with V + T rows
// of tables for B·T rows of x (the tiny encoder: 80 for 512 per slice) they are a small part of
// the work. Used in training forwards when the tables have at most a quarter of x's rows
// (kRowsPerTableRow), the block keeps its cache (no checkpointing) and x has no CLS vector; the
// attention uses them on its flash path only. Measured on the tiny encoder's split step
// (comparison harness, medians of 5 interleaved rounds): 10.31 -> 9.32 ms on 1 thread,
// 5.15 -> 4.96 on 2.
//
// x has at least this many times the tables' rows for the tables to be used.
constexpr std::size_t kRowsPerTableRow = 4;
// Fills trunk.input_tables for x made from tokens (B, T) (the cache's own copy: the tables point
// into it) and points caches[0]'s attention at them, or clears that pointer.
void set_input_tables(const ModelConfig& config, const std::vector<TransformerBlock>& blocks, const Embedding& tok_emb,
                      const LearnedPositionalEmbedding& pos_emb, const Index2& tokens,
                      std::vector<TransformerBlockCache>& caches, TrunkBuffers& trunk);
// The first block projects x itself (a model whose x has a CLS vector in front).
void clear_input_tables(std::vector<TransformerBlockCache>& caches);
// Before backward: the tables' gradients go to dtok (V, C) and, with learned positions, dpos.
void set_input_table_gradients(TrunkBuffers& trunk, Tensor2& dtok, Tensor2* dpos);

// ---- Split training steps ----
// loss_and_backward runs a batch of more than kMicroBatchRows rows as slices of whole sequences
// (micro-batches), each through forward, loss and backward on its own. One lane per thread
// takes consecutive slices, reusing one cache for all of them, and accumulates into its own
// gradients (lane 0 straight into the model's; the others are added after, in lane order).
// Why: the tiny encoder's step (B 32, T 64) streams ~14 MiB of activations through every
// layer, far beyond a core's 2 MiB L2; a 512-row slice's activations stay near the core, and
// with 2 threads each core runs whole slices instead of meeting the other at every layer's
// split and join. Measured (interleaved rounds): the tiny encoder's step (comparison harness)
// 10.35 -> 9.60 ms on 1 thread, 5.69 -> 4.94 on 2, in WASM 42 -> 39.7 and 22.1 -> 20.5; the
// tiny GPT (bench_training) at T 64 60 -> 72 steps/s on 1 thread and 105 -> 140 on 2, at T 256
// 9.0 -> 12.4 and 16.0 -> 24.0. Slices of 256 rows were slower, 1024 no faster.
// What changes: only the order of the sums over the batch (weight, bias and LayerNorm
// gradients, the loss), so the gradients equal the whole batch's to rounding; each slice draws
// its own dropout generator from the model's, so dropout masks differ from an unsplit step's
// (and are the same for any thread count). The slice count depends on the threads only through
// the rounding up below.
// Rows (sequences x positions) a micro-batch aims at.
constexpr std::size_t kMicroBatchRows = 512;
// Micro-batches for a batch of `batch` sequences of `positions` rows on `threads` threads: 1 (the
// step is not split) for at most kMicroBatchRows rows, else about one per kMicroBatchRows rows,
// rounded up to a multiple of the threads (every thread runs as many) and at most one per
// sequence.
std::size_t micro_batch_count(std::size_t batch, std::size_t positions, std::size_t threads);
// First sequence of micro-batch i of n (sizes differ by at most one).
inline std::size_t micro_batch_begin(std::size_t i, std::size_t n, std::size_t batch) { return i * batch / n; }
// to = sequences [b0, b1) of from (their rows along the first axis), resized (the buffer is
// kept when the shape is unchanged).
template <class T>
void copy_sequences(const T& from, std::size_t b0, std::size_t b1, T& to) {
    auto shape = from.shape();
    const std::size_t per = from.size() / shape[0];
    shape[0] = b1 - b0;
    to.resize(shape);
    std::copy_n(from.data() + b0 * per, (b1 - b0) * per, to.data());
}
// The targets of y (n) that count (not kIgnoreTarget). ValueError for one outside [0, classes):
// "<noun> <y> <at(i)> is outside ...", at(i) naming where index i is in the batch.
template <class At>
std::size_t counted_targets(const std::int32_t* y, std::size_t n, std::size_t classes, const char* where,
                            const char* noun, At&& at) {
    std::size_t counted = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (y[i] == kIgnoreTarget) continue;
        if (y[i] < 0 || static_cast<std::size_t>(y[i]) >= classes) {
            fail<ValueError>(where, ": ", noun, " ", y[i], " ", at(i), " is outside [0, ", classes, ") and is not ",
                             kIgnoreTarget, " (ignored)");
        }
        ++counted;
    }
    return counted;
}
// split.slices = `count` slices of a batch of `batch` sequences: fill(slice, b0, b1) copies
// sequences [b0, b1) into it; each slice draws its dropout generator from `dropout`.
template <class Split, class Fill>
void fill_slices(Split& split, std::size_t count, std::size_t batch, Rng& dropout, Fill&& fill) {
    split.slices.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        fill(split.slices[i], micro_batch_begin(i, count, batch), micro_batch_begin(i + 1, count, batch));
        split.slices[i].dropout = Rng(dropout.next_u64());
    }
}
// Runs a split step's slices (split.slices, already filled) on `lanes` lanes: lane l takes
// slices [l·n/L, (l+1)·n/L) in order with its own cache, accumulating into model_grads (lane 0)
// or its own gradients (zeroed first, shaped like the model's on first use), which are then
// added to model_grads in lane order. run_slice(slice, cache, grads) does one slice's forward,
// loss and backward.
template <class Split, class Model, class Grad, class RunSlice>
void run_split_lanes(Split& split, std::size_t lanes, const Model& model, Grad& model_grads, RunSlice&& run_slice) {
    split.lanes.resize(lanes);
    for (std::size_t l = 1; l < lanes; ++l) {
        Grad& g = split.lanes[l].grads;
        if (g.blocks.size() != model.blocks.size()) g = Grad(model);
        g.zero();
    }
    const std::size_t count = split.slices.size();
    parallel_for(
        0, lanes,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t l = begin; l < end; ++l) {
                auto& lane = split.lanes[l];
                Grad& grads = l == 0 ? model_grads : lane.grads;
                for (std::size_t i = l * count / lanes; i < (l + 1) * count / lanes; ++i) {
                    run_slice(split.slices[i], lane.cache, grads);
                }
            }
        },
        1);
    for (std::size_t l = 1; l < lanes; ++l) model_grads.add(split.lanes[l].grads);
}
// The whole batch's loss from its slices' (each slice.result): the mean over all counted targets.
template <class Slices>
CrossEntropyResult combined_result(const Slices& slices) {
    CrossEntropyResult result;
    double total = 0.0;
    for (const auto& s : slices) {
        total += double(s.result.loss) * double(s.result.count);
        result.count += s.result.count;
        result.correct += s.result.correct;
    }
    result.loss = result.count == 0 ? 0.0f : static_cast<float>(total / double(result.count));
    return result;
}
// into += from, tensor by tensor (same shapes): a micro-batch's gradients into the model's.
void add_gradients(TransformerBlockGrad& into, const TransformerBlockGrad& from);
void add_gradients(LayerNormGrad& into, const LayerNormGrad& from);
void add_gradients(LinearGrad& into, const LinearGrad& from);
// into (n) += from (n)
void add_gradients(float* into, const float* from, std::size_t n);
template <class Tensor>
void add_gradient_tensor(Tensor& into, const Tensor& from) {
    ATTNLAB_DEBUG_ASSERT(into.size() == from.size());
    add_gradients(into.data(), from.data(), into.size());
}

// Records Stage::weights of one batch row in every block and stacks them: (L, H, T, S).
class AttentionMapRecorder {
public:
    explicit AttentionMapRecorder(std::size_t num_layers);
    std::vector<StageObserver*> observers();
    Tensor4 maps(std::size_t batch, std::size_t num_heads) const;

private:
    std::deque<TraceRecorder> recorders_;  // deque: recorders hold a mutex and never move
};

}  // namespace attnlab::detail
