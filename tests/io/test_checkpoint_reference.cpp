// A checkpoint our CLI wrote, and the logits the engine computes from it, committed for the
// PyTorch side: tests/reference/make_fixtures.py (check_attnlab_checkpoint) reads
// attnlab_decoder_checkpoint.safetensors with plain json/struct, builds its TinyGpt from the
// metadata config, load_state_dict(strict=True), and must reproduce attnlab_decoder_logits.
//
// This test keeps that pair honest: the engine, loading the committed checkpoint, must still
// produce the committed logits (to 1e-6: the same code, only thread scheduling may differ).
// With ATTNLAB_WRITE_FIXTURES=1 it (re)writes attnlab_decoder_logits.safetensors instead.
// How the checkpoint itself was made is in the make_fixtures.py header.
#include <cstdlib>
#include <iostream>
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "attnlab/facade/any_model.hpp"
#include "attnlab/io/checkpoint.hpp"
#include "attnlab/io/safetensors.hpp"
#include "support/fixtures.hpp"

namespace attnlab {
namespace {

const std::string kDir = ATTNLAB_FIXTURE_DIR;

// One copy-task example "3 1 4 1 SEP 3 1 4" (tokens of the 9-token example without its last), so
// the logits are those of a real prompt; SEP is the last id of the vocabulary.
Index2 sequence(const ModelConfig& config) {
    const auto sep = static_cast<std::int32_t>(config.vocab_size - 1);
    Index2 tokens = {{3, 1, 4, 1, sep, 3, 1, 4}};  // (1, T)
    return tokens;
}

TEST(CheckpointReference, EngineLogitsOfTheCommittedCliCheckpointAreTheCommittedOnes) {
    AnyModel any = load_checkpoint_file(kDir + "/attnlab_decoder_checkpoint.safetensors");
    ASSERT_TRUE(std::holds_alternative<DecoderLM>(any));
    DecoderLM& gpt = std::get<DecoderLM>(any);
    gpt.eval();
    const Index2 tokens = sequence(gpt.config());
    const Tensor3 logits = gpt.forward(tokens);  // (1, T, V)

    const char* write = std::getenv("ATTNLAB_WRITE_FIXTURES");
    if (write && std::string(write) == "1") {
        io::SafeTensors out;
        out.put("tokens", tokens);
        out.put("logits", logits);
        out.metadata()["description"] =
            "attnlab DecoderLM logits (1, T, V) in evaluation mode for tokens (1, T), from "
            "attnlab_decoder_checkpoint.safetensors; written by tests/io/test_checkpoint_reference.cpp "
            "with ATTNLAB_WRITE_FIXTURES=1";
        out.write_file(kDir + "/attnlab_decoder_logits.safetensors");
        std::cout << "wrote " << kDir << "/attnlab_decoder_logits.safetensors\n";
        return;
    }
    const test::Fixture fx = test::load_fixture("attnlab_decoder_logits");
    ASSERT_TRUE(xt::all(xt::equal(fx.ints<2>("tokens"), tokens)));
    // 1e-5: the committed logits (up to ~7 in magnitude) were computed by one kernel ISA; FMA and
    // non-FMA kernels legitimately differ by a few float32 ulps (1.9e-6 measured).
    EXPECT_TRUE(test::all_close(logits, fx.tensor<3>("logits"), 1e-5));
}

}  // namespace
}  // namespace attnlab
