// attnlab/interp/ablation.hpp: switching heads off, and what that changes.
//
// What it is for: the first question about a head (the article's §9.2: "a weight is not an
// importance"): does the model need it? A set of heads is ablated in one evaluation forward
// (interp/run.hpp) by replacing their output before W_O:
//   zero   by 0 at every position (W_O's bias still flows)
//   mean   by the head's output averaged over the positions of the same text, at every position
//          (TransformerLens' mean ablation averages over a reference batch; here the one text)
// and the run is compared with the clean one:
//   loss      the mean cross-entropy (nats) of predicting token i+1 from positions i = 0..T-2
//   kl_last   KL(p_clean || p_ablated) of the next-token distributions at the last position (nats)
//   kl_mean   the same averaged over every position
// Not for: heads of an encoder; training with heads off.
//
//   attnlab::interp::Ablation a = attnlab::interp::ablate(gpt, tokens, {{1, 0}}, attnlab::AblationMethod::mean);
//   std::printf("loss %+.3f nats, KL %.3f\n", a.loss_ablated - a.loss_clean, a.kl_mean);
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "attnlab/core/choice.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/token/decoder_lm.hpp"

namespace attnlab {

#define ATTNLAB_ABLATION_METHOD_VALUES(X)                                    \
    X(zero, "the head's output before W_O replaced by 0")                   \
    X(mean, "the head's output replaced by its mean over the text's positions")
ATTNLAB_CHOICE(AblationMethod, "ablation method", ATTNLAB_ABLATION_METHOD_VALUES,
               "what an ablated head's output is replaced by")

namespace interp {

using HeadId = std::pair<std::size_t, std::size_t>;  // (layer, head)

struct Ablation {
    double loss_clean = 0.0;    // nats per predicted token
    double loss_ablated = 0.0;
    double kl_last = 0.0;       // KL(clean || ablated) at the last position, nats
    double kl_mean = 0.0;       // over every position
    Tensor1 probs_clean;        // (V) next-token distribution at the last position
    Tensor1 probs_ablated;      // (V)
};

// heads ablated together on tokens (T >= 2). ValueError for a head out of range (naming it), a
// head named twice, an empty set, or fewer than 2 tokens (no next token to score).
Ablation ablate(const DecoderLM& model, const std::vector<std::int32_t>& tokens, const std::vector<HeadId>& heads,
                AblationMethod method);

// Each head of the model ablated alone: L·H results, layer by layer. The clean run is shared.
std::vector<Ablation> ablate_each(const DecoderLM& model, const std::vector<std::int32_t>& tokens, AblationMethod method);

// Mean cross-entropy of tokens[i + 1] under logits row i, i = 0..T-2: logits (T, V). Nats.
double next_token_loss(const Tensor2& logits, const std::vector<std::int32_t>& tokens);
// softmax of one row of logits (T, V): (V), in double inside.
Tensor1 softmax_row(const Tensor2& logits, std::size_t row);
// KL(softmax(a_row) || softmax(b_row)) in nats.
double kl_divergence(const Tensor2& a, const Tensor2& b, std::size_t row);

}  // namespace interp
}  // namespace attnlab
