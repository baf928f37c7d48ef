// The facade's Model carries a tokenizer through save() and load().
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnlab/facade/model.hpp"
#include "attnlab/io/safetensors.hpp"
#include "attnlab/text/byte_bpe.hpp"

namespace attnlab {
namespace {

std::shared_ptr<const text::Tokenizer> byte_tokenizer() {
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) vocab[text::byte_symbol(static_cast<std::uint8_t>(b))] = b;
    vocab["he"] = 256;
    return text::tokenizer_from_files("byte_bpe", {{"vocab.json", vocab.dump()}, {"merges.txt", "h e\n"}});
}

ModelConfig decoder_config(std::size_t vocab) {
    ModelConfig c;
    c.vocab_size = vocab;
    c.d_model = 8;
    c.num_heads = 2;
    c.num_layers = 1;
    c.ff_dim = 16;
    return c;
}

TEST(ModelTokenizer, SaveAndLoadCarryTheTokenizer) {
    Model model(decoder_config(260), 1);
    EXPECT_EQ(model.tokenizer(), nullptr);
    model.set_tokenizer(byte_tokenizer());
    ASSERT_NE(model.tokenizer(), nullptr);
    const std::vector<std::uint8_t> bytes = model.save();
    const Model again = Model::load(bytes);
    ASSERT_NE(again.tokenizer(), nullptr);
    EXPECT_EQ(again.tokenizer()->kind(), "byte_bpe");
    EXPECT_EQ(again.tokenizer()->encode("hello"), model.tokenizer()->encode("hello"));
    EXPECT_EQ(again.save(), bytes);
    // The tokenizer is one metadata entry; the tensors are the model's alone.
    const io::SafeTensors st = io::SafeTensors::parse(bytes);
    EXPECT_EQ(st.metadata().count(io::kTokenizerMetadataKey), 1u);
    EXPECT_EQ(st.size(), model.parameters().size());
    // A model without one saves as before.
    Model plain(decoder_config(260), 1);
    EXPECT_EQ(io::SafeTensors::parse(plain.save()).metadata().count(io::kTokenizerMetadataKey), 0u);
    EXPECT_EQ(Model::load(plain.save()).tokenizer(), nullptr);
}

TEST(ModelTokenizer, ATokenizerMustFitTheVocabularyAndTheModelMustReadTokens) {
    Model small(decoder_config(200), 1);
    try {
        small.set_tokenizer(byte_tokenizer());
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("has 257 token ids, more than the model's vocab_size of 200"),
                  std::string::npos)
            << e.what();
    }
    ModelConfig image;
    image.architecture = Architecture::vit;
    image.kind = ModelKind::encoder;
    image.image_size = 8;
    image.num_classes = 2;
    image.d_model = 8;
    image.num_heads = 2;
    image.num_layers = 1;
    image.ff_dim = 16;
    Model vit(image, 1);
    EXPECT_THROW(vit.set_tokenizer(byte_tokenizer()), ConfigError);
    vit.set_tokenizer(nullptr);
}

TEST(ModelTokenizer, ACorruptStoredTokenizerIsAnIoError) {
    Model model(decoder_config(260), 1);
    io::SafeTensors st = io::SafeTensors::parse(model.save());
    st.metadata()[io::kTokenizerMetadataKey] = "{\"format\": \"attnlab-tokenizer\", \"version\": 1}";
    try {
        Model::load(st.serialize());
        FAIL();
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("Model::load: the checkpoint's tokenizer is invalid"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace attnlab
