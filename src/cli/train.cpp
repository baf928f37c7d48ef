// `attnlab train`, `attnlab eval`, `attnlab generate`: train a tiny Transformer on a generated
// task, evaluate a checkpoint, and sample from a decoder checkpoint.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "args.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/io/safetensors.hpp"
#include "checkpoint_file.hpp"
#include "corpus.hpp"
#include "pretrained.hpp"
#include "attnlab/train/text_task.hpp"
#include "commands.hpp"
#include "engine_flags.hpp"
#include "model_flags.hpp"
#include "text_flags.hpp"

namespace attnlab::cli {
namespace {

std::string format_seconds(double s) {
    char buf[32];
    if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
    else std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
    return buf;
}

// One status line: "step 1200/3000 [#######.......] loss 0.1234 acc 97.1% 85.2 steps/s ETA 21s".
std::string progress_line(std::size_t done, std::size_t total, float loss, float acc, double rate) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * static_cast<double>(done) / static_cast<double>(total));
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    char buf[200];
    std::snprintf(buf, sizeof buf, "step %zu/%zu [%s] loss %.4f acc %5.1f%% %6.1f steps/s ETA %s", done, total,
                  bar.c_str(), loss, 100.0 * acc, rate,
                  format_seconds(rate > 0 ? static_cast<double>(total - done) / rate : 0).c_str());
    return buf;
}

// "model mse 0.0123, mae 0.0876; seasonal-naive baseline mse 0.0456, mae 0.1702 (the model beats it)"
std::string regression_summary(const EvalResult& e) {
    char line[256];
    const bool beats = e.loss < e.baseline_mse;
    std::snprintf(line, sizeof line, "model mse %.4f, mae %.4f; seasonal-naive baseline mse %.4f, mae %.4f (%s)",
                  e.loss, e.mae, e.baseline_mse, e.baseline_mae,
                  beats ? "the model beats it" : "the model does not beat it");
    return line;
}

}  // namespace

namespace {

// The run's first line: the task, the model and its size, the threads (and, for emulated
// precision, the attention's formats and the loss scale).
void print_run(const Task& task, const ModelConfig& config, const Model& model, const TrainerOptions& options) {
    const std::string kind(model_kind_name(config.kind));
    if (config.is_forecaster()) {
        std::printf("attnlab train: task %s (context %zu, horizon %zu, %zu feature%s), %s forecaster with %zu layers, "
                    "d_model %zu%s, pe %s; %zu parameters; %zu threads\n",
                    task.name().c_str(), task.seq_len(), config.horizon, config.num_features,
                    config.num_features == 1 ? "" : "s", std::string(architecture_name(config.architecture)).c_str(),
                    config.num_layers, config.d_model,
                    config.architecture == Architecture::lstm
                        ? ""
                        : (", " + std::to_string(config.num_heads) + " heads, ff " + std::to_string(config.ff_dim)).c_str(),
                    config.architecture == Architecture::lstm && config.positional != PositionalKind::time
                        ? "none (an lstm reads in order; pe time adds the timestamps)"
                        : std::string(positional_name(config.positional)).c_str(),
                    model.num_parameters(), num_threads());
    } else if (config.is_image()) {
        std::printf("attnlab train: task %s (%zux%zu images, %zu classes), %s with %zu layers%s, d_model %zu, %zu heads, "
                    "ff %zu, patch %zu, pe %s, %s-LN; %zu parameters; %zu threads\n",
                    task.name().c_str(), config.image_size, config.image_size, config.num_classes,
                    std::string(architecture_name(config.architecture)).c_str(), config.num_layers,
                    config.architecture == Architecture::swin ? " per stage" : "", config.d_model, config.num_heads,
                    config.ff_dim, config.patch_size, std::string(positional_name(config.positional)).c_str(),
                    std::string(norm_placement_name(config.norm)).c_str(), model.num_parameters(), num_threads());
    } else if (config.is_crossmodal()) {
        std::printf("attnlab train: task %s (%zux%zu images, captions of %zu words, %zu classes), crossmodal with %zu "
                    "text and %zu image layers, d_model %zu, common width %zu, %zu heads, ff %zu, patch %zu, loss %s; "
                    "%zu parameters; %zu threads\n",
                    task.name().c_str(), config.image_size, config.image_size, task.seq_len(), config.num_classes,
                    config.num_layers, config.num_layers, config.d_model, config.common_width(), config.num_heads,
                    config.ff_dim, config.patch_size, std::string(pair_loss_name(config.loss)).c_str(),
                    model.num_parameters(), num_threads());
    } else if (config.architecture == Architecture::lstm) {
        std::printf("attnlab train: task %s (vocab %zu, length %zu), lstm %s with %zu layers, hidden %zu; "
                    "%zu parameters; %zu threads\n",
                    task.name().c_str(), task.vocab_size(), task.seq_len(), kind.c_str(), config.num_layers,
                    config.d_model, model.num_parameters(), num_threads());
    } else {
        std::printf("attnlab train: task %s (vocab %zu, length %zu), %s with %zu layers, d_model %zu, %zu heads "
                    "(%zu kv), ff %zu, pe %s, %s-LN, scaling %s; %zu parameters; %zu threads\n",
                    task.name().c_str(), task.vocab_size(), task.seq_len(), kind.c_str(), config.num_layers,
                    config.d_model, config.num_heads, config.kv_heads(), config.ff_dim,
                    std::string(positional_name(config.positional)).c_str(),
                    std::string(norm_placement_name(config.norm)).c_str(), config.scale_attention ? "on" : "off",
                    model.num_parameters(), num_threads());
        if (!config.precision_options().is_plain()) {
            std::printf("  attention in %s, softmax %s, %s; loss scale %s\n",
                        std::string(precision_name(config.precision)).c_str(),
                        std::string(softmax_precision_name(config.softmax_precision)).c_str(),
                        config.stable_softmax ? "stable (max subtracted)" : "naive exp(s)/sum exp(s)",
                        options.loss_scale.to_string().c_str());
        }
    }
}

// What one run of the training loop did.
struct TrainLoopResult {
    std::size_t done = 0;     // steps taken (fewer than asked when the target accuracy was reached)
    std::size_t skipped = 0;  // dynamic loss scaling: steps whose gradients overflowed
    EvalResult last_eval;
    double seconds = 0;
};

// The loop's settings from the flags.
struct TrainLoopFlags {
    std::size_t steps, eval_every, eval_batches;
    double target;       // stop once evaluation accuracy reaches it (0: never)
    bool quiet, tty;     // no progress bar; stderr is a terminal (the bar redraws in place)
    std::ofstream& log;  // per-step CSV rows (left unopened without --log)
};

// Steps the trainer, with a smoothed progress line, a CSV row per step, evaluations every
// eval_every steps and at the end, and an early stop at the target accuracy.
TrainLoopResult train_loop(Trainer& trainer, const ModelConfig& config, const TrainLoopFlags& f) {
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    const std::size_t steps = f.steps, eval_every = f.eval_every, eval_batches = f.eval_batches;
    const double target = f.target;
    const bool quiet = f.quiet, tty = f.tty;
    std::ofstream& log = f.log;
    double smooth_loss = 0, smooth_acc = 0;
    EvalResult last_eval;
    std::size_t done = 0;
    StepMetrics m;  // reused: the step writes into it without allocating
    std::size_t skipped = 0;  // dynamic loss scaling: steps whose gradients overflowed
    for (; done < steps;) {
        trainer.step(m);
        ++done;
        skipped += m.skipped;
        smooth_loss = done == 1 ? m.loss : 0.95 * smooth_loss + 0.05 * m.loss;
        smooth_acc = done == 1 ? m.accuracy : 0.95 * smooth_acc + 0.05 * m.accuracy;
        if (log) {
            log << m.step << ',' << m.loss << ',' << m.accuracy << ',' << m.grad_norm << ',' << m.max_score << ','
                << m.lr << ',' << m.ms << '\n';
        }
        const bool evaluate_now = (eval_every > 0 && done % eval_every == 0) || done == steps;
        if (!quiet && (tty ? (done % 10 == 0 || done == steps) : (done % 250 == 0 || done == steps))) {
            const std::string line = progress_line(done, steps, static_cast<float>(smooth_loss),
                                                   static_cast<float>(smooth_acc), done / elapsed());
            std::fprintf(stderr, tty ? "\r%s" : "%s\n", line.c_str());
        }
        if (evaluate_now) {
            last_eval = trainer.evaluate(eval_batches);
            if (!quiet && tty) std::fprintf(stderr, "\n");
            if (config.is_forecaster()) {
                std::printf("  eval @ step %zu: %s, %.1fs\n", done, regression_summary(last_eval).c_str(), elapsed());
            } else {
                std::printf("  eval @ step %zu: loss %.4f, accuracy %.2f%% (%zu targets), %.1fs\n", done, last_eval.loss,
                            100.0 * last_eval.accuracy, last_eval.count, elapsed());
            }
            std::fflush(stdout);
            if (target > 0 && last_eval.accuracy >= target) {
                std::printf("  reached the target accuracy %.2f%%; stopping\n", 100.0 * target);
                break;
            }
        }
    }
    return TrainLoopResult{done, skipped, last_eval, elapsed()};
}

// The run's last lines: the steps, the time and the final evaluation (and the loss scale's).
void print_done(const TrainLoopResult& r, const ModelConfig& config, const TrainerOptions& options,
                const Trainer& trainer) {
    const std::size_t done = r.done;
    const EvalResult& last_eval = r.last_eval;
    if (config.is_forecaster()) {
        std::printf("done: %zu steps in %.1fs (%.1f steps/s); final eval %s\n", done, r.seconds, done / r.seconds,
                    regression_summary(last_eval).c_str());
    } else {
        std::printf("done: %zu steps in %.1fs (%.1f steps/s); final eval loss %.4f, accuracy %.2f%%\n", done,
                    r.seconds, done / r.seconds, last_eval.loss, 100.0 * last_eval.accuracy);
    }
    if (options.loss_scale.dynamic) {
        std::printf("dynamic loss scale: %zu steps skipped on overflow, scale now %g\n", r.skipped,
                    static_cast<double>(trainer.loss_scale()));
    }
}

}  // namespace

int run_train(int argc, char** argv) {
    Args args("train", "Trains a tiny Transformer on a generated task and reports loss and accuracy.\n"
                       "Classification tasks (brackets) train an encoder classifier, the others a decoder LM.\n"
                       "example: attnlab train --task reverse --layers 2 --d-model 64 --heads 4 --pe rope \\\n"
                       "           --norm pre --steps 3000 --seed 1 --save model.safetensors");
    add_task_flags(args);
    add_model_flags(args);
    add_training_flags(args);
    add_engine_flags(args);
    args.add("save", "", "write the trained model here (safetensors)");
    args.add("tokenizer", "", "a tokenizer directory the saved checkpoint carries (its ids must fit the model's vocabulary)");
    args.add("eval-every", "500", "evaluate on held-out batches every N steps (0 = only at the end)");
    args.add("eval-batches", "8", "batches per evaluation");
    args.add("target-accuracy", "0", "stop early once evaluation accuracy reaches this (0..1; 0 = never)");
    args.add("log", "", "write per-step metrics as CSV to this file");
    args.add_switch("quiet", "no progress bar");
    add_corpus_flags(args);
    if (!args.parse(argc, argv, 2)) return 0;
    apply_engine_flags(args);

    std::optional<TextCorpus> corpus;
    const std::optional<CorpusSpec> spec = corpus_given(args) ? std::optional<CorpusSpec>(corpus_spec(args)) : std::nullopt;
    if (spec) {
        corpus = make_text_corpus(*spec);
        std::printf("attnlab train: corpus %s: %zu training and %zu held-out documents, %zu training tokens, %s "
                    "vocabulary of %zu\n",
                    corpus->name.c_str(), corpus->train.size(), corpus->heldout.size(),
                    [&] { std::size_t n = 0; for (const auto& d : corpus->train) n += d.size(); return n; }(),
                    std::string(corpus->tokenizer->kind()).c_str(), corpus->tokenizer->vocab_size());
    }
    const std::unique_ptr<Task> task =
        corpus ? std::make_unique<TextTask>(corpus->task(corpus_length(args))) : task_from(args);
    const ModelConfig config = model_config(args, *task);
    const TrainerOptions options = trainer_options(args);
    Model model(config, options.seed);
    if (corpus) model.set_tokenizer(corpus->tokenizer);
    apply_tokenizer_flag(args, model);
    Trainer trainer(model, *task, options);
    const std::size_t steps = args.get_size("steps");
    const std::size_t eval_every = args.get_size("eval-every");
    const std::size_t eval_batches = std::max<std::size_t>(1, args.get_size("eval-batches"));
    const double target = args.get_double("target-accuracy");
    const bool quiet = args.get_switch("quiet");
    const bool tty = isatty(fileno(stderr));

    std::ofstream log;
    if (!args.get("log").empty()) {
        log.open(args.get("log"));
        if (!log) fail<IoError>("attnlab train: cannot write --log file '", args.get("log"), "'");
        log << "step,loss,accuracy,grad_norm,max_score,lr,ms\n";
    }
    print_run(*task, config, model, options);
    const TrainLoopResult r = train_loop(trainer, config, {steps, eval_every, eval_batches, target, quiet, tty, log});
    print_done(r, config, options, trainer);
    if (corpus) {
        const TextModelReport report = save_and_evaluate(model, *spec, *corpus, task->seq_len(), args, args.get("save"));
        write_stats(args, *corpus, model, report, r.done, r.seconds);
        return 0;
    }
    if (!args.get("save").empty()) {
        write_checkpoint(model, args, args.get("save"));
        std::printf("saved %s\n", args.get("save").c_str());
    }
    return 0;
}

int run_eval(int argc, char** argv) {
    Args args("eval", "Evaluates a saved model on held-out batches of its task.\n"
                      "example: attnlab eval --model model.safetensors");
    args.add("model", "", "checkpoint written by attnlab train --save");
    add_task_flags(args);
    add_engine_flags(args);
    args.add("batches", "16", "evaluation batches");
    args.add("batch", "32", "sequences per batch");
    args.add("seed", "12345", "seed of the evaluation batches");
    args.add("data", "data", "folder of the corpora, for a model trained with --corpus (scripts/fetch_data.sh)");
    if (!args.parse(argc, argv, 2)) return 0;
    apply_engine_flags(args);
    if (!args.get("model").empty()) {
        const StoredCorpus stored = stored_corpus(read_file_bytes(args.get("model"), "checkpoint"), args.get("data"));
        if (stored.present) {
            Model model = Model::load(read_file_bytes(args.get("model"), "checkpoint"));
            return eval_text_model(model, stored, args.get("model"));
        }
    }
    LoadedCheckpoint loaded = read_checkpoint(args);
    TrainerOptions options;
    options.batch_size = args.get_size("batch");
    options.warmup_steps = 0;
    options.track_attention = false;
    Trainer trainer(loaded.model, *loaded.task, options);
    const EvalResult e = trainer.evaluate(args.get_size("batches"), static_cast<std::uint64_t>(args.get_int("seed")));
    if (loaded.model.is_forecaster()) {
        std::printf("%s on task %s: %s over %zu forecast values\n", args.get("model").c_str(),
                    loaded.task->name().c_str(), regression_summary(e).c_str(), e.count);
    } else {
        std::printf("%s on task %s: loss %.4f, accuracy %.2f%% over %zu targets\n", args.get("model").c_str(),
                    loaded.task->name().c_str(), e.loss, 100.0 * e.accuracy, e.count);
    }
    return 0;
}

int run_generate(int argc, char** argv) {
    Args args("generate", "Continues a prompt with a saved decoder model (greedy or sampled, KV-cached).\n"
                          "With a tokenizer (the checkpoint's own, or --tokenizer DIR) the prompt is text and so is the output.\n"
                          "Without --prompt/--text it samples prompts from the model's task and shows the expected answer.\n"
                          "examples: attnlab generate --model reverse.safetensors --samples 3\n"
                          "          attnlab generate --model charlm.safetensors --text \"The \" --max-new 200 --temperature 0.8\n"
                          "          attnlab generate --model poems.safetensors --prompt \"床前明月光\" --max-new 20 --seed 1");
    args.add("model", "", "decoder checkpoint written by attnlab train --save, or a GPT-2 model.safetensors");
    args.add("config", "", "config.json of a GPT-2 checkpoint (without it the sizes come from the shapes)");
    add_task_flags(args);
    add_engine_flags(args);
    args.add("tokenizer", "", "directory of a tokenizer's files (vocab.json + merges.txt, vocab.txt), replacing the checkpoint's");
    args.add("prompt", "", "the prompt: text when the model has a tokenizer, else space-separated token ids");
    args.add("text", "", "prompt as text (character-level tasks, or any model with a tokenizer)");
    args.add("max-new", "0", "tokens to generate (0 = the answer length of the task; 20 with a tokenizer)");
    args.add("temperature", "0", "0 = greedy, > 0 samples softmax(logits / temperature)");
    args.add("samples", "3", "prompts to sample from the task when no prompt is given");
    args.add("seed", "1", "seed of the sampling and of the sampled prompts");
    if (!args.parse(argc, argv, 2)) return 0;
    apply_engine_flags(args);
    LoadedCheckpoint loaded = read_checkpoint(args, /*task_free=*/true, args.get("config"));
    Model& lm = loaded.model;
    if (lm.is_forecaster()) {
        fail<ConfigError>("attnlab generate: --model holds a forecaster; it forecasts values and has no tokens to "
                          "generate (attnlab eval compares its forecasts with the seasonal-naive baseline)");
    }
    if (!lm.is_decoder()) fail<ConfigError>("attnlab generate: --model holds an encoder classifier, not a decoder");
    GenerateOptions gen;
    gen.temperature = args.get_float("temperature");
    gen.seed = static_cast<std::uint64_t>(args.get_int("seed"));

    if (const text::Tokenizer* tokenizer = apply_tokenizer_flag(args, lm)) {
        if (args.given("prompt") && args.given("text")) fail<ConfigError>("attnlab generate: give --prompt or --text, not both");
        const std::string& text = args.given("text") ? args.get("text") : args.get("prompt");
        if (text.empty()) fail<ConfigError>("attnlab generate: the model has a tokenizer; give the prompt as --prompt TEXT");
        const std::size_t n = args.get_size("max-new") == 0 ? 20 : args.get_size("max-new");
        if (tokenizer->begin_id()) {
            // <bos> + the prompt in the model's script, until <eos>, answered in the prompt's script.
            std::printf("%s%s\n", text.c_str(), continue_text(lm, text, n, gen).c_str());
            return 0;
        }
        const std::vector<std::int32_t> ids = tokenizer->encode(text);
        if (ids.empty()) fail<ConfigError>("attnlab generate: the prompt \"", text, "\" has no tokens");
        const GenerateResult r = lm.generate(ids, n, gen);
        std::printf("%s\n", tokenizer->decode(r.tokens).c_str());
        return 0;
    }
    std::vector<std::int32_t> prompt;
    if (!loaded.task) {
        // A GPT-2 checkpoint without a tokenizer: the prompt and the output are token ids.
        if (args.get("prompt").empty()) {
            fail<ConfigError>("attnlab generate: a GPT-2 checkpoint needs --tokenizer DIR and --prompt TEXT, or --prompt with token ids");
        }
        std::istringstream in(args.get("prompt"));
        for (long long id; in >> id;) prompt.push_back(static_cast<std::int32_t>(id));
        if (!in.eof()) fail<ConfigError>("attnlab generate: --prompt must be space-separated integers");
        const std::size_t n = args.get_size("max-new") == 0 ? 20 : args.get_size("max-new");
        const GenerateResult r = lm.generate(prompt, n, gen);
        for (std::size_t i = 0; i < r.tokens.size(); ++i) std::printf("%s%d", i ? " " : "", r.tokens[i]);
        std::printf("\n");
        return 0;
    }
    const Task& task = *loaded.task;
    if (!args.get("text").empty()) {
        prompt = encode_text(task, args.get("text"));
    } else if (!args.get("prompt").empty()) {
        std::istringstream in(args.get("prompt"));
        for (long long id; in >> id;) prompt.push_back(static_cast<std::int32_t>(id));
        if (!in.eof()) fail<ConfigError>("attnlab generate: --prompt must be space-separated integers");
    }
    if (!prompt.empty()) {
        const std::size_t n = args.get_size("max-new") == 0 ? task.seq_len() : args.get_size("max-new");
        const GenerateResult r = lm.generate(prompt, n, gen);
        std::printf("%s\n", task.decode(r.tokens.data(), r.tokens.size()).c_str());
        return 0;
    }
    // Prompts from the task: everything up to the first counted target, the rest is the answer.
    Rng rng(gen.seed);
    std::size_t right = 0, total = 0;
    for (std::size_t s = 0; s < args.get_size("samples"); ++s) {
        const Batch b = task.sample(1, rng);
        const std::size_t t = b.tokens.shape(1);
        std::size_t first = 0;
        while (first < t && b.targets(0, first) < 0) ++first;
        if (first == t) fail<ConfigError>("attnlab generate: task ", task.name(), " has no answer to generate");
        std::vector<std::int32_t> p(b.tokens.data(), b.tokens.data() + first + 1);
        std::vector<std::int32_t> expected;
        for (std::size_t i = first; i < t; ++i) expected.push_back(b.targets(0, i));
        const std::size_t n = args.get_size("max-new") == 0 ? expected.size() : args.get_size("max-new");
        const GenerateResult r = lm.generate(p, n, gen);
        const std::vector<std::int32_t> got(r.tokens.begin() + static_cast<std::ptrdiff_t>(p.size()), r.tokens.end());
        std::size_t ok = 0;
        for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i) ok += got[i] == expected[i];
        right += ok;
        total += expected.size();
        std::printf("prompt    %s\ngenerated %s\nexpected  %s   (%zu/%zu right)\n\n", task.decode(p.data(), p.size()).c_str(),
                    task.decode(got.data(), got.size()).c_str(), task.decode(expected.data(), expected.size()).c_str(), ok,
                    expected.size());
    }
    std::printf("%zu/%zu answer tokens right\n", right, total);
    return 0;
}

}  // namespace attnlab::cli
