// §5.3: sparse, windowed and linear attention trade reach for cost. Full attention compares every
// query with every key, O(n²) work; a sliding window of W keys and BigBird's block layout keep
// O(n·W) pairs; kernelised linear attention never forms the (T, S) weights, O(n). The cost is
// what they can see: a relation n/2 positions back lies outside a window, mostly outside the
// block layout, and linear attention's feature map blurs which key is which. For each length n
// the experiment times one causal attention layer per variant, reads the bytes its cache keeps
// for backward, and trains a one-block decoder on k_back with k = n/2.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/flop_counter.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kVariantsClaim =
    "§5.3: sparse, windowed and linear attention cut the O(n²) cost towards O(n), and pay in accuracy on relations "
    "they cannot reach";

// The English templates of the conclusion and the timing line (Result::conclusion_message).
const MessageTemplates& variants_messages() {
    static const MessageTemplates m = {
        {"no_full", "full attention was not run: nothing to compare with"},
        {"conclusion",
         "{verdict}: at n = {n} full runs {mflop} MFLOP (~n^{slope}), keeps {kib} KiB and reaches "
         "{accuracy} on k_back (k = n/2){others}"},
        {"held", "the claim held"},
        {"partly_work", "half the claim held: less work, but not every variant lost accuracy"},
        {"partly_accuracy", "half the claim held: less accurate, but not every variant did less work"},
        {"not_held", "the claim did NOT hold here"},
        {"other", "; {variant} {mflop} MFLOP ({less}, ~n^{slope}), cache {kib} KiB, accuracy {accuracy}"},
        {"less", "less"},
        {"not_less", "NOT less"},
        {"timing",
         "forward and backward times of one layer per variant and n in the variants table; their log-log "
         "slope in log_log"},
        {"run", "{variant} n={n}"},
    };
    return m;
}

// One arm: the model's switches and the layer's per-call options for the same variant.
void apply_variant(const std::string& name, const VariantsOptions& o, ModelConfig& config, AttentionOptions& options) {
    if (name == "window") {
        config.attention_window = o.window;
        options.mask.window = o.window;
    } else if (name == "block_sparse") {
        config.variant = AttentionVariant::block_sparse;
        config.sparse_block_size = o.block_size;
        options.variant = AttentionVariant::block_sparse;
        options.block_sparse.block_size = o.block_size;
    } else if (name == "linear") {
        config.variant = AttentionVariant::linear;
        options.variant = AttentionVariant::linear;
    }
}

struct LayerCost {
    double forward_ms = 0.0;
    double backward_ms = 0.0;
    std::size_t cache_bytes = 0;  // what the attention keeps for backward (weights, statistics, features)
    std::uint64_t multiply_adds = 0;  // of one forward and one backward, counted by the engine's kernels
};

LayerCost time_layer(const VariantsOptions& o, const std::string& variant, std::size_t n) {
    MultiHeadAttentionConfig config;
    config.d_model = o.d_model;
    config.num_heads = o.num_heads;
    Rng rng(o.train.seed);
    const MultiHeadAttention mha(config, rng);
    ModelConfig unused;
    AttentionOptions options;
    options.mask.causal = true;
    apply_variant(variant, o, unused, options);
    Tensor3 x = Tensor3::from_shape({o.batch, n, o.d_model});     // (B, T, C)
    Tensor3 dout = Tensor3::from_shape({o.batch, n, o.d_model});  // (B, T, C)
    for (float& v : x) v = rng.normal();
    for (float& v : dout) v = rng.normal();
    MultiHeadAttentionCache cache;
    MultiHeadAttentionGrad grads(mha);
    Tensor3 out, dx;
    LayerCost c;
    {
        FlopScope scope;  // one untimed call of each, counted
        mha.forward(x, nullptr, options, nullptr, &cache, out);
        mha.backward(dout, cache, options, grads, dx);
        c.multiply_adds = scope.multiply_adds();
    }
    c.forward_ms = c.backward_ms = std::numeric_limits<double>::infinity();
    for (std::size_t rep = 0; rep < o.repeats; ++rep) {
        auto start = std::chrono::steady_clock::now();
        mha.forward(x, nullptr, options, nullptr, &cache, out);
        c.forward_ms = std::min(c.forward_ms, 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        start = std::chrono::steady_clock::now();
        mha.backward(dout, cache, options, grads, dx);
        c.backward_ms = std::min(c.backward_ms, 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    c.cache_bytes = cache.attention.bytes() + cache.linear.bytes();
    return c;
}

// Least-squares slope of log y against log x: y ~ x^slope.
double log_log_slope(const std::vector<double>& x, const std::vector<double>& y) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = static_cast<double>(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double lx = std::log(x[i]), ly = std::log(std::max(y[i], 1e-12));
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    const double d = n * sxx - sx * sx;
    return d > 0 ? (n * sxy - sx * sy) / d : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

Result run_variants(const VariantsOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_variants";
    o.train.validate(where);
    if (o.lengths.empty() || o.variants.empty()) fail<ConfigError>(where, ": lengths and variants must not be empty");
    if (o.repeats == 0 || o.batch == 0) fail<ConfigError>(where, ": repeats and batch must be positive");
    for (std::size_t n : o.lengths) {
        if (n < 4) fail<ConfigError>(where, ": every length must be at least 4 (k = n/2 >= 2), got ", n);
    }

    Result r;
    r.name = "variants";
    r.claim = kVariantsClaim;
    r.config = {
        {"variants", detail::format("full; window W = %zu; block_sparse b = %zu (1 window, 1 global, 1 random block); "
                                    "linear (elu + 1 features)",
                                    o.window, o.block_size)},
        {"timed layer", detail::format("one causal self-attention layer, d_model %zu, %zu heads, batch %zu, T = S = n; "
                                       "best of %zu calls",
                                       o.d_model, o.num_heads, o.batch, o.repeats)},
        {"work", "multiply-adds of one forward and one backward of the layer, counted by the engine's product kernels "
                 "(core/flop_counter.hpp), projections included"},
        {"cache", "bytes the attention keeps for backward (weights or softmax statistics, or linear features), not the "
                  "q, k, v every variant keeps"},
        {"accuracy", detail::format("k_back at length n with k = n/2; decoder, 1 block, d_model %zu, %zu heads, rope",
                                    o.d_model, o.num_heads)}};
    detail::add_training_config(r, o.train);

    Table table{"variants",
                {"n", "variant", "counted MFLOP", "forward (ms)", "backward (ms)", "cache KiB", "held-out accuracy"},
                {}};
    const std::size_t runs = o.lengths.size() * o.variants.size();
    std::vector<std::vector<double>> time(o.variants.size()), bytes(o.variants.size()), accuracy(o.variants.size()),
        work(o.variants.size());
    std::vector<double> ns;
    for (std::size_t li = 0; li < o.lengths.size(); ++li) {
        const std::size_t n = o.lengths[li];
        ns.push_back(static_cast<double>(n));
        TaskOptions task_options;
        task_options.length = n;
        task_options.k = n / 2;
        const auto task = make_task("k_back", task_options);
        for (std::size_t vi = 0; vi < o.variants.size(); ++vi) {
            const std::string& variant = o.variants[vi];
            const LayerCost cost = time_layer(o, variant, n);
            ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, 1);
            AttentionOptions unused;
            apply_variant(variant, o, config, unused);
            config.validate();
            Model model(config, o.train.seed);
            const std::string name =
                detail::phrase(r, {"run", {{"variant", variant}, {"n", std::to_string(n)}}}, variants_messages());
            const detail::RunOutcome run = detail::train_run(model, *task, detail::trainer_options(o.train), o.train,
                                                             {name, li * o.variants.size() + vi, runs}, progress);
            double acc = std::numeric_limits<double>::quiet_NaN();
            if (run.failed_step) {
                detail::stopped_note(r, name, run);
            } else {
                acc = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size).accuracy;
            }
            time[vi].push_back(cost.forward_ms + cost.backward_ms);
            bytes[vi].push_back(static_cast<double>(cost.cache_bytes));
            work[vi].push_back(2.0 * static_cast<double>(cost.multiply_adds) / 1e6);
            accuracy[vi].push_back(acc);
            table.rows.push_back({std::to_string(n), variant, detail::number(work[vi].back(), 3),
                                  detail::number(cost.forward_ms, 3),
                                  detail::number(cost.backward_ms, 3),
                                  detail::number(static_cast<double>(cost.cache_bytes) / 1024.0, 1), detail::percent(acc)});
        }
    }
    r.tables.push_back(table);

    // The log-log view: the exponent of n that each variant's cost grows with.
    Table slopes{"log_log",
                 {"variant", "work ~ n^x", "cache ~ n^x", "forward+backward ~ n^x (ms)", "accuracy at the largest n"},
                 {}};
    Series flops{"flops", "n", "MFLOP of one forward and backward (one layer), counted by the engine", ns, {}};
    Series memory{"cache_bytes", "n", "bytes the attention keeps for backward (one layer)", ns, {}};
    Series acc_series{"accuracy", "n", "held-out k_back accuracy (k = n/2)", ns, {}};
    std::vector<double> work_slope(o.variants.size());
    for (std::size_t vi = 0; vi < o.variants.size(); ++vi) {
        work_slope[vi] = log_log_slope(ns, work[vi]);
        slopes.rows.push_back({o.variants[vi], ns.size() > 1 ? detail::number(work_slope[vi], 2) : "n/a",
                               ns.size() > 1 ? detail::number(log_log_slope(ns, bytes[vi]), 2) : "n/a",
                               ns.size() > 1 ? detail::number(log_log_slope(ns, time[vi]), 2) : "n/a",
                               detail::percent(accuracy[vi].back())});
        flops.lines.push_back({o.variants[vi], work[vi]});
        memory.lines.push_back({o.variants[vi], bytes[vi]});
        acc_series.lines.push_back({o.variants[vi], accuracy[vi]});
    }
    r.tables.push_back(slopes);
    r.series.push_back(flops);
    r.series.push_back(memory);
    r.series.push_back(acc_series);

    // The claim: every other variant does less counted work than full at the largest n, and full
    // reaches a higher accuracy there than each of them (5 points or more).
    const auto full_it = std::find(o.variants.begin(), o.variants.end(), "full");
    if (full_it == o.variants.end()) {
        detail::conclude(r, {"no_full", {}}, variants_messages());
        return r;
    }
    const std::size_t full = static_cast<std::size_t>(full_it - o.variants.begin());
    bool cheaper = true, less_accurate = true;
    std::vector<Message> others;
    for (std::size_t vi = 0; vi < o.variants.size(); ++vi) {
        if (vi == full) continue;
        const bool c = work[vi].back() < work[full].back();
        const bool a = accuracy[vi].back() + 0.05 < accuracy[full].back();
        cheaper = cheaper && c;
        less_accurate = less_accurate && a;
        others.push_back({"other",
                          {{"variant", o.variants[vi]},
                           {"mflop", detail::format("%.3f", work[vi].back())},
                           {"less", Message{c ? "less" : "not_less", {}}},
                           {"slope", detail::format("%.2f", work_slope[vi])},
                           {"kib", detail::format("%.1f", bytes[vi].back() / 1024.0)},
                           {"accuracy", detail::percent(accuracy[vi].back())}}});
    }
    const char* verdict = cheaper && less_accurate ? "held"
                          : cheaper               ? "partly_work"
                          : less_accurate         ? "partly_accuracy"
                                                  : "not_held";
    r.verdict = cheaper && less_accurate   ? Verdict::held
                : cheaper || less_accurate ? Verdict::partly
                                           : Verdict::not_held;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", Message{verdict, {}}},
                       {"n", std::to_string(o.lengths.back())},
                       {"mflop", detail::format("%.3f", work[full].back())},
                       {"slope", detail::format("%.2f", work_slope[full])},
                       {"kib", detail::format("%.1f", bytes[full].back() / 1024.0)},
                       {"accuracy", detail::percent(accuracy[full].back())},
                       {"others", {others, ""}}}},
                     variants_messages());
    detail::set_timing(r, {"timing", {}}, variants_messages());
    return r;
}

namespace {
const detail::ParameterTable<VariantsOptions>& variants_parameters() {
    using O = VariantsOptions;
    static const auto table = detail::ParameterTable<O>()
        .integers("lengths", &O::lengths, 4, 4096, "sequence lengths n")
        .texts("variants", &O::variants, {"full", "window", "block_sparse", "linear"}, "variants to compare")
        .integer("window", &O::window, 1, 4096, "W of the window variant")
        .integer("block-size", &O::block_size, 1, 1024, "b of the block_sparse variant")
        .integer("d-model", &O::d_model, 2, 1024, "model width C")
        .integer("heads", &O::num_heads, 1, 64, "attention heads")
        .integer("timed-batch", &O::batch, 1, 256, "sequences of the timed layer")
        .integer("repeats", &O::repeats, 1, 1000, "calls timed per variant and n (the best is kept)")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::variants_entry() {
    Experiment e;
    e.name = "variants";
    e.section = "§5.3";
    e.claim = kVariantsClaim;
    e.summary = "full / window / block-sparse / linear as n grows: time, cache memory, k_back accuracy (k = n/2)";
    e.parameters = variants_parameters().parameters();
    e.quick = {{"lengths", "32,64"}, {"steps", "60"}, {"log-every", "20"}, {"warmup", "5"}, {"repeats", "1"}};
    e.messages = variants_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_variants(variants_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
