// attnlab/attnlab.hpp: the whole public API in one include.
//
// attnlab is an attention and Transformer engine that shows its work: every attention call can
// report its stages (x, Q, K, V, scores, scaled, masked, weights, context, concat, output) to an
// observer. Headers are grouped by concept:
//   core/      errors, tensor aliases, seeded RNG, thread pool
//   kernels/   SIMD matmul, softmax, activations, layer norm (forward and backward)
//   attention/ stages, masks, scaled dot-product attention, head split/merge, multi-head attention
//   posenc/    sinusoidal, learned and rotary positional encodings
//   nn/        Linear, embedding, layer norm, feed-forward, dropout, cross-entropy, LSTM, named parameters
//   model/     config (one field table), Transformer block, attention statistics, and one folder
//              per family: token/ (the shared trunk, encoder classifier, decoder LM: a tiny GPT),
//              lstm/, vision/ (ViT, Swin), series/ (forecasters), crossmodal/
//   io/        safetensors files and model checkpoints
//   facade/    Model: any of the seven model classes (AnyModel), loaded and saved through io/
//   train/     tasks, optimisers, schedules, metrics, the trainer
//
// A five-line example (see README.md for more):
//   attnlab::Rng rng(1);
//   attnlab::MultiHeadAttention mha({/*d_model=*/8, /*num_heads=*/2}, rng);
//   attnlab::Tensor3 x = xt::ones<float>({1, 4, 8});                 // (B, T, C)
//   attnlab::TraceRecorder trace;
//   attnlab::Tensor3 y = mha.forward(x, nullptr, {}, &trace);         // (B, T, C)
//   const auto& w = trace.get(attnlab::Stage::weights, 0, 1);         // head 1: (T, T)
#pragma once

#include "attnlab/attention/heads.hpp"
#include "attnlab/attention/mask.hpp"
#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/experiments/experiments.hpp"
#include "attnlab/facade/any_model.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/kernels/elementwise.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "attnlab/io/checkpoint.hpp"
#include "attnlab/io/safetensors.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/model/batch.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/crossmodal/crossmodal.hpp"
#include "attnlab/model/lstm/lstm_models.hpp"
#include "attnlab/model/series/series_models.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"
#include "attnlab/model/token/split_step.hpp"
#include "attnlab/model/token/trunk.hpp"
#include "attnlab/model/transformer_block.hpp"
#include "attnlab/model/vision/image_classifier.hpp"
#include "attnlab/model/vision/swin_block.hpp"
#include "attnlab/nn/dropout.hpp"
#include "attnlab/nn/embedding.hpp"
#include "attnlab/nn/feed_forward.hpp"
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/lstm.hpp"
#include "attnlab/nn/parameter.hpp"
#include "attnlab/posenc/learned.hpp"
#include "attnlab/posenc/positional_encoding.hpp"
#include "attnlab/posenc/rope.hpp"
#include "attnlab/posenc/sinusoidal.hpp"
#include "attnlab/train/metrics.hpp"
#include "attnlab/train/optimizer.hpp"
#include "attnlab/train/schedule.hpp"
#include "attnlab/train/tasks.hpp"
#include "attnlab/train/trainer.hpp"
