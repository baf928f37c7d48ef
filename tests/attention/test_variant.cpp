#include "attnlab/attention/variant.hpp"

#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/model/config.hpp"

namespace attnlab {
namespace {

TEST(AttentionVariant, NamesRoundTrip) {
    for (AttentionVariant v : {AttentionVariant::full, AttentionVariant::linear, AttentionVariant::block_sparse}) {
        EXPECT_EQ(attention_variant_from_name(attention_variant_name(v)), v);
    }
    EXPECT_EQ(attention_variant_name(AttentionVariant::block_sparse), "block_sparse");
}

TEST(AttentionVariant, UnknownNameListsTheValidOnes) {
    try {
        attention_variant_from_name("performer");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'performer'"), std::string::npos) << what;
        EXPECT_NE(what.find("full, linear, block_sparse"), std::string::npos) << what;
    }
}

TEST(AttentionVariant, ModelConfigRecordsItInTheMetadata) {
    ModelConfig config;
    config.vocab_size = 5;
    config.variant = AttentionVariant::linear;
    const auto meta = config.to_metadata();
    EXPECT_EQ(meta.at("variant"), "linear");
    EXPECT_EQ(ModelConfig::from_metadata(meta).variant, AttentionVariant::linear);
    auto older = meta;
    older.erase("variant");  // checkpoints written before the field load as full attention
    EXPECT_EQ(ModelConfig::from_metadata(older).variant, AttentionVariant::full);
}

TEST(AttentionVariant, AnLstmRefusesAVariant) {
    ModelConfig config;
    config.vocab_size = 5;
    config.architecture = Architecture::lstm;
    config.variant = AttentionVariant::block_sparse;
    EXPECT_THROW(config.validate(), ConfigError);
}

TEST(AttentionVariant, LinearRefusesANormaliserAndPrecisionEmulationSayingWhy) {
    ModelConfig config;
    config.vocab_size = 5;
    config.variant = AttentionVariant::linear;
    config.validate();
    config.normalizer = Normalizer::sigmoid;
    EXPECT_THROW(config.validate(), ConfigError);
    config.normalizer = Normalizer::softmax;
    config.precision = Precision::fp16;
    EXPECT_THROW(config.validate(), ConfigError);

    Rng rng(3);
    MultiHeadAttention mha({/*d_model=*/8, /*num_heads=*/2}, rng);
    const Tensor3 x = Tensor3::from_shape({1, 3, 8});
    AttentionOptions options;
    options.variant = AttentionVariant::linear;
    options.normalizer = Normalizer::relu;
    try {
        mha.forward(x, nullptr, options);
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("normalizer must be softmax, got relu"), std::string::npos) << e.what();
    }
    options.normalizer = Normalizer::softmax;
    options.precision.format = Precision::bf16;
    EXPECT_THROW(mha.forward(x, nullptr, options), ConfigError);
}

}  // namespace
}  // namespace attnlab
