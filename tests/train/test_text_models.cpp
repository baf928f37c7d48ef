// The language models shipped in models/ (scripts/train_text_models.sh): each reproduces the
// held-out loss its .json states, and tang keeps the form of regulated verse.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnlab/io/safetensors.hpp"
#include "attnlab/text/char_vocab.hpp"
#include "attnlab/text/corpora.hpp"
#include "attnlab/text/unicode.hpp"
#include "attnlab/train/text_corpus.hpp"

namespace attnlab {
namespace {

const std::string kRoot = ATTNLAB_SOURCE_DIR;

std::vector<std::uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError("cannot open " + path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Shipped {
    Model model;
    CorpusSpec spec;
    std::size_t seq_len;
    nlohmann::json stats;
    std::size_t bytes;
};

Shipped load_shipped(const std::string& name) {
    const std::string base = kRoot + "/models/" + name;
    const std::vector<std::uint8_t> bytes = read_bytes(base + ".safetensors");
    const io::SafeTensors st = io::SafeTensors::parse(bytes);
    std::map<std::string, std::string> task;
    for (const auto& [k, v] : st.metadata())
        if (k.rfind("task.", 0) == 0) task[k.substr(5)] = v;
    for (const std::string& t : st.names()) EXPECT_EQ(st.dtype(t), io::Dtype::F16) << name << ": " << t;
    std::ifstream stats(base + ".json");
    return Shipped{Model::load(bytes), CorpusSpec::from_metadata(task, kRoot + "/data"), std::stoul(task.at("length")),
                   nlohmann::json::parse(stats), bytes.size()};
}

class ShippedModel : public ::testing::TestWithParam<const char*> {};

TEST_P(ShippedModel, ReproducesItsStatedHeldOutLoss) {
    Shipped s = load_shipped(GetParam());
    EXPECT_LE(s.bytes, 4u << 20);
    ASSERT_NE(s.model.tokenizer(), nullptr);
    const TextCorpus c = make_text_corpus(s.spec, s.model.shared_tokenizer());
    const TextEval e = evaluate_text(s.model, c.heldout, s.seq_len, c.pad);
    EXPECT_EQ(e.targets, s.stats["heldout_targets"].get<std::size_t>());
    EXPECT_NEAR(e.mean_nats(), s.stats["heldout_loss_nats_per_token"].get<double>(), 1e-3);
    EXPECT_NEAR(c.bits_per_unit(e), s.stats["heldout_bits_per_unit"].get<double>(), 1e-3);
    EXPECT_EQ(s.model.num_parameters(), s.stats["parameters"].get<std::size_t>());
}

INSTANTIATE_TEST_SUITE_P(Models, ShippedModel, ::testing::Values("tang", "brown", "induction-2l", "induction-1l"),
                         [](const auto& info) {
                             std::string n = info.param;
                             for (char& ch : n)
                                 if (ch == '-') ch = '_';
                             return n;
                         });

TEST(ShippedModel, InductionModelsAreAttentionOnly) {
    EXPECT_TRUE(load_shipped("induction-2l").model.config().attention_only);
    EXPECT_EQ(load_shipped("induction-2l").model.config().num_layers, 2u);
    EXPECT_EQ(load_shipped("induction-1l").model.config().num_layers, 1u);
}

// Whether `poem` (couplets, each "<L>，<L>。\n") is 4 or 8 lines of `length` characters.
bool keeps_form(const std::string& poem, std::size_t length) {
    std::vector<std::string> couplets;
    std::size_t pos = 0;
    while (pos < poem.size()) {
        const std::size_t eol = poem.find('\n', pos);
        if (eol == std::string::npos) return false;  // a couplet must end its line
        couplets.push_back(poem.substr(pos, eol - pos));
        pos = eol + 1;
    }
    if (couplets.size() != 2 && couplets.size() != 4) return false;
    for (const std::string& c : couplets) {
        const std::vector<text::CodePoint> cps = text::decode_utf8(c, "keeps_form");
        if (cps.size() != 2 * length + 2) return false;
        for (std::size_t i = 0; i < cps.size(); ++i) {
            const char32_t want = i == length ? U'，' : i == 2 * length + 1 ? U'。' : 0;
            if (want ? cps[i].value != want : !text::is_cjk_ideograph(cps[i].value)) return false;
        }
    }
    return true;
}

TEST(TangModel, GreedyContinuationsOfHeldOutFirstLinesKeepTheForm) {
    Shipped s = load_shipped("tang");
    const auto& chars = dynamic_cast<const text::CharTokenizer&>(*s.model.tokenizer());
    const text::ScriptConverter& conv = *chars.script();
    const std::set<std::string> held = text::read_id_list(kRoot + "/data/splits/tang_heldout.txt");
    const std::vector<text::Poem> poems =
        text::load_tang_poems(kRoot + "/data/node_modules/chinese-poetry/dist/quantangshi", &conv);
    std::size_t tried = 0, kept = 0;
    for (const text::Poem& p : poems) {
        if (!held.count(p.id)) continue;
        const std::string& simplified = p.simplified;
        const std::vector<text::CodePoint> cps = text::decode_utf8(simplified, "tang");
        const std::string first = simplified.substr(0, cps[p.line_length].end);  // "<L characters>，"
        const std::string answer = continue_text(s.model, first, 80);
        kept += keeps_form(first + answer, p.line_length);
        if (tried < 3) std::cout << first << answer;
        if (++tried == 200) break;
    }
    ASSERT_EQ(tried, 200u);
    std::cout << kept << " of " << tried << " continuations keep the form\n";
    EXPECT_GE(kept, 180u);
}

TEST(TangModel, ATraditionalPromptIsAnsweredInTraditionalCharacters) {
    Shipped s = load_shipped("tang");
    const auto& chars = dynamic_cast<const text::CharTokenizer&>(*s.model.tokenizer());
    const std::string simplified = "白日依山尽，", traditional = "白日依山盡，";
    ASSERT_EQ(chars.script()->detect(traditional), text::Script::traditional);
    const std::string a = continue_text(s.model, simplified, 30), b = continue_text(s.model, traditional, 30);
    EXPECT_EQ(chars.encode(a), chars.encode(b));  // the same poem
    EXPECT_EQ(b, chars.script()->to_traditional(a));
    EXPECT_NE(a, b);
}

}  // namespace
}  // namespace attnlab
