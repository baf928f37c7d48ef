// GPT-2 checkpoints in Hugging Face's formats (attnlab/io/hf_gpt2.hpp): the engine's logits equal
// a plain PyTorch GPT-2's on tiny random models in both layouts, F32, F16 and BF16, tied and
// untied heads (tests/reference/make_gpt2_fixtures.py); every bad file or config is refused by
// name; an export loads in PyTorch's GPT-2 with the engine's logits and back into the engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/facade/model.hpp"
#include "attnlab/io/checkpoint.hpp"
#include "attnlab/io/hf_gpt2.hpp"
#include "attnlab/io/safetensors.hpp"

namespace attnlab {
namespace {

const std::string kDir = std::string(ATTNLAB_FIXTURE_DIR) + "/gpt2/";

std::vector<std::uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << path;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
std::string read_text(const std::string& path) {
    const auto b = read_bytes(path);
    return {b.begin(), b.end()};
}

// Evaluation-mode logits: tokens (B, T) -> (B, T, V).
Tensor3 logits(const DecoderLM& lm, const Index2& tokens) { return lm.forward_observed(tokens, {}); }

// max |a - b| <= rel · max(1, max |ref|): the relative 1e-4.
void expect_close(const Tensor3& got, const Tensor3& ref, double rel) {
    ASSERT_EQ(got.shape(), ref.shape());
    double scale = 1.0, worst = 0.0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) scale = std::max(scale, double(std::abs(ref.data()[i])));
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double d = std::abs(double(got.data()[i]) - double(ref.data()[i]));
        if (d > worst) worst = d, at = i;
    }
    EXPECT_LE(worst, rel * scale) << "max |diff| " << worst << " at flat index " << at << " (scale " << scale << ")";
}

struct Case {
    const char* name;
    bool config;
};

class HfGpt2Reference : public ::testing::TestWithParam<Case> {};

TEST_P(HfGpt2Reference, LogitsEqualPlainPyTorchGpt2) {
    const Case c = GetParam();
    const std::string folder = kDir + c.name + "/";
    const std::string config = c.config ? read_text(folder + "config.json") : std::string();
    std::vector<std::string> notes;
    const DecoderLM gpt = io::load_hf_gpt2(read_bytes(folder + "model.safetensors"), c.config ? &config : nullptr, &notes);
    const io::SafeTensors ref = io::SafeTensors::read_file(folder + "reference.safetensors");
    const Index2 tokens = ref.get_i32<2>("tokens");
    expect_close(logits(gpt, tokens), ref.get_f32<3>("logits"), 1e-4);
    // Without config.json the loader says what it inferred.
    const bool inferred = std::any_of(notes.begin(), notes.end(),
                                      [](const std::string& n) { return n.find("n_embd / 64") != std::string::npos; });
    EXPECT_EQ(inferred, !c.config);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfGpt2Reference,
                         ::testing::Values(Case{"hf_f32", true}, Case{"state_dict_f16_untied", false},
                                           Case{"state_dict_bf16_tied", true}, Case{"vocab_gpt2", true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(HfGpt2, ConfigFollowsTheFileAndConfigJson) {
    const std::string config = read_text(kDir + "state_dict_bf16_tied/config.json");
    const DecoderLM gpt = io::load_hf_gpt2(read_bytes(kDir + "state_dict_bf16_tied/model.safetensors"), &config);
    const ModelConfig& c = gpt.config();
    EXPECT_EQ(c.num_heads, 4u);
    EXPECT_EQ(c.num_layers, 2u);
    EXPECT_EQ(c.max_len, 12u);
    EXPECT_FLOAT_EQ(c.layer_norm_eps, 1e-3f);
    EXPECT_TRUE(c.tie_weights);  // lm_head.weight equals wte.weight
    EXPECT_EQ(c.activation, Activation::gelu_tanh);
    EXPECT_EQ(c.positional, PositionalKind::learned);
    EXPECT_EQ(c.norm, NormPlacement::pre);

    const DecoderLM untied = io::load_hf_gpt2(read_bytes(kDir + "state_dict_f16_untied/model.safetensors"), nullptr);
    EXPECT_FALSE(untied.config().tie_weights);
    EXPECT_EQ(untied.config().num_heads, 2u);  // 128 / 64
}

TEST(HfGpt2, LoaderFedTensorByTensorEqualsLoadingAtOnce) {
    const auto bytes = read_bytes(kDir + "state_dict_f16_untied/model.safetensors");
    const io::SafeTensorsHeader header = io::parse_safetensors_header(bytes.data(), bytes.size(), bytes.size());
    io::Gpt2Loader loader(header, nullptr);
    EXPECT_EQ(loader.layout(), io::Gpt2Layout::state_dict);
    ASSERT_GE(loader.reads().size(), 2u);
    EXPECT_EQ(loader.reads()[0].name, "transformer.wte.weight");  // the tying is decided first
    EXPECT_EQ(loader.reads()[1].name, "lm_head.weight");
    EXPECT_THROW(loader.finish(), IoError);  // nothing fed yet
    EXPECT_THROW(loader.feed(1, bytes.data(), 0), IoError);  // out of order
    for (std::size_t i = 0; i < loader.reads().size(); ++i) {
        const auto& e = loader.reads()[i];
        const std::uint8_t* at = bytes.data() + header.data_offset + e.begin;
        EXPECT_THROW(loader.feed(i, at, static_cast<std::size_t>(e.end - e.begin) - 1), IoError);
        loader.feed(i, at, static_cast<std::size_t>(e.end - e.begin));
    }
    EXPECT_EQ(loader.tied(), false);
    const DecoderLM a = loader.finish();
    const DecoderLM b = io::load_hf_gpt2(bytes, nullptr);
    const Index2 tokens = {{1, 2, 3, 4}};
    EXPECT_EQ(logits(a, tokens), logits(b, tokens));
}

TEST(HfGpt2, MaximumSizeIsRefusedWithTheSizeAndTheLimit) {
    const auto bytes = read_bytes(kDir + "hf_f32/model.safetensors");
    const auto header = io::parse_safetensors_header(bytes.data(), bytes.size(), bytes.size());
    const std::string config = read_text(kDir + "hf_f32/config.json");
    try {
        io::Gpt2Loader loader(header, &config, 1000);
        FAIL() << "a model over the limit loaded";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("parameters"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("this build can hold"), std::string::npos) << e.what();
    }
}

// The refusal of `bytes` (with config) as text; the test fails if it loads.
std::string refusal(const std::vector<std::uint8_t>& bytes, const std::string* config) {
    try {
        io::load_hf_gpt2(bytes, config);
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "loaded";
    return {};
}

// The state_dict_bf16_tied checkpoint, edited.
std::vector<std::uint8_t> edited(const std::function<void(io::SafeTensors&)>& edit) {
    io::SafeTensors st = io::SafeTensors::parse(read_bytes(kDir + "state_dict_bf16_tied/model.safetensors"));
    edit(st);
    return st.serialize();
}

TEST(HfGpt2, BadFilesAreRefusedByName) {
    const auto good = read_bytes(kDir + "hf_f32/model.safetensors");
    // Truncated, and a header that lies about the data's size.
    std::vector<std::uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() - 10));
    EXPECT_NE(refusal(cut, nullptr).find("not a range within the data buffer"), std::string::npos) << refusal(cut, nullptr);
    std::vector<std::uint8_t> junk = good;
    junk[9] = '[';
    EXPECT_FALSE(refusal(junk, nullptr).empty());
    const std::string config = read_text(kDir + "state_dict_bf16_tied/config.json");
    // A missing key, a wrong shape (both shapes named), an unexpected tensor, a non-GPT-2 file.
    const auto no_ln = edited([](io::SafeTensors& st) { st.erase("transformer.h.1.ln_2.bias"); });
    EXPECT_NE(refusal(no_ln, &config).find("missing tensors: transformer.h.1.ln_2.bias"), std::string::npos)
        << refusal(no_ln, &config);
    const auto wide = edited([](io::SafeTensors& st) {
        st.erase("transformer.h.0.attn.c_proj.bias");
        st.put("transformer.h.0.attn.c_proj.bias", Tensor1::from_shape({33}));
    });
    EXPECT_NE(refusal(wide, &config).find("transformer.h.0.attn.c_proj.bias is (33), expected (32)"), std::string::npos)
        << refusal(wide, &config);
    const auto extra = edited([](io::SafeTensors& st) { st.put("transformer.h.0.attn.rotary", Tensor1::from_shape({2})); });
    EXPECT_NE(refusal(extra, &config).find("unexpected tensors: transformer.h.0.attn.rotary"), std::string::npos);
    // A block index far beyond the others: the missing tensors are counted, the first few named.
    const auto far = edited([](io::SafeTensors& st) { st.put("transformer.h.99999.ln_1.weight", Tensor1::from_shape({32})); });
    const std::string heads_only = "{\"n_head\": 4}";
    const std::string far_message = refusal(far, &heads_only);
    EXPECT_NE(far_message.find("missing tensors: transformer.h.2.ln_1.weight"), std::string::npos) << far_message;
    EXPECT_NE(far_message.find("(1199975 in all)"), std::string::npos) << far_message;
    EXPECT_LT(far_message.size(), 1000u);
    io::SafeTensors other;
    other.put("model.embed_tokens.weight", Tensor2::from_shape({4, 4}));
    EXPECT_NE(refusal(other.serialize(), nullptr).find("not a GPT-2 checkpoint"), std::string::npos);
    // No config.json and a width that is not a multiple of 64: n_head cannot be inferred.
    EXPECT_NE(refusal(good, nullptr).find("not a multiple of 64; give config.json"), std::string::npos);
}

TEST(HfGpt2, BadConfigsAreRefusedByName) {
    const auto bytes = read_bytes(kDir + "hf_f32/model.safetensors");
    const nlohmann::json base = nlohmann::json::parse(read_text(kDir + "hf_f32/config.json"));
    const auto with = [&](const char* key, nlohmann::json value) {
        nlohmann::json j = base;
        j[key] = std::move(value);
        const std::string text = j.dump();
        return refusal(bytes, &text);
    };
    EXPECT_NE(with("n_head", 3).find("n_head 3 does not divide n_embd 32"), std::string::npos);
    EXPECT_NE(with("model_type", "llama").find("unsupported model_type \"llama\""), std::string::npos);
    EXPECT_NE(with("activation_function", "swish").find("unsupported activation_function \"swish\""), std::string::npos);
    EXPECT_NE(with("n_embd", 64).find("\"n_embd\" is 64 but wte.weight's width says 32"), std::string::npos);
    EXPECT_NE(with("n_layer", 3).find("\"n_layer\" is 3"), std::string::npos);
    EXPECT_NE(with("scale_attn_by_inverse_layer_idx", true).find("not supported"), std::string::npos);
    const std::string broken = "{\"n_head\": ";
    EXPECT_NE(refusal(bytes, &broken).find("config.json: not valid JSON"), std::string::npos);
}

TEST(HfGpt2, PromptLongerThanPositionsIsRefused) {
    const std::string config = read_text(kDir + "hf_f32/config.json");
    const DecoderLM gpt = io::load_hf_gpt2(read_bytes(kDir + "hf_f32/model.safetensors"), &config);
    Index2 tokens = Index2::from_shape({1, 25});  // n_positions 24
    tokens.fill(1);
    EXPECT_THROW(logits(gpt, tokens), ValueError);
}

// The engine's checkpoint, exported: PyTorch's GPT-2 computes the engine's logits from it
// (make_gpt2_fixtures.py stored them), and the export loads back with the same logits.
TEST(HfGpt2, ExportLoadsInPyTorchGpt2AndBack) {
    Model model = Model::load(read_bytes(kDir + "engine_decoder.safetensors"));
    const DecoderLM& lm = model.decoder();
    const io::SafeTensors ref = io::SafeTensors::read_file(kDir + "export_reference.safetensors");
    const Index2 tokens = ref.get_i32<2>("tokens");
    expect_close(logits(lm, tokens), ref.get_f32<3>("logits"), 1e-4);

    const io::HfGpt2Export out = io::export_hf_gpt2(lm);
    const DecoderLM back = io::load_hf_gpt2(out.safetensors, &out.config_json);
    EXPECT_EQ(back.config().to_metadata(), lm.config().to_metadata());
    EXPECT_EQ(logits(back, tokens), logits(lm, tokens));
}

TEST(HfGpt2, ExportNamesWhatGpt2CannotExpress) {
    ModelConfig c;
    c.vocab_size = 8;
    c.positional = PositionalKind::rope;
    c.bias = false;
    Rng rng(1);
    const DecoderLM lm(c, rng);
    try {
        io::export_hf_gpt2(lm);
        FAIL() << "exported";
    } catch (const ConfigError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("positional rope"), std::string::npos) << m;
        EXPECT_NE(m.find("bias false"), std::string::npos) << m;
    }
    c.positional = PositionalKind::learned;
    c.bias = true;
    EXPECT_TRUE(io::hf_gpt2_blockers(c).empty());
}

}  // namespace
}  // namespace attnlab
