// libFuzzer target: attnlab::io::SafeTensors::parse on arbitrary bytes.
//
// Holds for every input: parse either throws attnlab::IoError or returns a SafeTensors whose
// every tensor can be viewed and read back at its rank, and whose serialize() parses again to
// the same image (serialization is canonical). Any other exception, a sanitizer report or a
// mismatch is a crash. Seeds: tests/fuzz/corpus/safetensors/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnlab/io/safetensors.hpp"

namespace {

using attnlab::io::Dtype;
using attnlab::io::SafeTensors;

// Reads tensor `name` through the getter of its dtype at its own rank (the fuzzer keeps ranks small);
// F16 and BF16 through convert_to_f32.
void read_back(const SafeTensors& st, const std::string& name) {
    const std::size_t rank = st.shape(name).size();
    const Dtype dtype = st.dtype(name);
    const bool is_float = dtype == Dtype::F32;
    const bool is_int = dtype == Dtype::I32 || dtype == Dtype::I64;
    if (dtype == Dtype::F16 || dtype == Dtype::BF16) {
        // The half formats have no typed getter: they are read by widening to float32.
        const auto view = st.view(name);
        std::vector<float> widened(view.nbytes / 2);
        attnlab::io::convert_to_f32(dtype, view.data, widened.size(), widened.data());
        return;
    }
    try {
        switch (rank) {
            case 1:
                if (is_float) st.get_f32<1>(name);
                else if (is_int) st.get_i32<1>(name);
                else st.get_u8<1>(name);
                break;
            case 2:
                if (is_float) st.get_f32<2>(name);
                else if (is_int) st.get_i32<2>(name);
                else st.get_u8<2>(name);
                break;
            default: break;
        }
    } catch (const attnlab::IoError&) {
        // I64 values outside int32 are refused by get_i32: the one expected failure.
        if (dtype != Dtype::I64) throw;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    SafeTensors st;
    try {
        st = SafeTensors::parse(data, size);
    } catch (const attnlab::IoError&) {
        return 0;
    }
    for (const std::string& name : st.names()) {
        const auto view = st.view(name);
        std::size_t numel = 1;
        for (std::size_t extent : view.shape) numel *= extent;
        if (numel * attnlab::io::dtype_size(view.dtype) != view.nbytes) std::abort();
        read_back(st, name);
    }
    const std::vector<std::uint8_t> image = st.serialize();
    if (SafeTensors::parse(image).serialize() != image) std::abort();
    return 0;
}
