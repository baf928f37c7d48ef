// attnlab_soak: the native half of scripts/soak.sh. Runs the engine's everyday mix in one process
// for a given time and samples the process's resident memory (VmRSS from /proc/self/status) at a
// fixed interval, together with the bytes malloc has handed out and not had back, so that memory
// any of the calls keeps for good shows as growth over the run.
//
// The mix, repeated until the time is up:
//   * a long-lived decoder (reverse task) keeps training, 50 steps per round, so the steady
//     training loop runs for the whole soak;
//   * each round also builds a short-lived model of the other kind in turn (decoder on copy,
//     encoder on brackets), trains it 10 steps, evaluates it, saves it, loads the bytes back
//     (Model::load and load_parameters), takes its attention maps and a trace of layer 0,
//     generates from the decoder, and destroys everything.
//
//   attnlab_soak --seconds 1800 --interval 60 --threads 2 --csv build-soak/native.csv
//
// CSV columns: elapsed_s, rss_mib, heap_used_mib, steps (training steps done in total), rounds. The bound on
// growth is checked by scripts/soak.sh, which states it; this program only measures.
//
// Allocator setting (this program only, not the library): glibc malloc gives each thread that
// contends for the heap an arena of its own (up to 8 per core), and each arena keeps its freed
// blocks mapped (train/memory.hpp's keep_freed_memory()). The short-lived models of each round
// are allocated by whichever thread gets there, so the process's resident memory creeps as the
// arenas fill one by one while the bytes in use stay flat: RSS would then measure glibc's arena
// count, not the engine. One arena (mallopt(M_ARENA_MAX, 1), set before any thread starts) makes
// RSS follow the engine's own peak, so a bound on it means something; the bytes in use
// (mallinfo2, summed over all arenas either way) stay the exact leak measure.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <malloc.h>

#include "attnlab/core/thread_pool.hpp"
#include "attnlab/facade/model.hpp"
#include "attnlab/train/trainer.hpp"

namespace {

// Resident set size of this process in MiB, from /proc/self/status (Linux).
double rss_mib() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
    }
    throw std::runtime_error("attnlab_soak: no VmRSS line in /proc/self/status");
}

// Bytes malloc has handed out and not had back (glibc's mallinfo2: arena blocks in use plus
// mmapped blocks), in MiB: growth here is memory the program holds, not the allocator's caching.
double heap_used_mib() {
    const struct mallinfo2 m = mallinfo2();
    return static_cast<double>(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
}

attnlab::ModelConfig decoder_config(const attnlab::Task& task) {
    attnlab::ModelConfig c;
    c.kind = attnlab::ModelKind::decoder;
    c.vocab_size = task.vocab_size();
    c.max_len = 32;
    c.d_model = 32;
    c.num_heads = 4;
    c.num_layers = 2;
    c.ff_dim = 128;
    c.positional = attnlab::PositionalKind::rope;
    return c;
}

attnlab::ModelConfig encoder_config(const attnlab::Task& task) {
    attnlab::ModelConfig c;
    c.kind = attnlab::ModelKind::encoder;
    c.vocab_size = task.vocab_size();
    c.num_classes = task.num_classes();
    c.max_len = 32;
    c.d_model = 16;
    c.num_heads = 2;
    c.num_layers = 1;
    c.ff_dim = 64;
    return c;
}

// One short-lived model through every call the page and the CLI make; everything it creates is
// destroyed on return. Returns the training steps it did.
std::size_t short_lived_round(std::size_t round) {
    const bool decoder = round % 2 == 0;
    attnlab::TaskOptions task_options;
    task_options.length = decoder ? 4 : 8;
    const auto task = attnlab::make_task(decoder ? "copy" : "brackets", task_options);
    attnlab::Model model(decoder ? decoder_config(*task) : encoder_config(*task), round + 1);
    attnlab::TrainerOptions options;
    options.batch_size = 16;
    options.warmup_steps = 5;
    options.seed = round + 1;
    attnlab::Trainer trainer(model, *task, options);
    constexpr std::size_t kSteps = 10;
    attnlab::StepMetrics m;
    for (std::size_t i = 0; i < kSteps; ++i) trainer.step(m);
    trainer.evaluate(2);

    const std::vector<std::uint8_t> bytes = model.save();
    attnlab::Model again = attnlab::Model::load(bytes);
    again.load_parameters(bytes);

    attnlab::Rng rng(round);
    const attnlab::Batch batch = task->sample(2, rng);  // tokens (2, T)
    again.attention_maps(batch.tokens, batch.padding);
    again.trace_layer(batch.tokens, 0, batch.padding);
    if (decoder) {
        const std::vector<std::int32_t> prompt(batch.tokens.data(), batch.tokens.data() + 5);
        again.decoder().generate(prompt, 4, {});
    }
    return kSteps;
}

struct Flags {
    double seconds = 120, interval = 10;
    std::size_t threads = 2;
    std::string csv;
};

Flags parse(int argc, char** argv) {
    Flags f;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) throw std::runtime_error("attnlab_soak: flag '" + flag + "' needs a value");
        const char* value = argv[++i];
        if (flag == "--seconds") f.seconds = std::strtod(value, nullptr);
        else if (flag == "--interval") f.interval = std::strtod(value, nullptr);
        else if (flag == "--threads") f.threads = std::strtoul(value, nullptr, 10);
        else if (flag == "--csv") f.csv = value;
        else throw std::runtime_error("attnlab_soak: unknown flag '" + flag + "' (valid: --seconds, --interval, --threads, --csv)");
    }
    if (!(f.seconds > 0) || !(f.interval > 0) || f.threads == 0 || f.csv.empty()) {
        throw std::runtime_error("attnlab_soak: --seconds and --interval must be positive, --threads at least 1, --csv set");
    }
    return f;
}

}  // namespace

int main(int argc, char** argv) {
    // One malloc arena for every thread (see the top of this file); before the pool's threads exist.
    if (mallopt(M_ARENA_MAX, 1) != 1) {
        std::cerr << "attnlab_soak: mallopt(M_ARENA_MAX, 1) was refused\n";
        return 2;
    }
    try {
        const Flags flags = parse(argc, argv);
        attnlab::set_num_threads(flags.threads);
        std::ofstream csv(flags.csv);
        if (!csv) throw std::runtime_error("attnlab_soak: cannot write '" + flags.csv + "'");
        csv << "elapsed_s,rss_mib,heap_used_mib,steps,rounds\n";

        attnlab::TaskOptions task_options;
        task_options.length = 4;
        task_options.vocab = 6;
        const auto task = attnlab::make_task("reverse", task_options);
        attnlab::Model model(decoder_config(*task), 1);
        attnlab::TrainerOptions options;
        options.warmup_steps = 10;
        attnlab::Trainer trainer(model, *task, options);
        attnlab::StepMetrics m;

        using clock = std::chrono::steady_clock;
        const auto start = clock::now();
        auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
        std::size_t steps = 0, rounds = 0;
        double next_sample = 0;
        for (;;) {
            const double now = elapsed();
            if (now >= next_sample) {
                csv << static_cast<long>(now + 0.5) << ',' << rss_mib() << ',' << heap_used_mib() << ',' << steps << ',' << rounds << '\n' << std::flush;
                next_sample += flags.interval;
            }
            if (now >= flags.seconds) break;
            for (int i = 0; i < 50; ++i) trainer.step(m);
            steps += 50;
            steps += short_lived_round(rounds++);
        }
        std::printf("attnlab_soak: %zu steps, %zu rounds in %.0f s; final eval loss of the long-lived model %.4f\n", steps,
                    rounds, elapsed(), trainer.evaluate(4).loss);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 2;
    }
}
