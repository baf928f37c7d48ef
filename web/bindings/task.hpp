// web/bindings/task.hpp: the JavaScript `Task` object (task.cpp) and what the Trainer binding
// needs of it.
//
// What it is for: holding one generated task (attnlab::make_task) in shared ownership, so a
// Trainer built on it keeps it alive after the JavaScript Task is deleted. Not for: the task
// logic itself (src/train/tasks.cpp); encode() is derived from the task's own decode().
//
//   const task = new lab.Task('reverse', { length: 4, vocab: 6 });
//   task.sample(2, 7);          // { tokens: {shape: [2, 8], data: Int32Array}, targets, labels: null, padding: null }
//   task.decode([3, 1, 6]);     // '3 1 |'
//   task.encode('3 1 |');       // Int32Array [3, 1, 6]
//
// A text task (language modelling on real text, train/text_task.hpp) comes from Task.fromText:
//   const t = lab.Task.fromText(bytesOrString, { name: 'tang', tokens: 'char', chars: 4000, length: 72 });
//   t.tokenizer();              // the Tokenizer it built (a model trained on it carries it: setTokenizer)
//   t.prompt();                 // the first held-out document's opening tokens, as text
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <emscripten/val.h>

#include "attnlab/core/random.hpp"
#include "attnlab/text/tokenizer.hpp"
#include "attnlab/train/tasks.hpp"

namespace attnlab::web {

class TaskBinding {
public:
    TaskBinding(std::shared_ptr<const Task> task, std::uint64_t seed) : task_(std::move(task)), rng_(seed) {}

    static TaskBinding* create(emscripten::val name);
    static TaskBinding* create_with_options(emscripten::val name, emscripten::val options);
    // text: a Uint8Array / ArrayBuffer of UTF-8 bytes (so a byte that is not UTF-8 is named by its
    // offset) or a string. Options: name, tokens ('char' | 'bpe'), chars, merges, length, seed.
    static TaskBinding* from_text(emscripten::val text, emscripten::val options);

    emscripten::val name() const;
    emscripten::val kind() const;
    emscripten::val input() const;       // 'tokens' or 'pixels'
    emscripten::val image_size() const;  // S of an image task, else 0
    emscripten::val vocab_size() const;
    emscripten::val seq_len() const;
    emscripten::val num_classes() const;
    // From the task's own generator (seeded by the `seed` option), or from a fresh Rng(seed).
    emscripten::val sample(emscripten::val batch_size);
    emscripten::val sample(emscripten::val batch_size, emscripten::val seed) const;
    emscripten::val decode(emscripten::val tokens) const;
    emscripten::val encode(emscripten::val text) const;
    // A text task's Tokenizer (a new handle, null for other tasks) and the text its samples
    // continue (an Error for other tasks).
    emscripten::val tokenizer() const;
    emscripten::val prompt() const;

    const std::shared_ptr<const Task>& shared() const { return task_; }

private:
    std::shared_ptr<const Task> task_;
    Rng rng_;  // the stream sample(batchSize) draws from
    std::shared_ptr<const text::Tokenizer> tokenizer_;  // a text task's, else null
    std::vector<std::int32_t> prompt_;                  // a text task's sampling prompt, else empty
};

}  // namespace attnlab::web
