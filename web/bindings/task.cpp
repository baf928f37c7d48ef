// The JavaScript `Task` class: the generated toy tasks of include/attnlab/train/tasks.hpp.
//
//   lab.taskNames();                                           // ['copy', 'reverse', 'sort', ...]
//   const task = new lab.Task('reverse', { length: 4, vocab: 6, seed: 1 });
//   task.kind(); task.vocabSize(); task.seqLen(); task.numClasses();   // 'sequence', 7, 8, 7
//   const b = task.sample(32, 7);   // { tokens: {shape:[32, 8], data: Int32Array}, targets, labels, padding }
//   task.decode(b.tokens);          // one string per row ('3 1 4 0 | 0 4 1'); a [T] input gives one string
//   task.encode('3 1 4 0 |');       // Int32Array: the inverse of decode
//
// Options: length, vocab, k (each only where the task uses it, see make_task), seed (of the
// stream sample(batchSize) draws from; sample(batchSize, seed) always gives the same batch).
// Tensors that a task does not have (targets of a classification task, labels and padding of a
// sequence task, pixels of a token task, tokens of an image task) are null. The image task
// `shapes` samples { pixels: {shape:[B, S, S], data: Float32Array}, labels }; input() is
// 'pixels' and imageSize() S there ('tokens' and 0 elsewhere). The paired task `caption_match`
// samples pixels, tokens (the captions, [B, 4]) and labels (1 = the caption matches); input() is
// 'paired', and decode / encode read and write its caption words. The forecasting task `series`
// (options context, horizon, periods (number[]), features, trend, noise, drift) samples
// { values: [B, T, F], time: [B, T + horizon], forecast: [B, horizon], baseline: [B, horizon] }
// (baseline: the seasonal-naive forecast); kind() 'regression', input() 'values'.
#include "task.hpp"

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/text/char_vocab.hpp"
#include "attnlab/train/text_corpus.hpp"
#include "convert.hpp"
#include "tokenizer.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

std::string task_name_from_js(const val& name) {
    if (!name.isString()) fail<ConfigError>("new Task: the task name must be a string (one of the names lab.taskNames() lists)");
    return name.as<std::string>();
}

val batch_to_js(const Batch& batch) {
    val out = val::object();
    out.set("tokens", batch.tokens.size() ? index_tensor_to_js(batch.tokens) : val::null());
    out.set("targets", batch.targets.size() ? index_tensor_to_js(batch.targets) : val::null());
    out.set("labels", batch.labels.size() ? index_tensor_to_js(batch.labels) : val::null());
    out.set("padding", batch.padding.size() ? mask_to_js(batch.padding) : val::null());
    out.set("pixels", batch.pixels.size() ? tensor_to_js(batch.pixels) : val::null());
    out.set("values", batch.values.size() ? tensor_to_js(batch.values) : val::null());
    out.set("time", batch.time.size() ? tensor_to_js(batch.time) : val::null());
    out.set("forecast", batch.forecast.size() ? tensor_to_js(batch.forecast) : val::null());
    out.set("baseline", batch.baseline.size() ? tensor_to_js(batch.baseline) : val::null());
    return out;
}

val sample_of(const Task& task, const val& batch_size, Rng& rng) {
    const std::size_t b = size_from_js(batch_size, "Task.sample", "batchSize");
    return batch_to_js(task.sample(b, rng));
}

// The text of each token alone, and whether decode separates tokens by spaces ("3 1 |") or
// writes them side by side ("(()", char_lm's characters).
struct Vocabulary {
    std::vector<std::string> words;  // (V) decode of each token id
    bool separated = false;
};

Vocabulary vocabulary_of(const Task& task) {
    Vocabulary v;
    for (std::int32_t t = 0; t < static_cast<std::int32_t>(task.vocab_size()); ++t) v.words.push_back(task.decode(&t, 1));
    const std::int32_t pair[2] = {0, 0};
    v.separated = task.decode(pair, 2) == v.words[0] + " " + v.words[0];
    return v;
}

std::string printable(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string word_list(const Vocabulary& v) {
    std::string out;
    for (std::size_t i = 0; i < v.words.size() && i < 24; ++i) out += (i ? " " : "") + printable(v.words[i]);
    if (v.words.size() > 24) out += " ...";
    return out;
}

// The inverse of Task::decode: words (or integer ids) for separated tasks, characters otherwise
// (whitespace that is not a token is skipped).
std::vector<std::int32_t> encode_text(const Task& task, const std::string& text) {
    if (task.input() == TaskInput::pixels) {
        fail<ConfigError>("Task.encode: task '", task.name(), "' reads images; it has no tokens to encode");
    }
    if (const auto* text_task = dynamic_cast<const TextTask*>(&task)) return text_task->tokenizer()->encode(text);
    const Vocabulary v = vocabulary_of(task);
    const auto id_of = [&](const std::string& word) -> std::int32_t {
        for (std::size_t i = 0; i < v.words.size(); ++i)
            if (v.words[i] == word) return static_cast<std::int32_t>(i);
        return -1;
    };
    std::vector<std::int32_t> ids;
    if (v.separated) {
        std::istringstream in(text);
        std::string word;
        while (in >> word) {
            std::int32_t id = id_of(word);
            if (id < 0 && word.find_first_not_of("0123456789") == std::string::npos && word.size() < 10) {
                const long n = std::stol(word);
                if (n < static_cast<long>(v.words.size())) id = static_cast<std::int32_t>(n);
            }
            if (id < 0) {
                fail<ValueError>("Task.encode: '", printable(word), "' is not a token of task '", task.name(),
                                 "' (tokens: ", word_list(v), "; or an id in [0, ", v.words.size(), "))");
            }
            ids.push_back(id);
        }
        return ids;
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
        const std::int32_t id = id_of(std::string(1, text[i]));
        if (id >= 0) {
            ids.push_back(id);
        } else if (!std::isspace(static_cast<unsigned char>(text[i]))) {
            fail<ValueError>("Task.encode: character '", printable(std::string(1, text[i])), "' at position ", i,
                             " is not in the alphabet of task '", task.name(), "' (", word_list(v), ")");
        }
    }
    return ids;
}

}  // namespace

TaskBinding* TaskBinding::create(val name) {
    return guarded("new Task", [&] {
        auto binding = std::make_unique<TaskBinding>(make_task(task_name_from_js(name), {}), 0);
        return binding.release();
    }, name);
}

TaskBinding* TaskBinding::create_with_options(val name, val options) {
    return guarded("new Task", [&] {
        const JsOptions opt(options, {"length", "vocab", "k", "context", "horizon", "periods", "features", "trend", "noise",
                                      "drift", "seed"},
                            "new Task");
        TaskOptions o;
        if (opt.has("length")) o.length = opt.size("length", 0);
        if (opt.has("vocab")) o.vocab = opt.size("vocab", 0);
        if (opt.has("k")) o.k = opt.size("k", 0);
        if (opt.has("context")) o.context = opt.size("context", 0);
        if (opt.has("horizon")) o.horizon = opt.size("horizon", 0);
        if (opt.has("features")) o.features = opt.size("features", 0);
        if (opt.has("trend")) o.trend = opt.float32("trend", 0.0f);
        if (opt.has("noise")) o.noise = opt.float32("noise", 0.0f);
        if (opt.has("drift")) o.drift = opt.float32("drift", 0.0f);
        if (opt.has("periods")) {
            const val periods = opt.get("periods");
            if (!periods.instanceof(val::global("Array"))) {
                fail<ConfigError>("new Task: option 'periods' must be an array of positive integers");
            }
            std::vector<std::size_t> p;
            for (std::size_t i = 0, n = periods["length"].as<std::size_t>(); i < n; ++i) {
                p.push_back(size_from_js(periods[i], "new Task", "periods"));
            }
            o.periods = std::move(p);
        }
        auto binding = std::make_unique<TaskBinding>(make_task(task_name_from_js(name), o), opt.size("seed", 0));
        return binding.release();
    }, name, options);
}

namespace {
// The prompt a text task's samples continue: the first held-out document's opening, up to
// kPromptTokens tokens (a Tang poem's <bos> and first line; a few BPE words), leaving at least
// one token of the document out.
constexpr std::size_t kPromptTokens = 7;

std::vector<std::int32_t> prompt_of(const TextCorpus& c) {
    const std::vector<std::int32_t>& doc = c.heldout.front();
    const std::size_t n = std::min(kPromptTokens, doc.size() > 1 ? doc.size() - 1 : doc.size());
    return std::vector<std::int32_t>(doc.begin(), doc.begin() + static_cast<std::ptrdiff_t>(n));
}

std::string text_from_js(const val& text) {
    if (text.isString()) return text.as<std::string>();
    const std::vector<std::uint8_t> bytes = bytes_from_js(text, "Task.fromText", "the text (a string, Uint8Array or ArrayBuffer)");
    return std::string(bytes.begin(), bytes.end());
}
}  // namespace

TaskBinding* TaskBinding::from_text(val text, val options) {
    return guarded("Task.fromText", [&] {
        const JsOptions opt(options, {"name", "tokens", "chars", "merges", "length", "seed"}, "Task.fromText");
        CorpusSpec spec;
        spec.corpus = opt.string("name", "text");
        if (spec.corpus.empty()) fail<ConfigError>("Task.fromText: option 'name' must not be empty");
        spec.tokens = opt.string("tokens", "char");
        spec.chars = opt.size("chars", spec.chars);
        spec.merges = opt.size("merges", spec.merges);
        const std::size_t length = opt.size("length", 64);
        const TextCorpus corpus = text_corpus_from_text(text_from_js(text), spec);
        auto task = std::make_shared<const TextTask>(corpus.task(length));
        auto binding = std::make_unique<TaskBinding>(task, opt.size("seed", 0));
        binding->tokenizer_ = corpus.tokenizer;
        binding->prompt_ = prompt_of(corpus);
        return binding.release();
    }, text, options);
}

val TaskBinding::tokenizer() const {
    return guarded("Task.tokenizer", [&] { return tokenizer_ ? val(TokenizerBinding(tokenizer_)) : val::null(); });
}

val TaskBinding::prompt() const {
    return guarded("Task.prompt", [&] {
        if (!tokenizer_) fail<ConfigError>("Task.prompt: task '", task_->name(), "' is not a text task (Task.fromText)");
        return val(tokenizer_->decode(prompt_));
    });
}

val TaskBinding::name() const {
    return guarded("Task.name", [&] { return val(task_->name()); });
}
val TaskBinding::kind() const {
    return guarded("Task.kind", [&] {
        const TaskKind k = task_->kind();
        return val(std::string(k == TaskKind::sequence ? "sequence" : k == TaskKind::classification ? "classification"
                                                                                                   : "regression"));
    });
}
val TaskBinding::input() const {
    return guarded("Task.input", [&] {
        switch (task_->input()) {
            case TaskInput::pixels: return val(std::string("pixels"));
            case TaskInput::paired: return val(std::string("paired"));
            case TaskInput::values: return val(std::string("values"));
            case TaskInput::tokens: break;
        }
        return val(std::string("tokens"));
    });
}
val TaskBinding::image_size() const {
    return guarded("Task.imageSize", [&] { return val(task_->image_size()); });
}

val TaskBinding::vocab_size() const {
    return guarded("Task.vocabSize", [&] { return val(task_->vocab_size()); });
}
val TaskBinding::seq_len() const {
    return guarded("Task.seqLen", [&] { return val(task_->seq_len()); });
}
val TaskBinding::num_classes() const {
    return guarded("Task.numClasses", [&] { return val(task_->num_classes()); });
}

val TaskBinding::sample(val batch_size) {
    return guarded("Task.sample", [&] { return sample_of(*task_, batch_size, rng_); }, batch_size);
}
val TaskBinding::sample(val batch_size, val seed) const {
    return guarded("Task.sample", [&] {
        Rng rng(size_from_js(seed, "Task.sample", "seed"));
        return sample_of(*task_, batch_size, rng);
    }, batch_size, seed);
}

val TaskBinding::decode(val tokens) const {
    return guarded("Task.decode", [&] {
        bool batched = false;
        const Index2 ids = tokens_from_js(tokens, "Task.decode", "tokens", &batched);
        const std::size_t b = ids.shape(0), t = ids.shape(1);
        if (!batched) return val(task_->decode(ids.data(), t));
        std::vector<std::string> rows;
        for (std::size_t i = 0; i < b; ++i) rows.push_back(task_->decode(ids.data() + i * t, t));
        return strings_to_js(rows);
    }, tokens);
}

val TaskBinding::encode(val text) const {
    return guarded("Task.encode", [&] {
        if (!text.isString()) fail<ValueError>("Task.encode: the text must be a string");
        const std::vector<std::int32_t> ids = encode_text(*task_, text.as<std::string>());
        return int32_array_to_js(ids.data(), ids.size());
    }, text);
}

namespace {
val all_task_names() {
    return guarded("taskNames", [&] { return strings_to_js(task_names()); });
}
}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_task) {
    using emscripten::select_overload;
    using T = TaskBinding;
    emscripten::function("taskNames", &all_task_names);
    emscripten::class_<T>("Task")
        .constructor(&T::create)
        .constructor(&T::create_with_options)
        .class_function("fromText", &T::from_text, emscripten::allow_raw_pointers())
        .function("tokenizer", &T::tokenizer)
        .function("prompt", &T::prompt)
        .function("name", &T::name)
        .function("kind", &T::kind)
        .function("input", &T::input)
        .function("imageSize", &T::image_size)
        .function("vocabSize", &T::vocab_size)
        .function("seqLen", &T::seq_len)
        .function("numClasses", &T::num_classes)
        .function("sample", select_overload<val(val)>(&T::sample))
        .function("sample", select_overload<val(val, val) const>(&T::sample))
        .function("decode", &T::decode)
        .function("encode", &T::encode);
}

}  // namespace attnlab::web
