#include "engine_flags.hpp"

#include <string>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/isa.hpp"

namespace attnlab::cli {

void add_engine_flags(Args& args) {
    args.add("threads", "0", "engine threads (0 = all cores)");
    std::string names;
    for (const std::string& isa : kernels::available_isas()) names += (names.empty() ? "" : ", ") + isa;
    args.add("isa", "",
             "kernel instruction set: " + names +
                 " (default: the first, or ATTNLAB_ISA); wasm computes what the WebAssembly page computes, bit for bit");
}

void apply_engine_flags(const Args& args) {
    if (args.get_size("threads") > 0) set_num_threads(args.get_size("threads"));
    const std::string& isa = args.get("isa");
    if (isa.empty()) return;
    try {
        kernels::set_isa(isa);
    } catch (const ConfigError& e) {
        fail<ConfigError>("--isa: ", e.what());
    }
}

}  // namespace attnlab::cli
