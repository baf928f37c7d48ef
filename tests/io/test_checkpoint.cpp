#include "attnlab/io/checkpoint.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/facade/any_model.hpp"
#include "attnlab/io/safetensors.hpp"

namespace attnlab {
namespace {

using Bytes = std::vector<std::uint8_t>;

ModelConfig small_decoder() {
    ModelConfig c;
    c.kind = ModelKind::decoder;
    c.vocab_size = 11;
    c.max_len = 16;
    c.d_model = 8;
    c.num_heads = 2;
    c.num_layers = 2;
    c.ff_dim = 16;
    c.positional = PositionalKind::learned;
    return c;
}

ModelConfig small_encoder() {
    ModelConfig c = small_decoder();
    c.kind = ModelKind::encoder;
    c.num_classes = 3;
    c.pooling = Pooling::cls;
    c.norm = NormPlacement::post;
    c.positional = PositionalKind::rope;
    return c;
}

template <class M>
std::vector<std::vector<float>> snapshot(M& model) {
    std::vector<std::vector<float>> out;
    for (const auto& p : model.parameters()) out.emplace_back(p.data, p.data + p.size());
    return out;
}

template <class M>
bool bit_equal(M& model, const std::vector<std::vector<float>>& snap) {
    const auto params = model.parameters();
    if (params.size() != snap.size()) return false;
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (std::memcmp(params[i].data, snap[i].data(), snap[i].size() * sizeof(float)) != 0) return false;
    }
    return true;
}

// load_into(model, bytes) must throw IoError mentioning every word and leave the model as it was.
void expect_refused(DecoderLM& model, const Bytes& bytes, const std::vector<std::string>& words) {
    const auto before = snapshot(model);
    try {
        io::load_into(model, bytes);
        ADD_FAILURE() << "load_into accepted a checkpoint that should fail";
    } catch (const IoError& e) {
        if (std::getenv("ATTNLAB_SHOW_ERRORS")) std::cout << e.what() << "\n";
        for (const auto& w : words) {
            EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << "'" << e.what() << "' lacks '" << w << "'";
        }
    }
    EXPECT_TRUE(bit_equal(model, before)) << "the model changed although loading failed";
}

// A checkpoint of `model` passed through SafeTensors so a test can edit it.
Bytes edited(const DecoderLM& model, const std::function<void(io::SafeTensors&)>& edit) {
    io::SafeTensors st = io::SafeTensors::parse(io::save_checkpoint(model));
    edit(st);
    return st.serialize();
}

TEST(Checkpoint, DecoderRoundTripIsBitExact) {
    for (bool tie : {false, true}) {
        ModelConfig config = small_decoder();
        config.tie_weights = tie;
        config.attention_scale = 0.3f;
        Rng rng(1);
        DecoderLM model(config, rng);
        const Bytes bytes = io::save_checkpoint(model);
        DecoderLM copy = io::load_decoder(bytes);
        EXPECT_TRUE(copy.config() == model.config());
        EXPECT_TRUE(bit_equal(copy, snapshot(model)));
        EXPECT_EQ(io::save_checkpoint(copy), bytes);  // the image itself is reproduced byte for byte
        model.eval();
        copy.eval();
        const Index2 tokens = {{1, 2, 3, 4}};
        EXPECT_EQ(model.forward(tokens), copy.forward(tokens));
    }
}

TEST(Checkpoint, EncoderRoundTripThroughAFile) {
    Rng rng(1);
    EncoderClassifier model(small_encoder(), rng);
    const std::string path = ::testing::TempDir() + "attnlab_checkpoint_test.safetensors";
    io::save_checkpoint_file(model, path);
    AnyModel loaded = load_checkpoint_file(path);
    ASSERT_TRUE(std::holds_alternative<EncoderClassifier>(loaded));
    auto& copy = std::get<EncoderClassifier>(loaded);
    EXPECT_TRUE(bit_equal(copy, snapshot(model)));
    EncoderClassifier other(small_encoder(), rng);  // different weights, same config
    io::load_into_file(other, path);
    EXPECT_TRUE(bit_equal(other, snapshot(model)));
    std::remove(path.c_str());
}

TEST(Checkpoint, HeaderCarriesStateDictNamesAndTheConfig) {
    Rng rng(1);
    DecoderLM model(small_decoder(), rng);
    const io::SafeTensors st = io::SafeTensors::parse(io::save_checkpoint(model));
    EXPECT_EQ(st.metadata().at("format"), "attnlab");
    EXPECT_EQ(st.metadata().at("version"), "1");
    EXPECT_EQ(st.metadata().at("d_model"), "8");
    EXPECT_EQ(st.metadata().at("positional"), "learned");
    EXPECT_TRUE(st.contains("blocks.1.attn.q_proj.weight"));
    EXPECT_TRUE(st.contains("pos_emb.weight"));
    EXPECT_EQ(st.shape("head.weight"), (std::vector<std::size_t>{11, 8}));
    EXPECT_EQ(st.dtype("ln_f.weight"), io::Dtype::F32);
    EXPECT_EQ(st.size(), model.parameters().size());
    EXPECT_EQ(io::checkpoint_config(io::save_checkpoint(model)), model.config());
}

TEST(Checkpoint, TruncatedOrCorruptImagesAreRefused) {
    Rng rng(1);
    DecoderLM source(small_decoder(), rng);
    DecoderLM target(small_decoder(), rng);
    const Bytes good = io::save_checkpoint(source);

    Bytes truncated(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
    expect_refused(target, truncated, {"not a valid safetensors image"});
    expect_refused(target, Bytes(good.begin(), good.begin() + 5), {"not a valid safetensors image"});
    Bytes bad_length = good;
    bad_length[3] = 0x7f;  // header length far beyond the file
    expect_refused(target, bad_length, {"not a valid safetensors image"});
    Bytes bad_json = good;
    bad_json[8] = '[';  // the header must be a JSON object
    expect_refused(target, bad_json, {"not a valid safetensors image"});
    Bytes trailing = good;
    trailing.push_back(0);  // a byte the offsets do not cover
    expect_refused(target, trailing, {"not a valid safetensors image"});
}

TEST(Checkpoint, ForeignOrMismatchedConfigsAreRefused) {
    Rng rng(1);
    DecoderLM target(small_decoder(), rng);

    ModelConfig wider = small_decoder();
    wider.d_model = 16;
    wider.ff_dim = 32;
    expect_refused(target, io::save_checkpoint(DecoderLM(wider, rng)),
                   {"config mismatch", "d_model is 16 in the file but 8 in the model", "ff_dim"});
    ModelConfig unscaled = small_decoder();
    unscaled.scale_attention = false;  // same tensors, different function
    expect_refused(target, io::save_checkpoint(DecoderLM(unscaled, rng)), {"scale_attention"});
    expect_refused(target, io::save_checkpoint(EncoderClassifier(small_encoder(), rng)), {"kind is encoder"});

    DecoderLM source(small_decoder(), rng);
    expect_refused(target, edited(source, [](io::SafeTensors& st) { st.metadata()["format"] = "pytorch"; }),
                   {"\"format\" must be \"attnlab\"", "pytorch"});
    expect_refused(target, edited(source, [](io::SafeTensors& st) { st.metadata()["version"] = "2"; }),
                   {"\"version\" must be \"1\""});
    expect_refused(target, edited(source, [](io::SafeTensors& st) { st.metadata().erase("num_heads"); }),
                   {"missing keys: num_heads"});
    expect_refused(target, edited(source, [](io::SafeTensors& st) { st.metadata()["num_heads"] = "3"; }),
                   {"stored model config is invalid", "num_heads (3)"});

    // Training-only fields may differ.
    ModelConfig with_dropout = small_decoder();
    with_dropout.dropout = 0.1f;
    with_dropout.gradient_checkpointing = true;
    DecoderLM training(with_dropout, rng);
    EXPECT_NO_THROW(io::load_into(training, io::save_checkpoint(source)));
    EXPECT_TRUE(bit_equal(training, snapshot(source)));
}

TEST(Checkpoint, MissingExtraAndMisshapedTensorsAreRefused) {
    Rng rng(1);
    DecoderLM source(small_decoder(), rng);
    DecoderLM target(small_decoder(), rng);
    expect_refused(target, edited(source, [](io::SafeTensors& st) { st.erase("blocks.1.ffn.fc2.bias"); }),
                   {"missing tensors: blocks.1.ffn.fc2.bias"});
    expect_refused(target, edited(source, [](io::SafeTensors& st) { st.put("lm_head.weight", Tensor2({{1.0f}})); }),
                   {"unexpected tensors: lm_head.weight"});
    expect_refused(target,
                   edited(source, [](io::SafeTensors& st) { st.put("head.weight", Tensor2::from_shape({8, 11})); }),
                   {"mismatched tensors: head.weight is (8, 11), expected (11, 8)"});
    expect_refused(target, edited(source, [](io::SafeTensors& st) {
                       st.put("ln_f.bias", Array<std::int32_t, 1>::from_shape({8}));
                   }),
                   {"ln_f.bias has dtype I32, expected F32"});
}

TEST(Checkpoint, LoadingTheOtherKindIsRefused) {
    Rng rng(1);
    const Bytes decoder = io::save_checkpoint(DecoderLM(small_decoder(), rng));
    EXPECT_THROW(io::load_encoder(decoder), IoError);
    EXPECT_TRUE(std::holds_alternative<DecoderLM>(load_checkpoint(decoder)));
    EXPECT_THROW(io::load_decoder(io::save_checkpoint(EncoderClassifier(small_encoder(), rng))), IoError);
    EXPECT_THROW(load_checkpoint_file("/nonexistent/attnlab.safetensors"), IoError);
}

TEST(Checkpoint, ConfigsLargerThanTheStoredTensorsAreRefusedBeforeAllocating) {
    // Edited digits in the metadata ask for a model of about 10^15 floats (4 PB): refused with the
    // numbers before any model is built, by every loader that builds one.
    Rng rng(1);
    DecoderLM source(small_decoder(), rng);
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"d_model", "40000000"}, {"vocab_size", "100000000000000"}, {"max_len", "100000000000000"},
             {"num_layers", "4000000000000"}}) {
        const Bytes bytes = edited(source, [&, key = key, value = value](io::SafeTensors& st) {
            st.metadata()[key] = value;
            if (key == "d_model") st.metadata()["ff_dim"] = value;
        });
        for (const auto& load : std::vector<std::function<void()>>{[&] { load_checkpoint(bytes); },
                                                                   [&] { io::load_decoder(bytes); }}) {
            try {
                load();
                ADD_FAILURE() << key << " = " << value << " was accepted";
            } catch (const IoError& e) {
                EXPECT_NE(std::string(e.what()).find("but the file holds only"), std::string::npos)
                    << key << ": " << e.what();
            }
        }
    }
}

}  // namespace
}  // namespace attnlab
