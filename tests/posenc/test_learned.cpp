#include "attnlab/posenc/learned.hpp"

#include <gtest/gtest.h>

#include "attnlab/posenc/positional_encoding.hpp"

namespace attnlab {
namespace {

TEST(LearnedPositionalEmbedding, AddsTableRowsAtTheOffset) {
    Rng rng(1);
    const LearnedPositionalEmbedding pos(6, 4, rng);
    Tensor3 x = Tensor3::from_shape({2, 3, 4});
    x.fill(1.0f);
    pos.add_to(x, 2);
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(x(b, i, c), 1.0f + pos.table(i + 2, c));
}

TEST(LearnedPositionalEmbedding, SequenceLongerThanTheTableThrowsNamingBothLengths) {
    Rng rng(1);
    const LearnedPositionalEmbedding pos(8, 4, rng);
    Tensor3 x = Tensor3::from_shape({1, 9, 4});
    try {
        pos.add_to(x);
        FAIL();
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("up to 8"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("holds only 8"), std::string::npos) << e.what();
    }
    Tensor3 wrong_width = Tensor3::from_shape({1, 2, 5});
    EXPECT_THROW(pos.add_to(wrong_width), ShapeError);
}

TEST(PositionalKind, NamesRoundTripAndUnknownThrows) {
    for (auto k : {PositionalKind::none, PositionalKind::sinusoidal, PositionalKind::learned, PositionalKind::rope}) {
        EXPECT_EQ(positional_from_name(positional_name(k)), k);
    }
    EXPECT_THROW(positional_from_name("alibi"), ConfigError);
}

}  // namespace
}  // namespace attnlab
