// attnlab/interp/run.hpp: one decoder forward that the interpretability tools read and edit.
//
// What it is for: the tools of interp/ (head detectors, ablation, activation patching, the logit
// lens, direct logit attribution) all need the same three things of a decoder's evaluation
// forward on one sequence: every head's output before W_O, the residual stream between blocks,
// and the logits; and two of them need to change one of those on the way. This is that forward:
// the model's own (DecoderLM::forward_hooked), observed and rewritten through hooks, never a
// second implementation of attention. It works on every decoder attnlab opens (lab-trained,
// shipped, a GPT-2 checkpoint: they are all DecoderLM).
//   residual[0] -> block 0 -> residual[1] -> ... -> block L-1 -> residual[L] -> ln_f -> head -> logits
//   inside block l: heads' context (T, H·D) = head_outputs[l] -> ·W_Oᵀ + b_O -> + residual
// Head h of layer l is columns h·D .. (h+1)·D - 1 of head_outputs[l] (TransformerLens' hook_z).
// Not for: batches (one sequence), training (a rewritten forward is not differentiated).
//
//   attnlab::interp::Edits edits;
//   edits.heads.push_back({/*layer=*/1, /*head=*/0, attnlab::Tensor2(xt::zeros<float>({t, d}))});  // zero-ablate 1.0
//   attnlab::interp::Run clean = attnlab::interp::run(gpt, tokens);
//   attnlab::interp::Run ablated = attnlab::interp::run(gpt, tokens, edits);
//   float change = ablated.logits(t - 1, id) - clean.logits(t - 1, id);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/core/tensor.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace attnlab::interp {

// Head `head` of block `layer`: its output before W_O replaced at every position by value (T, D).
struct HeadEdit {
    std::size_t layer = 0;
    std::size_t head = 0;
    Tensor2 value;  // (T, D)
};

// The residual stream entering block `layer` (layer = L: leaving the last block, before ln_f)
// replaced at one position by value (C).
struct ResidualEdit {
    std::size_t layer = 0;
    std::size_t position = 0;
    Tensor1 value;  // (C)
};

struct Edits {
    std::vector<HeadEdit> heads;
    std::vector<ResidualEdit> residuals;
    bool empty() const { return heads.empty() && residuals.empty(); }
};

// What a run kept, after its edits (what actually flowed).
struct Run {
    std::vector<std::int32_t> tokens;   // (T)
    Tensor2 logits;                     // (T, V)
    std::vector<Tensor2> head_outputs;  // L of (T, C): every head's context before W_O (C = H·D)
    std::vector<Tensor2> residuals;     // L + 1 of (T, C): entering block l; [L] after the last block
};

// ValueError naming the value and the valid range: a layer >= L, a head >= H.
void check_layer(const DecoderLM& model, std::size_t layer, const char* where);
void check_head(const DecoderLM& model, std::size_t layer, std::size_t head, const char* where);
// ValueError for an empty sequence, an id >= V or more tokens than learned positions (naming them).
void check_tokens(const DecoderLM& model, const std::vector<std::int32_t>& tokens, const char* where);

// The evaluation forward of tokens (T) with edits applied. Throws ValueError (naming the edit)
// for a layer, head or position out of range or a value of the wrong shape.
Run run(const DecoderLM& model, const std::vector<std::int32_t>& tokens, const Edits& edits = {});

// Head h's output columns of a run's head_outputs[l]: (T, C) -> (T, D).
Tensor2 head_slice(const Tensor2& head_outputs, std::size_t head, std::size_t head_dim);

}  // namespace attnlab::interp
