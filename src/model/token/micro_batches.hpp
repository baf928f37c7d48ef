// src/model/token/micro_batches.hpp (internal): a training step split into micro-batches, and the
// gradient sums that join them. EncoderClassifier and DecoderLM fill and run a SplitStep
// (attnlab/model/token/split_step.hpp) with these.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "attnlab/core/error.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/model/transformer_block.hpp"
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"

namespace attnlab::detail {

// loss_and_backward runs a batch of more than kMicroBatchRows rows as slices of whole sequences
// (micro-batches), each through forward, loss and backward on its own. One lane per thread
// takes consecutive slices, reusing one cache for all of them, and accumulates into its own
// gradients (lane 0 straight into the model's; the others are added after, in lane order).
// Why: the tiny encoder's step (B 32, T 64) streams ~14 MiB of activations through every
// layer, far beyond a core's 2 MiB L2; a 512-row slice's activations stay near the core, and
// with 2 threads each core runs whole slices instead of meeting the other at every layer's
// split and join. 512 rows: smaller slices pay more per-slice overhead, larger ones leave the
// cache (docs/performance.md has the measurements).
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
// loss and backward. Lane l runs on pool thread l every step (parallel_for_pinned): a lane runs
// its kernels inline, in the running thread's own scratch (the kernels' thread-local buffers),
// so the first split step sizes every thread's scratch for its lane and later steps allocate
// nothing. Taken by whichever thread came first, a lane would grow a worker's scratch the first
// time that worker happened to take one, at any step.
template <class Split, class Model, class Grad, class RunSlice>
void run_split_lanes(Split& split, std::size_t lanes, const Model& model, Grad& model_grads, RunSlice&& run_slice) {
    split.lanes.resize(lanes);
    for (std::size_t l = 1; l < lanes; ++l) {
        Grad& g = split.lanes[l].grads;
        if (g.trunk.blocks.size() != model.trunk.blocks.size()) g = Grad(model);
        g.zero();
    }
    const std::size_t count = split.slices.size();
    parallel_for_pinned(lanes, [&](std::size_t begin, std::size_t end) {
        for (std::size_t l = begin; l < end; ++l) {
            auto& lane = split.lanes[l];
            Grad& grads = l == 0 ? model_grads : lane.grads;
            for (std::size_t i = l * count / lanes; i < (l + 1) * count / lanes; ++i) {
                run_slice(split.slices[i], lane.cache, grads);
            }
        }
    });
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

}  // namespace attnlab::detail
