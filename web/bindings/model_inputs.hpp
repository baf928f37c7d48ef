// web/bindings/model_inputs.hpp: the inputs of the JavaScript Model's calls (model.cpp), read
// from JavaScript values: tokens with their padding mask, a prompt, images, a caption with its
// image, a series with its timestamps, the layer of an image model.
//
// What it is for: model.cpp's forward-style calls (logits, predict, forecast, attentionMaps,
// trace, generate) read their arguments here and then only call the engine. Each parser names
// the call (`where`) in the error of a bad value, and keeps whether the input came batched, so the
// result can keep the input's rank. Not for: the Model's constructor options (model.cpp reads them
// from ModelConfig's field table).
//
//   const TokenCall call = parse_tokens(model, tokens, options, {"padding"}, "Model.logits");
//   const Tensor3 logits = model.sequence_logits(call.tokens);   // (B, T, V)
//   const PairCall pair = pair_from_js(value, "Model.predict");  // pair.tokens (B, T), pair.images (B, S, S)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <emscripten/val.h>

#include "attnlab/core/tensor.hpp"
#include "attnlab/facade/model.hpp"
#include "convert.hpp"

namespace attnlab::web {

// Tokens and the optional padding mask of a forward-style call.
struct TokenCall {
    Index2 tokens;         // (B, T)
    bool batched = false;  // tokens came as [B, T]
    Mask2 padding;         // (B, T) 1 = padding, encoder only; empty = none
    std::size_t batch = 0;  // attentionMaps: which batch row
};

// tokens: Int32Array | number[] | {shape: [T] | [B, T], data}; options: the keys `allowed` of
// padding ([T] | [B, T], encoders only) and batch.
TokenCall parse_tokens(const Model& model, const val& tokens, const val& options,
                       std::vector<const char*> allowed, const char* where);

// prompt (Int32Array | number[] | {shape:[T]}) -> ids.
std::vector<std::int32_t> prompt_from_js(const val& prompt, const char* where);

// An image model's input: images (S, S) or (B, S, S) -> (B, S, S), batched says which.
Tensor3 images_from_js(const val& images, const char* where, bool* batched);

// A crossmodal model's input: { tokens: [T] | [B, T], images: [S, S] | [B, S, S] } -> (B, T), (B, S, S).
struct PairCall {
    Index2 tokens;
    Tensor3 images;
    bool batched = false;  // the tokens came as [B, T]
};
PairCall pair_from_js(const val& pair, const char* where);

// A forecaster's input: values (T, F) | (B, T, F) and time (T') | (B, T') (optional unless pe is
// time) -> (B, T, F), (B, T') or empty; batched says which rank came in.
struct SeriesCall {
    Tensor3 values;
    Tensor2 time;
    bool batched = false;
};
SeriesCall series_from_js(const val& values, const val& time, const char* where);

// The layer option of an image model's trace / attentionMaps (required).
std::size_t image_layer(const Model& model, const JsOptions& opt, const char* where);

}  // namespace attnlab::web
