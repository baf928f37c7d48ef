// AnyModel (facade/any_model.hpp): each config's kind and architecture make the model class it
// names, and a checkpoint loads back as the class that saved it.
#include "attnlab/facade/any_model.hpp"

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/io/checkpoint.hpp"

namespace attnlab {
namespace {

ModelConfig tiny(ModelKind kind, Architecture architecture) {
    ModelConfig c;
    c.kind = kind;
    c.architecture = architecture;
    c.vocab_size = 9;
    c.max_len = 8;
    c.d_model = 8;
    c.num_heads = 2;
    c.ff_dim = 16;
    c.num_layers = 1;
    c.num_classes = 2;
    if (architecture == Architecture::vit || architecture == Architecture::swin ||
        architecture == Architecture::crossmodal) {
        c.image_size = 8;
        c.patch_size = architecture == Architecture::swin ? 1 : 4;
        c.swin_window = 4;
    }
    if (kind == ModelKind::forecaster) {
        c.num_features = 2;
        c.horizon = 3;
        c.time_periods = {4, 6};
    }
    return c;
}

// The config, the class make_model must make of it (its variant index), and a name for messages.
struct Case {
    ModelConfig config;
    std::size_t index;
    const char* name;
};

std::vector<Case> every_class() {
    return {{tiny(ModelKind::encoder, Architecture::transformer), 0, "encoder classifier"},
            {tiny(ModelKind::decoder, Architecture::transformer), 1, "decoder LM"},
            {tiny(ModelKind::encoder, Architecture::lstm), 2, "lstm classifier"},
            {tiny(ModelKind::decoder, Architecture::lstm), 3, "lstm LM"},
            {tiny(ModelKind::encoder, Architecture::vit), 4, "vit"},
            {tiny(ModelKind::encoder, Architecture::swin), 4, "swin"},
            {tiny(ModelKind::encoder, Architecture::crossmodal), 5, "crossmodal"},
            {tiny(ModelKind::forecaster, Architecture::transformer), 6, "transformer forecaster"},
            {tiny(ModelKind::forecaster, Architecture::lstm), 6, "lstm forecaster"}};
}

TEST(AnyModel, EachConfigMakesTheClassItNamesAndItsCheckpointLoadsAsThatClass) {
    static_assert(std::is_same_v<std::variant_alternative_t<4, AnyModel>, ImageClassifier>);
    static_assert(std::is_same_v<std::variant_alternative_t<6, AnyModel>, Forecaster>);
    for (const Case& c : every_class()) {
        Rng rng(1);
        const AnyModel made = make_model(c.config, rng);
        EXPECT_EQ(made.index(), c.index) << c.name;
        const std::vector<std::uint8_t> bytes = std::visit([](const auto& m) { return io::save_checkpoint(m); }, made);
        const AnyModel loaded = load_checkpoint(bytes);
        EXPECT_EQ(loaded.index(), c.index) << c.name;
        const std::vector<std::uint8_t> again = std::visit([](const auto& m) { return io::save_checkpoint(m); }, loaded);
        EXPECT_EQ(again, bytes) << c.name;
    }
}

TEST(AnyModel, ABadConfigIsRefusedBeforeAModelIsMade) {
    ModelConfig c = tiny(ModelKind::decoder, Architecture::transformer);
    c.num_heads = 3;  // 8 is not a multiple of 3
    Rng rng(1);
    EXPECT_THROW(make_model(c, rng), ConfigError);
}

}  // namespace
}  // namespace attnlab
