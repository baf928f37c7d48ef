#include "attnlab/text/tokenizer.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/text/byte_bpe.hpp"

namespace attnlab::text {
namespace {

namespace fs = std::filesystem;

// A directory of its own under the test temp folder, emptied first.
fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::path(::testing::TempDir()) / ("attnlab_tokenizer_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}
void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// 256 byte symbols and three merges, in GPT-2's two files.
std::pair<std::string, std::string> bpe_files() {
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) vocab[byte_symbol(static_cast<std::uint8_t>(b))] = b;
    vocab["he"] = 256;
    vocab["\xC4\xA0w"] = 257;
    vocab["hel"] = 258;
    return {vocab.dump(), "#version: 0.2\nh e\n\xC4\xA0 w\nhe l\n"};
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(Tokenizer, KindsAreListedInTheOrderDirectoriesAreTried) {
    ASSERT_GE(tokenizer_kinds().size(), 2u);
    EXPECT_STREQ(tokenizer_kinds()[0].name, "byte_bpe");
    EXPECT_STREQ(tokenizer_kinds()[1].name, "wordpiece");
    EXPECT_EQ(tokenizer_kind("wordpiece").layouts.front(), std::vector<std::string>{"vocab.txt"});
    EXPECT_NE(error_of([] { tokenizer_kind("sentencepiece"); }).find("unknown tokenizer kind 'sentencepiece' (valid: byte_bpe, wordpiece"),
              std::string::npos);
}

TEST(Tokenizer, ADirectoryOfEitherPairOfGpt2NamesLoads) {
    const auto [vocab, merges] = bpe_files();
    const fs::path hf = fresh_dir("hf"), npm = fresh_dir("npm");
    write(hf / "vocab.json", vocab);
    write(hf / "merges.txt", merges);
    write(npm / "encoder.json", vocab);
    write(npm / "vocab.bpe", merges);
    const auto a = load_tokenizer_directory(hf.string());
    const auto b = load_tokenizer_directory(npm.string());
    EXPECT_EQ(a->kind(), "byte_bpe");
    EXPECT_EQ(a->encode("help wow"), (std::vector<std::int32_t>{258, 'p', 257, 'o', 'w'}));
    EXPECT_EQ(b->encode("help wow"), a->encode("help wow"));
    // Files come back under their canonical names whichever names the directory used.
    EXPECT_EQ(b->files(), a->files());
    EXPECT_EQ(a->files().count("vocab.json"), 1u);
}

TEST(Tokenizer, SerialisesToBytesAndBack) {
    const auto [vocab, merges] = bpe_files();
    const auto original = tokenizer_from_files("byte_bpe", {{"vocab.json", vocab}, {"merges.txt", merges}});
    const std::vector<std::uint8_t> bytes = original->to_bytes();
    const auto again = tokenizer_from_bytes(bytes);
    EXPECT_EQ(again->kind(), original->kind());
    EXPECT_EQ(again->vocab_size(), original->vocab_size());
    EXPECT_EQ(again->to_bytes(), bytes);
    const std::string text = "hello\n\xE4\xB8\xAD\xE6\x96\x87 wow's 123";
    EXPECT_EQ(again->encode(text), original->encode(text));
    EXPECT_EQ(again->decode(again->encode(text)), text);
}

TEST(Tokenizer, BadSerialisationsAndDirectoriesAreNamedErrors) {
    const std::string junk = "not json";
    EXPECT_NE(error_of([&] { tokenizer_from_bytes(reinterpret_cast<const std::uint8_t*>(junk.data()), junk.size()); })
                  .find("tokenizer_from_bytes: not a serialised tokenizer"),
              std::string::npos);
    const std::string other = R"({"format":"attnlab-tokenizer","version":1,"kind":"unigram","files":{}})";
    EXPECT_NE(error_of([&] { tokenizer_from_bytes(reinterpret_cast<const std::uint8_t*>(other.data()), other.size()); })
                  .find("unknown tokenizer kind 'unigram'"),
              std::string::npos);
    const std::string missing = R"({"format":"attnlab-tokenizer","version":1,"kind":"byte_bpe","files":{"vocab.json":"{}"}})";
    EXPECT_NE(error_of([&] { tokenizer_from_bytes(reinterpret_cast<const std::uint8_t*>(missing.data()), missing.size()); })
                  .find("a byte_bpe tokenizer needs 'merges.txt'"),
              std::string::npos);

    const fs::path empty = fresh_dir("empty");
    write(empty / "README.md", "nothing here");
    const std::string message = error_of([&] { load_tokenizer_directory(empty.string()); });
    EXPECT_NE(message.find("holds no tokenizer: it has README.md; expected vocab.json + merges.txt (byte_bpe); "
                           "encoder.json + vocab.bpe (byte_bpe); vocab.txt (wordpiece)"),
              std::string::npos)
        << message;
    EXPECT_NE(error_of([] { load_tokenizer_directory("/no/such/dir"); }).find("is not a directory"), std::string::npos);

    const fs::path broken = fresh_dir("broken");
    write(broken / "vocab.json", "{\"a\": 0}");
    write(broken / "merges.txt", "a b c\n");
    EXPECT_NE(error_of([&] { load_tokenizer_directory(broken.string()); }).find("merges.txt: line 1"), std::string::npos);
}

}  // namespace
}  // namespace attnlab::text
