// libFuzzer target: the tasks' token <-> text conversions (attnlab/train/tasks.hpp: make_task,
// Task::decode, Task::sample_into; the CLI's encode_text for char_lm prompts).
//
// Input layout: byte 0 picks the task, bytes 1..6 its options (length, vocab, k: each unset,
// small or large), the rest is both a list of int32 tokens for decode and a text for encode_text.
// Holds for every input: each call returns or throws an attnlab::Error; decode of sampled tokens
// succeeds; when encode_text accepts a text (char_lm, every character in the corpus alphabet),
// decode gives the text back. Seeds: tests/fuzz/corpus/tasks/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/train/tasks.hpp"
#include "checkpoint_file.hpp"

namespace {

// An option value from two bytes: unset, a small value, or (rarely) a large one.
std::optional<std::size_t> option_from(std::uint8_t mode, std::uint8_t value) {
    switch (mode % 4) {
        case 0: return std::nullopt;
        case 1:
        case 2: return value;
        default: return static_cast<std::size_t>(value) << 8 | (mode >> 2);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 7) return 0;
    const std::vector<std::string> names = attnlab::task_names();
    const std::string name = data[0] < names.size() * 32 ? names[data[0] % names.size()] : "unknown";
    attnlab::TaskOptions options;
    options.length = option_from(data[1], data[2]);
    options.vocab = option_from(data[3], data[4]);
    options.k = option_from(data[5], data[6]);
    data += 7;
    size -= 7;

    std::unique_ptr<attnlab::Task> task;
    try {
        task = attnlab::make_task(name, options);
    } catch (const attnlab::ConfigError&) {
        return 0;
    }
    if (task->input() == attnlab::TaskInput::values) return 0;  // series: no tokens to decode

    std::vector<std::int32_t> tokens(size / 4);
    if (!tokens.empty()) std::memcpy(tokens.data(), data, tokens.size() * 4);
    try {
        task->decode(tokens.data(), tokens.size());
    } catch (const attnlab::ValueError&) {
    }

    attnlab::Rng rng(size);
    const attnlab::Batch batch = task->sample(2, rng);
    task->decode(batch.tokens.data(), batch.tokens.size());

    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const std::vector<std::int32_t> ids = attnlab::cli::encode_text(*task, text);
        if (task->decode(ids.data(), ids.size()) != text) std::abort();
    } catch (const attnlab::ConfigError&) {
    }
    return 0;
}
