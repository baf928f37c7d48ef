// src/cli/engine_flags.hpp: the flags of every command that computes — how many threads and which
// kernels — declared once and applied once, before the command computes anything.
//
//   add_engine_flags(args);        // --threads N, --isa NAME
//   if (!args.parse(argc, argv, 2)) return 0;
//   apply_engine_flags(args);      // set_num_threads, kernels::set_isa
#pragma once

#include "args.hpp"

namespace attnlab::cli {

// --threads N (0 = all cores) and --isa NAME (one of kernels::available_isas(); empty = the best
// the CPU has, or ATTNLAB_ISA). --isa wasm runs the WebAssembly build's kernels, so a run repeats
// the page's numbers bit for bit.
void add_engine_flags(Args& args);
// Applies the flags add_engine_flags declared; ConfigError naming the valid instruction sets
// for an unknown --isa.
void apply_engine_flags(const Args& args);

}  // namespace attnlab::cli
