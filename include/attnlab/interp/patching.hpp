// attnlab/interp/patching.hpp: activation patching, how much of a behaviour one activation
// carries (Meng et al. 2022; Wang et al. 2022; TransformerLens' patching module).
//
// What it is for: a clean prompt and a corrupted one of the same length that the model should
// complete differently (clean "... Mary and John, John gave it to" -> " Mary"; corrupted with
// the names swapped), and a pair of tokens (answer, wrong). The metric is the logit difference
// at the last position, diff = logit[answer] - logit[wrong]. One activation of the clean run is
// copied into the corrupted run (interp/run.hpp), and the share of the difference it restores,
//   restored = (diff_patched - diff_corrupted) / (diff_clean - diff_corrupted),
// is 0 when the activation carries nothing of it and 1 when it carries all of it. Two kinds:
//   heads      head h of layer l: its output before W_O at every position (TransformerLens'
//              attention-head-output patching over all positions, hook_z): an (L, H) table
//   residual   the residual stream entering block l at one position (get_act_patch_resid_pre):
//              an (L, T) table
// Not for: prompts of different lengths (their positions do not correspond: refused).
//
//   attnlab::interp::Patching p = attnlab::interp::patch(gpt, clean, corrupted, answer, wrong);
//   float share = p.heads(1, 0);   // head 1.0's restored share
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/core/error.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace attnlab::interp {

// Why a patching call was refused: the prompts' lengths differ, or the clean and corrupted runs
// give one logit difference (no share can be restored). A ValueError.
class PatchingError : public ValueError {
public:
    using ValueError::ValueError;
};

struct Patching {
    double clean_diff = 0.0;      // logit[answer] - logit[wrong] at the last position, clean run
    double corrupted_diff = 0.0;  // the same, corrupted run
    Tensor2 heads;                // (L, H) restored share of each head's output
    Tensor2 residual;             // (L, T) restored share of the residual entering block l at position t
};

// Every head and every (layer, position) patched from clean into corrupted, one at a time.
// PatchingError for prompts of different lengths (naming both) or equal differences; ValueError
// for a token the model cannot read or answer / wrong outside the vocabulary (naming it).
Patching patch(const DecoderLM& model, const std::vector<std::int32_t>& clean, const std::vector<std::int32_t>& corrupted,
               std::int32_t answer, std::int32_t wrong);

}  // namespace attnlab::interp
