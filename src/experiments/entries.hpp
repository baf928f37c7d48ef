// src/experiments/entries.hpp: the registry entry of each experiment, defined in its run file
// next to the run function it calls. Internal to src/experiments/ (registry.cpp lists them).
#pragma once

#include "attnlab/experiments/registry.hpp"

namespace attnlab::experiments::detail {

Experiment scaling_entry();
Experiment heads_entry();
Experiment cost_entry();
Experiment lstm_entry();
Experiment positional_entry();
Experiment permutation_entry();
Experiment mask_entry();
Experiment norm_entry();
Experiment kv_heads_entry();
Experiment importance_entry();
Experiment series_entry();
Experiment fp16_entry();
Experiment variants_entry();
Experiment normalizer_entry();
Experiment tie_qk_entry();
Experiment heads_real_entry();
Experiment induction_entry();

}  // namespace attnlab::experiments::detail
