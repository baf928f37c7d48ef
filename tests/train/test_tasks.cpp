#include "attnlab/train/tasks.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

TaskOptions options_with(std::optional<std::size_t> length, std::optional<std::size_t> vocab = std::nullopt,
                         std::optional<std::size_t> k = std::nullopt) {
    TaskOptions o;
    o.length = length;
    o.vocab = vocab;
    o.k = k;
    return o;
}

std::vector<std::int32_t> row(const Index2& m, std::size_t b) {
    return std::vector<std::int32_t>(&m(b, 0), &m(b, 0) + m.shape(1));
}

// Expects message to contain every fragment.
template <class E, class F>
void expect_error_naming(F&& f, const std::vector<std::string>& fragments) {
    try {
        f();
        ADD_FAILURE() << "no exception";
    } catch (const E& e) {
        const std::string message = e.what();
        for (const auto& fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
}

// Independent of the library: a stack of opening characters over decoded text.
bool balanced_text(const std::string& text) {
    std::string stack;
    const std::string opens = "([{<", closes = ")]}>";
    for (char c : text) {
        if (c == '.') break;  // PAD: the word is over
        if (opens.find(c) != std::string::npos) {
            stack += c;
        } else {
            const std::size_t kind = closes.find(c);
            if (stack.empty() || stack.back() != opens[kind]) return false;
            stack.pop_back();
        }
    }
    return stack.empty();
}

TEST(Tasks, NamesListsEveryTaskMakeTaskAccepts) {
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        EXPECT_EQ(task->name(), name);
    }
}

TEST(Tasks, SameSeedGivesSameBatchForEveryTask) {
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        Rng a(123), b(123), c(124);
        const Batch x = task->sample(8, a), y = task->sample(8, b), z = task->sample(8, c);
        EXPECT_EQ(x.tokens, y.tokens) << name;
        EXPECT_EQ(x.targets, y.targets) << name;
        EXPECT_EQ(x.labels, y.labels) << name;
        EXPECT_EQ(x.padding, y.padding) << name;
        EXPECT_EQ(x.pixels, y.pixels) << name;
        EXPECT_EQ(x.values, y.values) << name;
        EXPECT_EQ(x.time, y.time) << name;
        EXPECT_EQ(x.forecast, y.forecast) << name;
        if (task->input() == TaskInput::pixels) {
            EXPECT_NE(x.pixels, z.pixels) << name;
        } else if (task->input() == TaskInput::values) {
            EXPECT_NE(x.values, z.values) << name;
        } else {
            EXPECT_NE(x.tokens, z.tokens) << name;
        }
    }
}

// sample_into reuses a Batch across tasks and sizes: every call gives exactly what sample()
// gives from the same Rng state, whatever the batch held before (another task's shapes, a
// classification batch's labels and padding, a larger batch).
TEST(Tasks, SampleIntoAReusedBatchEqualsAFreshSample) {
    Batch reused;
    for (std::size_t round = 0; round < 2; ++round) {
        for (const auto& name : task_names()) {
            auto task = make_task(name);
            for (std::size_t batch_size : {5, 3, 3}) {
                Rng a(77 + batch_size), b(77 + batch_size);
                const Batch fresh = task->sample(batch_size, a);
                task->sample_into(batch_size, b, reused);
                EXPECT_EQ(reused.tokens, fresh.tokens) << name;
                EXPECT_EQ(reused.targets, fresh.targets) << name;
                EXPECT_EQ(reused.labels, fresh.labels) << name;
                EXPECT_EQ(reused.padding, fresh.padding) << name;
                EXPECT_EQ(reused.pixels, fresh.pixels) << name;
                EXPECT_EQ(reused.values, fresh.values) << name;
                EXPECT_EQ(reused.time, fresh.time) << name;
                EXPECT_EQ(reused.forecast, fresh.forecast) << name;
                EXPECT_EQ(reused.baseline, fresh.baseline) << name;
                const bool images = task->input() == TaskInput::pixels || task->input() == TaskInput::paired;
                EXPECT_EQ(reused.pixels.size() == 0, !images) << name;
                EXPECT_EQ(reused.values.size() == 0, task->input() != TaskInput::values) << name;
                EXPECT_EQ(reused.targets.size() == 0, task->kind() != TaskKind::sequence) << name;
                EXPECT_EQ(reused.labels.size() == 0, task->kind() != TaskKind::classification) << name;
                EXPECT_EQ(a.below(1000000), b.below(1000000)) << name << ": both left the Rng in the same state";
            }
        }
    }
}

TEST(Tasks, BatchesHaveTheDocumentedShapesAndTokenRanges) {
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        Rng rng(5);
        const Batch batch = task->sample(6, rng);
        const std::size_t T = task->seq_len();
        if (task->input() == TaskInput::pixels) {  // images: (B, S, S) pixels and labels, no tokens
            const std::size_t s = task->image_size();
            EXPECT_EQ(T, s * s) << name;
            EXPECT_EQ(batch.pixels.shape(0), 6u) << name;
            EXPECT_EQ(batch.pixels.shape(1), s) << name;
            EXPECT_EQ(batch.pixels.shape(2), s) << name;
            EXPECT_EQ(batch.tokens.size(), 0u) << name;
            ASSERT_EQ(batch.labels.size(), 6u) << name;
            for (auto l : batch.labels) {
                ASSERT_GE(l, 0) << name;
                ASSERT_LT(l, static_cast<std::int32_t>(task->num_classes())) << name;
            }
            continue;
        }
        if (task->input() == TaskInput::values) {  // series: values, time, forecast, baseline; no tokens
            EXPECT_EQ(task->kind(), TaskKind::regression) << name;
            EXPECT_EQ(batch.values.shape(1), T) << name;
            EXPECT_EQ(batch.time.shape(1), T + task->horizon()) << name;
            EXPECT_EQ(batch.forecast.shape(1), task->horizon()) << name;
            EXPECT_EQ(batch.baseline.shape(1), task->horizon()) << name;
            EXPECT_EQ(batch.tokens.size() + batch.targets.size() + batch.labels.size(), 0u) << name;
            continue;
        }
        EXPECT_EQ(batch.tokens.shape(0), 6u) << name;
        EXPECT_EQ(batch.tokens.shape(1), T) << name;
        for (auto t : batch.tokens) {
            ASSERT_GE(t, 0) << name;
            ASSERT_LT(t, static_cast<std::int32_t>(task->vocab_size())) << name;
        }
        if (task->kind() == TaskKind::sequence) {
            EXPECT_EQ(task->num_classes(), task->vocab_size()) << name;
            EXPECT_EQ(batch.targets.shape(0), 6u) << name;
            EXPECT_EQ(batch.targets.shape(1), T) << name;
            EXPECT_EQ(batch.labels.size(), 0u) << name;
            EXPECT_EQ(batch.padding.size(), 0u) << name;
            for (auto t : batch.targets) {
                ASSERT_GE(t, -1) << name;
                ASSERT_LT(t, static_cast<std::int32_t>(task->vocab_size())) << name;
            }
        } else {
            EXPECT_EQ(batch.targets.size(), 0u) << name;
            EXPECT_EQ(batch.labels.shape(0), 6u) << name;
            if (task->input() == TaskInput::paired) {  // caption_match: captions of one length, images
                EXPECT_EQ(batch.padding.size(), 0u) << name;
                EXPECT_EQ(batch.pixels.shape(0), 6u) << name;
                continue;
            }
            EXPECT_EQ(batch.padding.shape(0), 6u) << name;
            EXPECT_EQ(batch.padding.shape(1), T) << name;
            for (auto l : batch.labels) ASSERT_TRUE(l >= 0 && l < static_cast<std::int32_t>(task->num_classes()));
        }
    }
}

TEST(Tasks, PromptAnswerTasksHaveTheDocumentedLayout) {
    auto task = make_task("copy", options_with(5, 7));
    EXPECT_EQ(task->vocab_size(), 8u);  // 7 symbols + SEP
    EXPECT_EQ(task->seq_len(), 10u);
    Rng rng(1);
    const Batch batch = task->sample(4, rng);
    for (std::size_t b = 0; b < 4; ++b) {
        EXPECT_EQ(batch.tokens(b, 5), 7) << "SEP is the input at position length";
        for (std::size_t t = 0; t < 5; ++t) {
            EXPECT_EQ(batch.targets(b, t), -1) << "prompt targets are ignored";
            EXPECT_LT(batch.tokens(b, t), 7);
        }
        // The example is tokens followed by the last target.
        std::vector<std::int32_t> example = row(batch.tokens, b);
        example.push_back(batch.targets(b, 9));
        for (std::size_t t = 5; t < 10; ++t) EXPECT_EQ(batch.targets(b, t), example[t + 1]);
        for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(example[6 + i], example[i]) << "copy";
    }
}

TEST(Tasks, ReverseAnswerIsThePromptReversed) {
    auto task = make_task("reverse", options_with(6));
    Rng rng(2);
    const Batch batch = task->sample(16, rng);
    for (std::size_t b = 0; b < 16; ++b) {
        std::vector<std::int32_t> prompt(&batch.tokens(b, 0), &batch.tokens(b, 0) + 6);
        std::vector<std::int32_t> answer(&batch.targets(b, 6), &batch.targets(b, 6) + 6);
        std::reverse(prompt.begin(), prompt.end());
        EXPECT_EQ(answer, prompt);
    }
}

TEST(Tasks, SortAnswerIsThePromptSortedAscending) {
    auto task = make_task("sort", options_with(9, 4));
    Rng rng(3);
    const Batch batch = task->sample(16, rng);
    for (std::size_t b = 0; b < 16; ++b) {
        std::vector<std::int32_t> prompt(&batch.tokens(b, 0), &batch.tokens(b, 0) + 9);
        std::vector<std::int32_t> answer(&batch.targets(b, 9), &batch.targets(b, 9) + 9);
        std::sort(prompt.begin(), prompt.end());
        EXPECT_EQ(answer, prompt);
    }
}

TEST(Tasks, AssocRecallAsksForTheValueOfAKeyGivenEarlier) {
    auto task = make_task("assoc_recall", options_with(5, 8));
    EXPECT_EQ(task->vocab_size(), 17u);  // 8 keys, 8 values, SEP
    EXPECT_EQ(task->seq_len(), 12u);
    Rng rng(4);
    const Batch batch = task->sample(32, rng);
    for (std::size_t b = 0; b < 32; ++b) {
        std::set<std::int32_t> keys;
        for (std::size_t i = 0; i < 5; ++i) {
            EXPECT_LT(batch.tokens(b, 2 * i), 8);
            EXPECT_GE(batch.tokens(b, 2 * i + 1), 8);
            EXPECT_LT(batch.tokens(b, 2 * i + 1), 16);
            keys.insert(batch.tokens(b, 2 * i));
        }
        EXPECT_EQ(keys.size(), 5u) << "keys are distinct";
        EXPECT_EQ(batch.tokens(b, 10), 16) << "SEP";
        const std::int32_t query = batch.tokens(b, 11);
        std::int32_t value = -1;
        for (std::size_t i = 0; i < 5; ++i)
            if (batch.tokens(b, 2 * i) == query) value = batch.tokens(b, 2 * i + 1);
        for (std::size_t t = 0; t < 11; ++t) EXPECT_EQ(batch.targets(b, t), -1);
        EXPECT_EQ(batch.targets(b, 11), value);
    }
}

TEST(Tasks, KBackTargetIsTheTokenKStepsAgo) {
    for (std::size_t k : {1, 3, 512}) {
        auto task = make_task("k_back", options_with(k + 20, 5, k));
        EXPECT_EQ(task->vocab_size(), 5u);
        Rng rng(k);
        const Batch batch = task->sample(3, rng);
        for (std::size_t b = 0; b < 3; ++b)
            for (std::size_t t = 0; t < k + 20; ++t)
                ASSERT_EQ(batch.targets(b, t), t < k ? -1 : batch.tokens(b, t - k)) << "k " << k << " t " << t;
    }
}

TEST(Tasks, BracketLabelsAgreeWithAnIndependentChecker) {
    for (std::size_t kinds : {1, 2, 4}) {
        auto task = make_task("brackets", options_with(12, kinds));
        EXPECT_EQ(task->vocab_size(), 2 * kinds + 1);
        Rng rng(kinds);
        const Batch batch = task->sample(500, rng);
        for (std::size_t b = 0; b < 500; ++b) {
            const std::string text = task->decode(&batch.tokens(b, 0), 12);
            ASSERT_EQ(batch.labels(b) == 1, balanced_text(text)) << text;
            std::size_t length = 0;
            for (std::size_t t = 0; t < 12; ++t) {
                const bool pad = text[t] == '.';
                EXPECT_EQ(batch.padding(b, t), pad ? 1 : 0) << text;
                if (!pad) length = t + 1;
            }
            EXPECT_EQ(length % 2, 0u) << "lengths are even so parity gives nothing away: " << text;
            EXPECT_EQ(text.find_first_not_of('.', length), std::string::npos) << "padding is a suffix: " << text;
        }
    }
}

TEST(Tasks, BracketClassesAreBalancedWithin10Percent) {
    auto task = make_task("brackets");
    Rng rng(9);
    const Batch batch = task->sample(1000, rng);
    int positives = 0;
    for (auto l : batch.labels) positives += l;
    EXPECT_GT(positives, 450);
    EXPECT_LT(positives, 550);
}

TEST(Tasks, BracketNegativesIncludeHardOnesWithEqualCounts) {
    auto task = make_task("brackets", options_with(16, 2));
    Rng rng(10);
    const Batch batch = task->sample(1000, rng);
    int negatives = 0, hard = 0;
    for (std::size_t b = 0; b < 1000; ++b) {
        if (batch.labels(b) == 1) continue;
        ++negatives;
        const std::string text = task->decode(&batch.tokens(b, 0), 16);
        auto count = [&](char c) { return std::count(text.begin(), text.end(), c); };
        if (count('(') == count(')') && count('[') == count(']')) ++hard;
    }
    EXPECT_GT(hard, negatives / 2) << "most negatives cannot be told apart by counting";
}

TEST(Tasks, CharLmTargetsAreTheNextCharacterOfTheCorpus) {
    auto task = make_task("char_lm", options_with(40));
    const std::string& corpus = char_lm_corpus();
    EXPECT_GT(corpus.size(), 3000u);
    std::set<char> distinct(corpus.begin(), corpus.end());
    EXPECT_EQ(task->vocab_size(), distinct.size());
    Rng rng(11);
    const Batch batch = task->sample(8, rng);
    for (std::size_t b = 0; b < 8; ++b) {
        const std::string input = task->decode(&batch.tokens(b, 0), 40);
        const std::string next = task->decode(&batch.targets(b, 0), 40);
        EXPECT_EQ(input.substr(1), next.substr(0, 39));
        EXPECT_NE(corpus.find(input + next.back()), std::string::npos) << "a window of the corpus";
    }
}

TEST(Tasks, CharLmVocabularyIsInCharacterOrder) {
    auto task = make_task("char_lm");
    std::vector<std::int32_t> all(task->vocab_size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int32_t>(i);
    const std::string chars = task->decode(all.data(), all.size());
    EXPECT_TRUE(std::is_sorted(chars.begin(), chars.end()));
    EXPECT_EQ(chars.front(), '\n');
}

TEST(Tasks, DecodeShowsSeparatorsSymbolsAndIgnoredTargets) {
    const std::int32_t copy_tokens[] = {3, 1, 4, 10, 3, -1};
    EXPECT_EQ(make_task("copy")->decode(copy_tokens, 6), "3 1 4 | 3 _");
    const std::int32_t recall_tokens[] = {2, 16 + 5, 16 * 2, 2};
    EXPECT_EQ(make_task("assoc_recall")->decode(recall_tokens, 4), "k2 v5 | k2");
    const std::int32_t bracket_tokens[] = {0, 2, 3, 1, 4, 4};
    EXPECT_EQ(make_task("brackets")->decode(bracket_tokens, 6), "([])..");
    const std::int32_t kback_tokens[] = {0, 9, 2};
    EXPECT_EQ(make_task("k_back")->decode(kback_tokens, 3), "0 9 2");
}

TEST(Tasks, DecodeRejectsTokensOutsideTheVocabulary) {
    const std::int32_t bad[] = {1, 11};
    expect_error_naming<ValueError>([&] { make_task("copy")->decode(bad, 2); }, {"11", "position 1", "11)"});
}

TEST(Tasks, UnknownNameThrowsListingValidNames) {
    expect_error_naming<ConfigError>([] { make_task("copyy"); }, {"copyy", "copy, reverse", "char_lm"});
}

TEST(Tasks, BadOptionValuesThrowNamingThem) {
    expect_error_naming<ConfigError>([] { make_task("copy", options_with(0)); }, {"copy", "length", "=0"});
    expect_error_naming<ConfigError>([] { make_task("sort", options_with(4, 1)); }, {"sort", "vocab=1"});
    expect_error_naming<ConfigError>([] { make_task("k_back", options_with(10, 5, 10)); }, {"k_back", "k=10"});
    expect_error_naming<ConfigError>([] { make_task("k_back", options_with(10, 5, 0)); }, {"k=0"});
    expect_error_naming<ConfigError>([] { make_task("assoc_recall", options_with(8, 4)); },
                                     {"assoc_recall", "vocab=4", "length=8"});
    expect_error_naming<ConfigError>([] { make_task("brackets", options_with(8, 5)); }, {"brackets", "vocab=5"});
    expect_error_naming<ConfigError>([] { make_task("char_lm", options_with(1000000)); }, {"char_lm", "length=1000000"});
    expect_error_naming<ConfigError>([] { make_task("reverse", options_with(4, 10, 2)); },
                                     {"reverse", "option k", "k=2"});
    expect_error_naming<ConfigError>([] { make_task("char_lm", options_with(8, 30)); }, {"option vocab", "vocab=30"});
}

TEST(Tasks, ZeroBatchSizeThrows) {
    Rng rng(0);
    expect_error_naming<ConfigError>([&] { make_task("copy")->sample(0, rng); }, {"batch_size", "0"});
}

}  // namespace
}  // namespace attnlab
