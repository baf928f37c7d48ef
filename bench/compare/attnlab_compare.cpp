// bench/compare/attnlab_compare.cpp: attnlab's side of the comparison, one program for the native
// build and for WebAssembly (the same source linked against build-wasm-<flavour>/web/libattnlab.a
// by run.sh, run in Node with direct file access: -sNODERAWFS=1).
//
//   attnlab_compare attention --data DIR --sizes 256,1024 --threads 1,2 --seconds 2
//   attnlab_compare train --threads 1,2 --seconds 2
//   attnlab_compare train-tang --threads 1,2 --seconds 2
//   attnlab_compare matmul --sizes 256,512,1024 --threads 1,2 --seconds 2
//   attnlab_compare lstm --sizes 64,128,256,512 --threads 1,2 --seconds 2
//
// attention: attnlab::scaled_dot_product_attention on the shared inputs DIR/attn_n<n>.bin (float32
//   q, k, v, reference, each (H, n, D) = (4, n, 32); written by torch_bench.py prepare), as
//   (B, H, T, D) = (1, 4, n, 32) with no mask and scale 1/sqrt(D). Checked against the reference
//   (max |out - ref| <= 1e-4), then timed: median of repeats after warm-up, as every other
//   system of the comparison.
// train: steps/s of the tiny encoder — EncoderClassifier with 2 post-LN layers,
//   C = 64, H = 4, F = 256, ReLU, sinusoidal positions, mean pooling, 2 classes, dropout 0, on one
//   fixed batch (B = 32, T = 64, vocabulary 16, no padding) with AdamW (lr 1e-3, torch defaults).
//   A step is zero_grad + forward + cross-entropy + backward + optimiser step, nothing else (no
//   clipping, no metrics): the same work as torch_bench.py train. The loss must fall.
// train-tang: tokens/s of the shipped `tang` model's training step (scripts/train_text_models.sh):
//   DecoderLM, 4 pre-LN layers, C = 128, H = 4, F = 512, GELU, RoPE, tied input and output
//   embeddings, V = 4003, dropout 0, on one fixed batch (B = 32, T = 72) of token ids from a
//   fixed generator (the time does not depend on which ids), targets the next ids, AdamW (lr 1e-3,
//   torch defaults). The same work as torch_bench.py train-tang. The loss must fall.
// matmul: attnlab::kernels::matmul_nn, C (n, n) = A (n, n) · B (n, n), fp32, inputs from a
//   fixed generator (the same on both sides is not needed: the time does not depend on values),
//   checked against a double-precision dot product on a few entries; GFLOP/s = 2n³ / time. The
//   reference is OpenBLAS sgemm through torch.mm in torch_bench.py matmul.
// lstm: attnlab::Lstm, one layer, B = 32, I = H = 64, T = each of --sizes: the forward (filling
//   the cache backward needs, as in training) and forward + backward through time to dx and every
//   parameter, with the cache, outputs and gradients reused from call to call. The same work as
//   torch_bench.py lstm (torch.nn.LSTM, x requiring grad). ok: every output and gradient finite.
//   Besides the wall-clock median, cpu_ms is the median process CPU time of a few calls: on a
//   machine shared with other work it is what the code costs, where wall time also counts the
//   time other processes hold the cores (compare it on 1 thread, where no worker waits).
// Prints one JSON object. Why not the Google Benchmark binary: it neither reads shared inputs
// nor checks its output, and it has no encoder training step.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/attention/scaled_dot_product.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"
#include "attnlab/nn/lstm.hpp"
#include "attnlab/train/memory.hpp"
#include "attnlab/train/optimizer.hpp"

#ifndef ATTNLAB_COMPARE_BUILD
#define ATTNLAB_COMPARE_BUILD "native"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr std::size_t kHeads = 4, kHeadDim = 32;  // H, D: Q/K/V are (1, H, n, D)
constexpr double kTolerance = 1e-4;

struct Options {
    std::string command;
    std::string data = "results/data";
    std::vector<std::size_t> sizes{256, 1024, 2048};
    std::vector<std::size_t> threads{1, 2};
    double seconds = 2.0;
};

std::vector<std::size_t> parse_list(const std::string& text) {
    std::vector<std::size_t> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoul(item));
    return out;
}

Options parse_options(int argc, char** argv) {
    Options o;
    if (argc < 2) {
        throw std::invalid_argument(
            "usage: attnlab_compare attention|train|train-tang|matmul|lstm [--data DIR] [--sizes a,b] [--threads a,b] [--seconds s]");
    }
    o.command = argv[1];
    if (o.command != "attention" && o.command != "train" && o.command != "train-tang" && o.command != "matmul" &&
        o.command != "lstm")
        throw std::invalid_argument("unknown command '" + o.command + "' (valid: attention, train, train-tang, matmul, lstm)");
    for (int i = 2; i < argc; i += 2) {
        const std::string key = argv[i];
        if (i + 1 >= argc) throw std::invalid_argument("option " + key + " needs a value");
        const std::string value = argv[i + 1];
        if (key == "--data")
            o.data = value;
        else if (key == "--sizes")
            o.sizes = parse_list(value);
        else if (key == "--threads")
            o.threads = parse_list(value);
        else if (key == "--seconds")
            o.seconds = std::stod(value);
        else
            throw std::invalid_argument("unknown option " + key + " (valid: --data, --sizes, --threads, --seconds)");
    }
    return o;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Timing {
    double ms;
    std::size_t repeats;
};

// Median ms over repeats after `warmup` calls; the repeat count fills about target_seconds.
Timing time_calls(const std::function<void()>& fn, double target_seconds, std::size_t min_repeats = 5,
                  std::size_t max_repeats = 200, std::size_t warmup = 2) {
    const auto start = Clock::now();
    for (std::size_t i = 0; i < warmup; ++i) fn();
    const double per_call = ms_since(start) / double(warmup);
    const auto repeats = static_cast<std::size_t>(
        std::clamp(target_seconds * 1e3 / std::max(per_call, 1e-6), double(min_repeats), double(max_repeats)));
    std::vector<double> times;
    for (std::size_t i = 0; i < repeats; ++i) {
        const auto t0 = Clock::now();
        fn();
        times.push_back(ms_since(t0));
    }
    return {median(times), repeats};
}

// Median process CPU ms of `calls` calls (std::clock: all threads of the process).
double median_cpu_ms(const std::function<void()>& fn, std::size_t calls = 5) {
    std::vector<double> times;
    for (std::size_t i = 0; i < calls; ++i) {
        const std::clock_t start = std::clock();
        fn();
        times.push_back(1e3 * double(std::clock() - start) / CLOCKS_PER_SEC);
    }
    return median(times);
}

// q, k, v, reference: (1, H, n, D) each, from DIR/attn_n<n>.bin.
std::vector<attnlab::Tensor4> load_inputs(const std::string& dir, std::size_t n) {
    const std::string path = dir + "/attn_n" + std::to_string(n) + ".bin";
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path + " (run torch_bench.py prepare)");
    std::vector<attnlab::Tensor4> out;
    for (int i = 0; i < 4; ++i) {
        attnlab::Tensor4 t = attnlab::Tensor4::from_shape({1, kHeads, n, kHeadDim});
        in.read(reinterpret_cast<char*>(t.data()), std::streamsize(t.size() * sizeof(float)));
        if (!in) throw std::runtime_error(path + ": too short for q, k, v, ref of (4, " + std::to_string(n) + ", 32)");
        out.push_back(std::move(t));
    }
    return out;
}

json attention(const Options& o) {
    // The allocator policy PyTorch runs with in run.sh (GLIBC_TUNABLES), so neither side pays
    // page faults for the buffers it frees and allocates again every call.
    attnlab::keep_freed_memory();
    json results = json::array();
    for (std::size_t n : o.sizes) {
        const auto inputs = load_inputs(o.data, n);
        const attnlab::Tensor4 &q = inputs[0], &k = inputs[1], &v = inputs[2], &ref = inputs[3];
        for (std::size_t threads : o.threads) {
            attnlab::set_num_threads(threads);
            const attnlab::Tensor4 out = attnlab::scaled_dot_product_attention(q, k, v);
            double err = 0;
            for (std::size_t i = 0; i < out.size(); ++i) {
                const double d = std::abs(double(out.data()[i]) - double(ref.data()[i]));
                err = std::isnan(d) ? d : std::max(err, d);
            }
            const Timing t = time_calls(
                [&] {
                    attnlab::Tensor4 c = attnlab::scaled_dot_product_attention(q, k, v);
                    if (c.size() != out.size()) throw std::logic_error("output changed size");
                },
                o.seconds);
            results.push_back({{"system", std::string("attnlab-") + ATTNLAB_COMPARE_BUILD},
                               {"variant", "scaled_dot_product_attention"},
                               {"threads", threads},
                               {"n", n},
                               {"ms", t.ms},
                               {"repeats", t.repeats},
                               {"max_abs_err", err},
                               {"ok", err <= kTolerance}});
        }
    }
    return results;
}

json train(const Options& o) {
    constexpr std::size_t B = 32, T = 64, vocab = 16;
    attnlab::ModelConfig config;
    config.kind = attnlab::ModelKind::encoder;
    config.vocab_size = vocab;
    config.max_len = T;
    config.d_model = 64;
    config.num_heads = 4;
    config.num_layers = 2;
    config.ff_dim = 256;
    config.activation = attnlab::Activation::relu;  // nn.TransformerEncoderLayer's default
    config.norm = attnlab::NormPlacement::post;     // norm_first=False
    config.positional = attnlab::PositionalKind::sinusoidal;
    config.pooling = attnlab::Pooling::mean;
    config.num_classes = 2;
    config.dropout = 0.0f;

    // One fixed batch with a label mean pooling can learn: are most tokens in the upper half of
    // the vocabulary?
    attnlab::Rng data_rng(0);
    attnlab::Index2 tokens = attnlab::Index2::from_shape({B, T});  // (B, T)
    for (auto& t : tokens) t = static_cast<std::int32_t>(data_rng.below(vocab));
    attnlab::Index1 labels = attnlab::Index1::from_shape({B});  // (B)
    for (std::size_t b = 0; b < B; ++b) {
        std::size_t upper = 0;
        for (std::size_t t = 0; t < T; ++t) upper += tokens(b, t) >= std::int32_t(vocab / 2);
        labels(b) = upper > T / 2;
    }
    const attnlab::Mask2 no_padding;

    // What attnlab::Trainer does on construction: keep the tensors a step frees for the next
    // step instead of page-faulting them back in, and the heap on huge pages (train/memory.hpp;
    // run.sh gives PyTorch's training step glibc's switch for the same).
    attnlab::keep_freed_memory();
    attnlab::use_huge_pages();
    json results = json::array();
    for (std::size_t threads : o.threads) {
        attnlab::set_num_threads(threads);
        attnlab::Rng rng(1);
        attnlab::EncoderClassifier model(config, rng);
        // torch.optim.AdamW's defaults: betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on all.
        attnlab::AdamW opt;
        std::vector<float> losses;
        // The parameter and gradient views, built once like torch's optimizer's parameter list:
        // the step itself then allocates nothing (tests/alloc).
        const std::vector<attnlab::ParameterView> params = model.parameters(), grads = model.gradients();
        std::size_t parameters = 0;
        for (const auto& p : params) parameters += p.size();
        losses.reserve(4096);
        const Timing t = time_calls(
            [&] {
                model.zero_grad();
                losses.push_back(model.loss_and_backward(tokens, no_padding, labels).loss);
                opt.step(params, grads, 1e-3f);
            },
            o.seconds, 10, 200, 3);
        const bool finite = std::all_of(losses.begin(), losses.end(), [](float l) { return std::isfinite(l); });
        results.push_back({{"system", std::string("attnlab-") + ATTNLAB_COMPARE_BUILD + "-train"},
                           {"variant", "EncoderClassifier + AdamW"},
                           {"threads", threads},
                           {"ms_per_step", t.ms},
                           {"steps_per_s", 1e3 / t.ms},
                           {"repeats", t.repeats},
                           {"first_loss", losses.front()},
                           {"last_loss", losses.back()},
                           {"ok", finite && losses.back() < losses.front()},
                           {"parameters", parameters}});
    }
    return results;
}

json train_tang(const Options& o) {
    constexpr std::size_t B = 32, T = 72, vocab = 4003;
    attnlab::ModelConfig config;
    config.kind = attnlab::ModelKind::decoder;
    config.vocab_size = vocab;
    config.max_len = T;
    config.d_model = 128;
    config.num_heads = 4;
    config.num_layers = 4;
    config.ff_dim = 512;
    config.activation = attnlab::Activation::gelu;
    config.norm = attnlab::NormPlacement::pre;
    config.positional = attnlab::PositionalKind::rope;
    config.tie_weights = true;
    config.dropout = 0.0f;

    // One fixed batch: a stream of ids, each row's targets its tokens one step on.
    attnlab::Rng data_rng(0);
    attnlab::Index2 tokens = attnlab::Index2::from_shape({B, T}), targets = attnlab::Index2::from_shape({B, T});
    for (std::size_t b = 0; b < B; ++b) {
        std::int32_t next = static_cast<std::int32_t>(data_rng.below(vocab));
        for (std::size_t t = 0; t < T; ++t) {
            tokens(b, t) = next;
            next = static_cast<std::int32_t>(data_rng.below(vocab));
            targets(b, t) = next;
        }
    }
    attnlab::keep_freed_memory();
    attnlab::use_huge_pages();
    json results = json::array();
    for (std::size_t threads : o.threads) {
        attnlab::set_num_threads(threads);
        attnlab::Rng rng(1);
        attnlab::DecoderLM model(config, rng);
        attnlab::AdamW opt;
        std::vector<float> losses;
        const std::vector<attnlab::ParameterView> params = model.parameters(), grads = model.gradients();
        std::size_t parameters = 0;
        for (const auto& p : params) parameters += p.size();
        losses.reserve(4096);
        const Timing t = time_calls(
            [&] {
                model.zero_grad();
                losses.push_back(model.loss_and_backward(tokens, targets).loss);
                opt.step(params, grads, 1e-3f);
            },
            o.seconds, 5, 200, 2);
        const bool finite = std::all_of(losses.begin(), losses.end(), [](float l) { return std::isfinite(l); });
        results.push_back({{"system", std::string("attnlab-") + ATTNLAB_COMPARE_BUILD + "-train-tang"},
                           {"variant", "DecoderLM (tang) + AdamW"},
                           {"threads", threads},
                           {"ms_per_step", t.ms},
                           {"steps_per_s", 1e3 / t.ms},
                           {"tokens_per_s", 1e3 * static_cast<double>(B * T) / t.ms},
                           {"repeats", t.repeats},
                           {"first_loss", losses.front()},
                           {"last_loss", losses.back()},
                           {"ok", finite && losses.back() < losses.front()},
                           {"parameters", parameters}});
    }
    return results;
}

json matmul(const Options& o) {
    json results = json::array();
    for (std::size_t n : o.sizes) {
        std::vector<float> a(n * n), b(n * n), c(n * n);
        attnlab::Rng rng(7);
        for (auto& x : a) x = rng.normal();
        for (auto& x : b) x = rng.normal();
        for (std::size_t threads : o.threads) {
            attnlab::set_num_threads(threads);
            const auto run = [&] { attnlab::kernels::matmul_nn(a.data(), n, b.data(), n, c.data(), n, n, n, n); };
            run();
            double err = 0.0;  // relative to the sum of |terms| of a few entries
            for (std::size_t probe = 0; probe < 16; ++probe) {
                const std::size_t i = (probe * 7919) % n, j = (probe * 104729) % n;
                double want = 0.0, magnitude = 0.0;
                for (std::size_t p = 0; p < n; ++p) {
                    want += double(a[i * n + p]) * b[p * n + j];
                    magnitude += std::abs(double(a[i * n + p]) * b[p * n + j]);
                }
                err = std::max(err, std::abs(c[i * n + j] - want) / magnitude);
            }
            const Timing t = time_calls(run, o.seconds);
            results.push_back({{"system", std::string("attnlab-") + ATTNLAB_COMPARE_BUILD + "-matmul"},
                               {"variant", "kernels::matmul_nn"},
                               {"threads", threads},
                               {"n", n},
                               {"ms", t.ms},
                               {"gflops", 2.0 * double(n) * n * n / t.ms / 1e6},
                               {"repeats", t.repeats},
                               {"max_rel_err", err},
                               {"ok", err <= 1e-5}});
        }
    }
    return results;
}

json lstm(const Options& o) {
    constexpr std::size_t B = 32, I = 64, H = 64;
    attnlab::keep_freed_memory();
    json results = json::array();
    for (std::size_t T : o.sizes) {
        attnlab::Rng rng(1);
        const attnlab::Lstm layer({I, H, 1, true}, rng);
        attnlab::Tensor3 x = attnlab::Tensor3::from_shape({B, T, I});     // (B, T, I)
        attnlab::Tensor3 dout = attnlab::Tensor3::from_shape({B, T, H});  // (B, T, H)
        attnlab::Rng data(2);
        for (auto& v : x) v = data.normal();
        for (auto& v : dout) v = data.normal();
        attnlab::LstmCache cache;
        attnlab::LstmOutput out;
        attnlab::LstmGrad grads(layer);
        attnlab::Tensor3 dx;
        const auto finite = [](const float* p, std::size_t n) { return std::all_of(p, p + n, [](float v) { return std::isfinite(v); }); };
        for (std::size_t threads : o.threads) {
            attnlab::set_num_threads(threads);
            for (const bool backward : {false, true}) {
                const auto run = [&] {
                    layer.forward(x, nullptr, nullptr, cache, out);
                    if (backward) layer.backward(dout, nullptr, nullptr, cache, grads, dx, nullptr, nullptr);
                };
                const Timing t = time_calls(run, o.seconds);
                const double cpu_ms = median_cpu_ms(run);
                bool ok = finite(out.output.data(), out.output.size());
                if (backward) ok = ok && finite(dx.data(), dx.size()) && finite(grads.layers[0].weight_hh.data(), grads.layers[0].weight_hh.size());
                results.push_back({{"system", std::string("attnlab-") + ATTNLAB_COMPARE_BUILD + "-lstm"},
                                   {"variant", backward ? "Lstm forward+backward" : "Lstm forward"},
                                   {"pass", backward ? "forward+backward" : "forward"},
                                   {"threads", threads},
                                   {"T", T},
                                   {"ms", t.ms},
                                   {"cpu_ms", cpu_ms},
                                   {"repeats", t.repeats},
                                   {"ok", ok}});
            }
        }
    }
    return results;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Options o = parse_options(argc, argv);
        const json results = o.command == "attention" ? attention(o)
                             : o.command == "train"   ? train(o)
                             : o.command == "train-tang" ? train_tang(o)
                             : o.command == "lstm"    ? lstm(o)
                                                      : matmul(o);
        std::cout << json{{"system", std::string("attnlab-") + ATTNLAB_COMPARE_BUILD}, {"results", results}}.dump()
                  << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "attnlab_compare: " << e.what() << "\n";
        return 1;
    }
}
