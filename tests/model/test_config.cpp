#include "attnlab/model/config.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"

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

TEST(ModelConfig, LayerNormEpsReachesEveryLayerNormAndMustBePositive) {
    ModelConfig c;
    c.vocab_size = 5;
    c.layer_norm_eps = 1e-3f;
    c.activation = Activation::gelu_tanh;
    Rng rng(1);
    const DecoderLM model(c, rng);
    for (const TransformerBlock& block : model.trunk.blocks) {
        EXPECT_EQ(block.ln1.eps(), 1e-3f);
        EXPECT_EQ(block.ln2.eps(), 1e-3f);
        EXPECT_EQ(block.ffn.activation(), Activation::gelu_tanh);
    }
    EXPECT_EQ(model.trunk.ln_f.eps(), 1e-3f);
    const auto meta = c.to_metadata();
    EXPECT_EQ(meta.at("layer_norm_eps"), "0.00100000005");
    EXPECT_EQ(meta.at("activation"), "gelu_tanh");
    EXPECT_EQ(ModelConfig::from_metadata(meta).layer_norm_eps, 1e-3f);
    for (float bad : {0.0f, -1e-5f, INFINITY, NAN}) {
        c.layer_norm_eps = bad;
        try {
            c.validate();
            FAIL() << bad;
        } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find("layer_norm_eps must be a positive finite number"), std::string::npos)
                << e.what();
        }
    }
    // A checkpoint written before the field had it at torch.nn.LayerNorm's default.
    auto older = ModelConfig{}.to_metadata();
    older["vocab_size"] = "5";
    older.erase("layer_norm_eps");
    EXPECT_EQ(ModelConfig::from_metadata(older).layer_norm_eps, 1e-5f);
}

// The field table drives the metadata: one key per row, in any config, named as the row.
TEST(ModelConfig, MetadataHasOneKeyPerFieldOfTheTable) {
    ModelConfig c;
    c.vocab_size = 5;
    const auto meta = c.to_metadata();
    std::set<std::string> names;
    for (const ModelConfigField& field : kModelConfigFields) {
        names.insert(field.name);
        EXPECT_EQ(meta.count(field.name), 1u) << field.name;
        EXPECT_NE(std::string(field.doc), "") << field.name;
    }
    EXPECT_EQ(names.size(), std::size(kModelConfigFields));  // no name twice
    EXPECT_EQ(meta.size(), names.size());
    std::size_t visited = 0;
    c.for_each_field([&](const ModelConfigField& field, const auto&) {
        EXPECT_EQ(std::string(field.name), kModelConfigFields[visited].name);
        ++visited;
    });
    EXPECT_EQ(visited, names.size());
}

// Keys of kOptionalKey fields may be missing (checkpoints written before them) and take the default.
TEST(ModelConfig, OptionalKeysMayBeMissing) {
    ModelConfig c;
    c.vocab_size = 5;
    auto meta = c.to_metadata();
    for (const ModelConfigField& field : kModelConfigFields) {
        if (field.flags & kOptionalKey) meta.erase(field.name);
    }
    EXPECT_TRUE(ModelConfig::from_metadata(meta) == c);
    meta.erase("d_model");
    EXPECT_NE(message_of(meta).find("missing keys: d_model"), std::string::npos) << message_of(meta);
}

// parameter_count() equals the sum of the parameters a model of the config holds.
TEST(ModelConfig, ParameterCountEqualsTheModelsParameters) {
    auto count = [](auto& model) {
        std::uint64_t n = 0;
        for (const ParameterView& p : model.parameters()) n += p.size();
        return n;
    };
    ModelConfig decoder;
    decoder.vocab_size = 11;
    decoder.d_model = 16;
    decoder.num_heads = 4;
    decoder.ff_dim = 24;
    for (PositionalKind positional : {PositionalKind::learned, PositionalKind::rope}) {
        for (NormPlacement norm : {NormPlacement::pre, NormPlacement::post}) {
            for (bool tie : {false, true}) {
                for (std::size_t kv : {0, 2, 1}) {
                    for (bool bias : {true, false}) {
                        ModelConfig c = decoder;
                        c.positional = positional;
                        c.norm = norm;
                        c.tie_weights = tie;
                        c.num_kv_heads = kv;
                        c.bias = bias;
                        Rng rng(1);
                        DecoderLM model(c, rng);
                        EXPECT_EQ(c.parameter_count(), count(model)) << c.to_metadata().size();
                    }
                }
            }
        }
    }
    ModelConfig encoder = unusual_config();
    for (Pooling pooling : {Pooling::mean, Pooling::cls}) {
        for (PositionalKind positional : {PositionalKind::learned, PositionalKind::sinusoidal}) {
            for (bool bias : {true, false}) {
                ModelConfig c = encoder;
                c.pooling = pooling;
                c.positional = positional;
                c.bias = bias;
                c.norm = NormPlacement::pre;
                Rng rng(2);
                EncoderClassifier model(c, rng);
                EXPECT_EQ(c.parameter_count(), count(model));
            }
        }
    }
}

TEST(ModelConfig, ParameterCountBeyond64BitsIsAConfigError) {
    ModelConfig c;
    c.vocab_size = std::size_t{1} << 62;
    c.d_model = std::size_t{1} << 40;
    c.num_heads = 1;
    EXPECT_THROW(c.parameter_count(), ConfigError);
}

}  // namespace
}  // namespace attnlab
