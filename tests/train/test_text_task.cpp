#include "attnlab/train/text_task.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"
#include "attnlab/text/char_vocab.hpp"
#include "attnlab/train/trainer.hpp"

namespace attnlab {
namespace {

std::shared_ptr<const text::Tokenizer> tiny_chars() {
    return std::make_shared<text::CharTokenizer>(text::CharTokenizer::build({"abcdefgh"}, 8, nullptr));
}

ModelConfig tiny_decoder(std::size_t vocab) {
    ModelConfig c;
    c.vocab_size = vocab;
    c.d_model = 16;
    c.num_heads = 2;
    c.ff_dim = 32;
    c.positional = PositionalKind::rope;
    return c;
}

TEST(TextTask, AShortDocumentIsOneSampleFromItsStartPaddedWithIgnoredTargets) {
    const auto tok = tiny_chars();
    TextTask task("t", {{1, 3, 4, 2}, {1, 3, 4, 2}}, 6, tok, 2);  // 8 tokens: more than one sequence of 6 + 1
    Rng rng(1);
    const Batch b = task.sample(3, rng);
    for (std::size_t r = 0; r < 3; ++r) {
        const std::vector<std::int32_t> tokens(&b.tokens(r, 0), &b.tokens(r, 0) + 6);
        const std::vector<std::int32_t> targets(&b.targets(r, 0), &b.targets(r, 0) + 6);
        EXPECT_EQ(tokens, (std::vector<std::int32_t>{1, 3, 4, 2, 2, 2}));
        EXPECT_EQ(targets, (std::vector<std::int32_t>{3, 4, 2, -1, -1, -1}));
    }
}

TEST(TextTask, ALongDocumentGivesWindowsAtEveryStart) {
    const auto tok = tiny_chars();
    std::vector<std::int32_t> doc;
    for (int i = 0; i < 11; ++i) doc.push_back(3 + i % 8);
    TextTask task("t", {doc}, 4, tok, 2);
    Rng rng(3);
    std::set<std::int32_t> firsts;
    for (int i = 0; i < 200; ++i) {
        const Batch b = task.sample(1, rng);
        for (std::size_t t = 0; t < 4; ++t) EXPECT_EQ(b.targets(0, t), 3 + (b.tokens(0, t) - 3 + 1) % 8);
        firsts.insert(b.tokens(0, 0));
    }
    EXPECT_EQ(firsts.size(), 7u);  // starts 0 .. 6 (11 - 4), whose first tokens are 3 .. 9 mod 8
}

TEST(TextTask, RefusesCorporaWithNothingToLearn) {
    const auto tok = tiny_chars();
    EXPECT_THROW(TextTask("t", {}, 4, tok, 2), ConfigError);
    EXPECT_THROW(TextTask("t", {{3}}, 4, tok, 2), ConfigError);
    EXPECT_THROW(TextTask("t", {{3, 4}, {5, 6}}, 4, tok, 2), ConfigError);  // 4 tokens < one sequence of 5
    EXPECT_THROW(TextTask("t", {{3, 99}}, 4, tok, 2), ValueError);
    EXPECT_THROW(TextTask("t", {{3, 4}}, 4, tok, 50), ConfigError);
}

// evaluate_text against its definition: the summed -log softmax(logits)[target] of every token
// but each document's first, each window's logits from the model over that window alone.
TEST(TextEval, EqualsTheSummedCrossEntropyOfEveryTargetOnce) {
    const auto tok = tiny_chars();
    Model model(tiny_decoder(tok->vocab_size()), 5);
    const TokenDocuments docs = {{1, 3, 4, 5, 6, 7, 8, 9, 2}, {1, 4, 2}, {1, 10, 3, 2}};
    const std::size_t T = 4;
    const TextEval e = evaluate_text(model, docs, T, 2, /*batch_size=*/2);
    double nats = 0;
    std::size_t targets = 0;
    for (const auto& d : docs) {
        for (std::size_t s = 0; s + 1 < d.size(); s += T) {
            const std::size_t n = std::min(T, d.size() - 1 - s);
            Index2 tokens = Index2::from_shape({1, n});
            for (std::size_t t = 0; t < n; ++t) tokens(0, t) = d[s + t];
            const Tensor3 logits = model.sequence_logits(tokens);
            for (std::size_t t = 0; t < n; ++t) {
                double m = -1e30, z = 0;
                for (std::size_t v = 0; v < tok->vocab_size(); ++v) m = std::max(m, double(logits(0, t, v)));
                for (std::size_t v = 0; v < tok->vocab_size(); ++v) z += std::exp(double(logits(0, t, v)) - m);
                nats -= double(logits(0, t, static_cast<std::size_t>(d[s + t + 1]))) - m - std::log(z);
                ++targets;
            }
        }
    }
    EXPECT_EQ(e.targets, targets);
    EXPECT_EQ(targets, 8u + 2u + 3u);
    EXPECT_NEAR(e.nats, nats, 1e-4 * nats);
    EXPECT_NEAR(e.bits_per_token(), nats / targets / std::log(2.0), 1e-4);
}

TEST(ContinueText, ACharModelStartsAtBosStopsAtEosAndNeedsATokenizer) {
    const auto tok = tiny_chars();
    Model model(tiny_decoder(tok->vocab_size()), 2);
    EXPECT_THROW(continue_text(model, "ab", 5), ConfigError);
    model.set_tokenizer(tok);
    const std::string out = continue_text(model, "ab", 12);
    std::vector<std::int32_t> ids = {text::CharTokenizer::kBos};
    for (std::int32_t id : tok->encode("ab")) ids.push_back(id);
    const GenerateResult r = model.generate(ids, 12);
    std::vector<std::int32_t> tail(r.tokens.begin() + 3, r.tokens.end());
    const auto eos = std::find(tail.begin(), tail.end(), text::CharTokenizer::kEos);
    tail.erase(eos, tail.end());
    EXPECT_EQ(out, tok->decode(tail));
    EXPECT_THROW(continue_text(model, "", 5), ConfigError);
}

}  // namespace
}  // namespace attnlab
