#include "attnlab/text/bpe_trainer.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/text/byte_bpe.hpp"

namespace attnlab::text {
namespace {

ByteBpeTokenizer trained(const std::vector<std::string>& texts, std::size_t merges) {
    TokenizerFiles f = train_byte_bpe(texts, merges);
    return ByteBpeTokenizer::from_files(f["vocab.json"], f["merges.txt"]);
}

// The merges by hand: pieces "the" x1, " the" x3, " cat" x1 (GPT-2's pre-tokenizer). Pair
// counts: (t,h) 4, (h,e) 4, (Ġ,t) 3, ...; (h,e) wins the tie with (t,h): 'h' (104) < 't' (116).
// Then (t,he) 4, then (Ġ,the) 3.
TEST(BpeTrainer, MergesTheMostFrequentPairFirstAndBreaksTiesBySymbolIds) {
    const TokenizerFiles f = train_byte_bpe({"the the the", " the cat"}, 3);
    EXPECT_EQ(f.at("merges.txt"), "#version: attnlab train_byte_bpe\nh e\nt he\n\xC4\xA0 the\n");
    const auto vocab = nlohmann::json::parse(f.at("vocab.json"));
    EXPECT_EQ(vocab.size(), 259u);
    EXPECT_EQ(vocab["he"], 256);
    EXPECT_EQ(vocab["the"], 257);
    EXPECT_EQ(vocab["\xC4\xA0the"], 258);
}

TEST(BpeTrainer, ItsFilesAreReadByGpt2sBpeAndRoundTripAnyText) {
    const std::string corpus = "A careful reader learns to look back. When a door is opened, it is later closed. "
                               "When a question is asked, an answer follows. The keeper knew this about the sea.";
    const ByteBpeTokenizer bpe = trained({corpus}, 60);
    EXPECT_GE(bpe.merge_count(), 10u);  // only the pairs seen twice or more merge
    EXPECT_EQ(bpe.vocab_size(), 256 + bpe.merge_count());
    for (const std::string text : {corpus, std::string("unseen wörds ☃ and digits 1234")}) {
        EXPECT_EQ(bpe.decode(bpe.encode(text)), text);
    }
    EXPECT_LT(bpe.encode(corpus).size(), corpus.size() * 3 / 4);
    EXPECT_EQ(bpe.encode(" is").size(), 1u);  // seen three times, and its pairs more often: one token
}

TEST(BpeTrainer, IsDeterministicAndStopsWhenNoPairRepeats) {
    EXPECT_EQ(train_byte_bpe({"abc abd", "xyz"}, 50), train_byte_bpe({"abc abd", "xyz"}, 50));
    const ByteBpeTokenizer bpe = trained({"abcd"}, 50);
    EXPECT_EQ(bpe.merge_count(), 0u);  // every pair occurs once
    EXPECT_THROW(train_byte_bpe({"a"}, kMaxBpeMerges + 1), ConfigError);
    EXPECT_THROW(train_byte_bpe({"bad \xFF byte"}, 5), ValueError);
}

}  // namespace
}  // namespace attnlab::text
