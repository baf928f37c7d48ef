// attnlab/interp/logit_lens.hpp: what the model would predict if it stopped after each block
// (the logit lens, nostalgebraist 2020).
//
// What it is for: watching a prediction form through the depth. At one position, the residual
// stream entering block l (interp/run.hpp; l = L is the last block's output) is read out as
// the model's own last step reads its final stream:
//   lens[l] = ln_f(residual[l]) · W_Uᵀ     pre-LN (GPT-2): through the final LayerNorm and the unembedding
//   lens[l] = residual[l] · W_Uᵀ           post-LN: no final LayerNorm (each block ends with its own)
// W_U is the head's (V, C) matrix (the token embedding when tied). lens[L] is the model's logits.
// Not for: a tuned lens (no learned translators per layer).
//
//   attnlab::Tensor2 lens = attnlab::interp::logit_lens(gpt, tokens, tokens.size() - 1);   // (L + 1, V)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/core/tensor.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace attnlab::interp {

// tokens (T), position < T -> (L + 1, V). ValueError naming a position out of range.
Tensor2 logit_lens(const DecoderLM& model, const std::vector<std::int32_t>& tokens, std::size_t position);

// The k largest entries of row r of (N, V): their ids, largest first (the lower id first on a tie).
std::vector<std::int32_t> top_ids(const Tensor2& rows, std::size_t r, std::size_t k);

}  // namespace attnlab::interp
