// attnlab/model/batch.hpp: one batch of model inputs and what the loss compares them with.
//
// What it is for: the unit a Task (train/tasks.hpp) draws and a Model (facade/model.hpp) trains
// or evaluates on: a decoder reads tokens and targets, an encoder tokens, padding and labels, an
// image classifier (vit, swin) pixels and labels, a forecaster values, their timestamps and the
// values to forecast (with the seasonal-naive forecast of the same batch beside them, so every
// batch carries the baseline a model must beat).
// Not for: generation prompts (DecoderLM::generate takes a token list).
//
//   attnlab::Batch batch = task->sample(32, rng);   // tokens (32, T), targets or labels
//   model.loss_and_backward(batch);
#pragma once

#include "attnlab/core/tensor.hpp"

namespace attnlab {

struct Batch {
    Index2 tokens;   // (B, T) model inputs, each in [0, vocab_size())
    Index2 targets;  // (B, T) sequence tasks: target token per position, -1 = ignored; else empty
    Index1 labels;   // (B) classification tasks: label in [0, num_classes()); else empty
    Mask2 padding;   // (B, T) 1 = padding (the key_padding_mask of attention); empty if none
    Tensor3 pixels;  // (B, S, S) image tasks: grayscale images (tokens empty), with labels; else empty
    // Series tasks (train/series.hpp; tokens empty), else all four empty:
    Tensor3 values;    // (B, T, F) the context window the model reads
    Tensor2 time;      // (B, T + horizon) timestamps of the context steps, then of the forecast steps
    Tensor2 forecast;  // (B, horizon) feature 0 at the steps after the context: the regression target
    Tensor2 baseline;  // (B, horizon) the seasonal-naive forecast (seasonal_naive_forecast) of this batch
};

}  // namespace attnlab
