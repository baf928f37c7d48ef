#include "attnlab/model/config.hpp"

#include <gtest/gtest.h>

namespace attnlab {
namespace {

ModelConfig unusual_config() {
    ModelConfig c;
    c.kind = ModelKind::encoder;
    c.vocab_size = 7;
    c.max_len = 33;
    c.d_model = 12;
    c.num_heads = 6;
    c.num_kv_heads = 2;
    c.num_layers = 3;
    c.ff_dim = 20;
    c.activation = Activation::relu;
    c.positional = PositionalKind::rope;
    c.norm = NormPlacement::post;
    c.scale_attention = false;
    c.attention_scale = 0.1f;
    c.dropout = 0.1f;
    c.pooling = Pooling::cls;
    c.num_classes = 3;
    c.bias = false;
    c.gradient_checkpointing = true;
    return c;
}

std::string message_of(const std::map<std::string, std::string>& meta) {
    try {
        ModelConfig::from_metadata(meta);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

TEST(ModelConfig, MetadataRoundTripsEveryField) {
    const ModelConfig c = unusual_config();
    c.validate();
    const auto meta = c.to_metadata();
    EXPECT_EQ(meta.at("positional"), "rope");
    EXPECT_EQ(meta.at("attention_scale"), "0.100000001");  // 9 digits: float32 round-trips exactly
    const ModelConfig back = ModelConfig::from_metadata(meta);
    EXPECT_EQ(back.to_metadata(), meta);
    EXPECT_EQ(*back.attention_scale, 0.1f);
    EXPECT_EQ(back.dropout, 0.1f);
    EXPECT_TRUE(back == c);
}

TEST(ModelConfig, UnsetAttentionScaleIsNone) {
    ModelConfig c;
    c.vocab_size = 5;
    EXPECT_EQ(c.to_metadata().at("attention_scale"), "none");
    EXPECT_FALSE(ModelConfig::from_metadata(c.to_metadata()).attention_scale.has_value());
}

TEST(ModelConfig, UnknownAndMissingKeysAreNamed) {
    ModelConfig c;
    c.vocab_size = 5;
    auto meta = c.to_metadata();
    meta["n_embd"] = "32";
    EXPECT_NE(message_of(meta).find("unknown keys: n_embd"), std::string::npos) << message_of(meta);
    meta.erase("n_embd");
    meta.erase("d_model");
    meta.erase("norm");
    EXPECT_NE(message_of(meta).find("missing keys: d_model, norm"), std::string::npos) << message_of(meta);
}

TEST(ModelConfig, BadValuesAreNamed) {
    ModelConfig c;
    c.vocab_size = 5;
    auto meta = c.to_metadata();
    meta["d_model"] = "-3";
    EXPECT_NE(message_of(meta).find("d_model must be a non-negative integer, got '-3'"), std::string::npos);
    meta = c.to_metadata();
    meta["bias"] = "yes";
    EXPECT_NE(message_of(meta).find("bias must be 'true' or 'false'"), std::string::npos);
    meta = c.to_metadata();
    meta["positional"] = "alibi";
    EXPECT_NE(message_of(meta).find("alibi"), std::string::npos);
}

TEST(ModelConfig, ValidateNamesTheNumbers) {
    ModelConfig c;
    c.vocab_size = 5;
    c.d_model = 30;
    c.num_heads = 4;
    try {
        c.validate();
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("d_model (30) must be divisible by num_heads (4)"), std::string::npos)
            << e.what();
    }
    c.d_model = 32;
    c.num_kv_heads = 3;
    EXPECT_THROW(c.validate(), ConfigError);
    c.num_kv_heads = 0;
    c.dropout = 1.0f;
    EXPECT_THROW(c.validate(), ConfigError);
    c.dropout = 0.0f;
    c.d_model = 12;
    c.num_heads = 4;  // head dim 3
    c.positional = PositionalKind::rope;
    EXPECT_THROW(c.validate(), ConfigError);
    c.positional = PositionalKind::none;
    c.kind = ModelKind::encoder;
    EXPECT_THROW(c.validate(), ConfigError);  // num_classes 0
    c.num_classes = 2;
    c.validate();
    c.tie_weights = true;
    EXPECT_THROW(c.validate(), ConfigError);
}

}  // namespace
}  // namespace attnlab
