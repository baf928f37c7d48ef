// attnlab/model/token/split_step.hpp: what a model keeps for a training step split into slices.
//
// What it is for: EncoderClassifier and DecoderLM run loss_and_backward on more than 512 rows as
// slices of whole sequences (src/model/token/micro_batches.hpp says why and how many). A lane runs on one
// thread, through its slices in order, with one cache for all of them (their activations stay
// in the core's cache) and its own gradients (lane 0 accumulates into the model's; the others
// are zeroed each step and added in lane order). Kept from step to step, so a training loop
// allocates nothing. Not for: use outside the models (they fill and run it).
#pragma once

#include <vector>

namespace attnlab {

// Slice: one slice's inputs, dropout generator and loss; Cache, Grad: the model's.
template <class Slice, class Cache, class Grad>
struct SplitStep {
    struct Lane {
        Cache cache;
        Grad grads;
    };
    std::vector<Slice> slices;
    std::vector<Lane> lanes;
};

}  // namespace attnlab
