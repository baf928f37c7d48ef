// src/model/trunk.hpp (internal): the pieces EncoderClassifier and DecoderLM share — additive
// positional encodings with their backward, the per-model attention options, and the loops over
// the blocks. Not installed: the public headers are encoder_classifier.hpp and decoder_lm.hpp.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/transformer_block.hpp"
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
// Training (dropout_rng non-null applies dropout): every block's cache filled, the outputs in buffers.stream (a block reads its input
// only during its forward; its cache copies what backward needs), so a loop that passes the
// same caches and buffers allocates nothing. x must not be one of buffers.stream. Returns the
// last block's output.
const Tensor3& blocks_forward(const std::vector<TransformerBlock>& blocks, const Tensor3& x,
                              const AttentionOptions& options, const std::vector<StageObserver*>& observers,
                              std::vector<TransformerBlockCache>& caches, Rng* dropout_rng, TrunkBuffers& buffers);
// dout: (B, T, C) of the last block's output -> dx: (B, T, C) of the first block's input; the
// gradients between blocks go through buffers.dstream (neither may be dout or dx).
void blocks_backward(const std::vector<TransformerBlock>& blocks, const Tensor3& dout,
                     const std::vector<TransformerBlockCache>& caches, const AttentionOptions& options,
                     std::vector<TransformerBlockGrad>& grads, Tensor3& dx, TrunkBuffers& buffers);

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
