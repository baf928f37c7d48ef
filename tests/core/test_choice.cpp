// core/choice.hpp: a choice's names, their inverse, the error for an unknown name and the help
// text, checked on the engine's choices.
#include "attnlab/core/choice.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "attnlab/model/config.hpp"

namespace attnlab {
namespace {

// Every value's name reads back as the value, the names are distinct and non-empty, and the
// table lists the enumerators in their declaration order (0, 1, 2, ...).
template <class Enum>
void expect_round_trip() {
    std::set<std::string> seen;
    std::size_t index = 0;
    for (const auto& v : choice_values<Enum>()) {
        EXPECT_EQ(static_cast<std::size_t>(v.value), index++) << ChoiceTraits<Enum>::type;
        EXPECT_FALSE(v.name.empty()) << ChoiceTraits<Enum>::type;
        EXPECT_TRUE(seen.insert(std::string(v.name)).second) << "duplicate name " << v.name;
        EXPECT_EQ(choice_name(v.value), v.name);
        EXPECT_EQ(choice_from_name<Enum>(v.name), v.value);
        EXPECT_EQ(v.help.find(';'), std::string_view::npos) << v.name << ": choice_help separates values by ';'";
    }
    EXPECT_FALSE(ChoiceTraits<Enum>::what.empty());
    EXPECT_FALSE(ChoiceTraits<Enum>::doc.empty());
}

TEST(Choice, EveryChoiceOfTheEngineRoundTripsItsNames) {
    expect_round_trip<Normalizer>();
    expect_round_trip<AttentionVariant>();
    expect_round_trip<Precision>();
    expect_round_trip<SoftmaxPrecision>();
    expect_round_trip<PositionalKind>();
    expect_round_trip<Activation>();
    expect_round_trip<ModelKind>();
    expect_round_trip<Architecture>();
    expect_round_trip<NormPlacement>();
    expect_round_trip<Pooling>();
    expect_round_trip<PairLoss>();
}

TEST(Choice, AnUnknownNameIsAConfigErrorListingTheValidOnes) {
    try {
        choice_from_name<NormPlacement>("sandwich", "attnlab train");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_STREQ(e.what(), "attnlab train: unknown norm 'sandwich'; valid: pre, post");
    }
    try {
        choice_from_name<AttentionVariant>("sparse");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_STREQ(e.what(), "unknown attention variant 'sparse'; valid: full, linear, block_sparse");
    }
    EXPECT_FALSE(find_choice<Pooling>("max").has_value());
    EXPECT_EQ(find_choice<Pooling>("cls"), Pooling::cls);
}

TEST(Choice, NamesJoinInTableOrderAndHelpNamesEachValue) {
    EXPECT_EQ(choice_names<NormPlacement>(), "pre, post");
    EXPECT_EQ(choice_names<Precision>(" | "), "fp32 | fp16 | bf16");
    EXPECT_EQ(choice_name_list<PairLoss>(), (std::vector<std::string>{"match", "clip"}));
    const std::string help = choice_help<Pooling>("pooling");
    EXPECT_EQ(help, "pooling. mean: " + std::string(choice_values<Pooling>()[0].help) +
                        "; cls: " + std::string(choice_values<Pooling>()[1].help));
}

TEST(Choice, OnlyDeclaredEnumsAreChoices) {
    EXPECT_TRUE(is_choice_v<Normalizer>);
    EXPECT_FALSE(is_choice_v<Stage>);  // stages have their own name table (attention/stage.hpp)
    EXPECT_FALSE(is_choice_v<int>);
    EXPECT_FALSE(is_choice_v<bool>);
}

TEST(Choice, ATextFormFieldUsesTheChoicesNames) {
    EXPECT_EQ(format_field(Architecture::swin), "swin");
    Architecture a = Architecture::transformer;
    parse_field("where", "architecture", "crossmodal", a);
    EXPECT_EQ(a, Architecture::crossmodal);
    EXPECT_THROW(parse_field("where", "architecture", "gru", a), ConfigError);
}

}  // namespace
}  // namespace attnlab
