// §5.3: sparse, windowed and linear attention trade reach for cost. Full attention compares every
// query with every key, O(n²) work; a sliding window of W keys and BigBird's block layout keep
// O(n·W) pairs; kernelised linear attention never forms the (T, S) weights, O(n). The cost is
// what they can see: a relation n/2 positions back lies outside a window, mostly outside the
// block layout, and linear attention's feature map blurs which key is which. The experiment
// counts each variant's pairs and attention memory from its mechanism at every length, trains a
// one-block decoder on k_back with k = n/2 at the trained lengths, and times one causal
// attention layer per variant at the timed lengths (long enough for n² to show).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/attention/block_sparse.hpp"
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
         "{verdict}: at n = {n} full attention scores {pairs} query-key pairs per head (~n^{slope}) and holds "
         "{kib} KiB of weights per head{others}; on k_back (k = n/2) at n = {trained_n} full reaches {accuracy}"
         "{accuracies}"},
        {"held", "the claim held"},
        {"partly_work", "the claim held in part: less work, but not every variant lost accuracy"},
        {"partly_accuracy", "the claim held in part: less accurate, but not every variant did less work"},
        {"partly_not_learned",
         "the claim held in part: less work, but full attention did not learn k_back here (at most {accuracy}), so "
         "the accuracy a variant pays was not shown"},
        {"not_held", "the claim did NOT hold here"},
        {"other", "; {variant} {pairs} ({less}, ~n^{slope}), {kib} KiB"},
        {"other_state", "; {variant} scores no pairs and holds a fixed {kib} KiB state ({less})"},
        {"other_accuracy", ", {variant} {accuracy}"},
        {"less", "less"},
        {"not_less", "NOT less"},
        {"timing", "one layer's forward and backward at n = {n}: full {full_ms} ms{others}"},
        {"timing_other", ", {variant} {ms} ms ({ratio}x full)"},
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

// What a variant's mechanism computes and holds for one head of one causal sequence of length
// n, counted from its definition (not from the code path the engine takes, which may compute
// a whole tile and mask it): the query-key pairs it scores (key j <= query i) and the floats of
// attention it holds: one weight per scored pair, or linear attention's running state
// S = Σ φ(k_j) v_jᵀ (D x D) and normaliser z = Σ φ(k_j) (D), whatever n is.
struct Mechanism {
    std::uint64_t pairs = 0;
    std::uint64_t floats = 0;
};

Mechanism mechanism(const VariantsOptions& o, const std::string& variant, std::size_t n) {
    Mechanism m;
    if (variant == "full") {
        m.pairs = static_cast<std::uint64_t>(n) * (n + 1) / 2;
    } else if (variant == "window") {
        for (std::size_t i = 0; i < n; ++i) m.pairs += std::min(i + 1, o.window);
    } else if (variant == "block_sparse") {
        BlockSparseOptions b;
        b.block_size = o.block_size;
        const Mask2 layout = sparse_layout(n, n, b, /*causal=*/true);  // (⌈n/b⌉, ⌈n/b⌉), 1 = live
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t bi = i / o.block_size;
            for (std::size_t bj = 0; bj <= bi; ++bj) {
                if (!layout(bi, bj)) continue;
                const std::size_t first = bj * o.block_size, last = std::min(i, first + o.block_size - 1);
                m.pairs += last - first + 1;
            }
        }
    } else if (variant == "linear") {
        const std::size_t d = o.d_model / o.num_heads;
        m.floats = d * d + d;
        return m;
    }
    m.floats = m.pairs;
    return m;
}

struct LayerTime {
    double forward_ms = 0.0;
    double backward_ms = 0.0;
};

LayerTime time_layer(const VariantsOptions& o, const std::string& variant, std::size_t n) {
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
    // One untimed call of each first (allocation, caches).
    mha.forward(x, nullptr, options, nullptr, &cache, out);
    mha.backward(dout, cache, options, grads, dx);
    LayerTime c;
    c.forward_ms = c.backward_ms = std::numeric_limits<double>::infinity();
    for (std::size_t rep = 0; rep < o.repeats; ++rep) {
        auto start = std::chrono::steady_clock::now();
        mha.forward(x, nullptr, options, nullptr, &cache, out);
        c.forward_ms = std::min(c.forward_ms, 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        start = std::chrono::steady_clock::now();
        mha.backward(dout, cache, options, grads, dx);
        c.backward_ms = std::min(c.backward_ms, 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
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

std::string kib(double floats) { return detail::number(floats * sizeof(float) / 1024.0, 1); }

// The held-out k_back accuracy (k = n/2) of a one-block decoder with `variant`, NaN if its
// training stopped (noted).
double trained_accuracy(Result& r, const VariantsOptions& o, const std::string& variant, std::size_t n,
                        const detail::RunLabel& label, const ProgressFn& progress) {
    TaskOptions task_options;
    task_options.length = n;
    task_options.k = n / 2;
    const auto task = make_task("k_back", task_options);
    ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, 1);
    AttentionOptions unused;
    apply_variant(variant, o, config, unused);
    config.validate();
    Model model(config, o.train.seed);
    const detail::RunOutcome run = detail::train_run(model, *task, detail::trainer_options(o.train), o.train, label, progress);
    if (run.failed_step) {
        detail::stopped_note(r, label.name, run);
        return std::numeric_limits<double>::quiet_NaN();
    }
    return detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size).accuracy;
}

// The claim at the largest length counted and the largest length trained: every other variant
// scores fewer pairs and holds less attention than full (its mechanism), and full, having
// learned k_back (more than half right), reaches 5 points more than each of them.
void conclude_variants(Result& r, const VariantsOptions& o, std::size_t full, const std::vector<double>& ns,
                       const std::vector<std::vector<double>>& pairs, const std::vector<std::vector<double>>& floats,
                       const std::vector<double>& pair_slope, const std::vector<std::vector<double>>& accuracy) {
    const double full_accuracy = accuracy[full].back();
    const bool learned = full_accuracy > 0.5;
    bool cheaper = true, less_accurate = true;
    std::vector<Message> others, accuracies;
    for (std::size_t vi = 0; vi < o.variants.size(); ++vi) {
        if (vi == full) continue;
        const bool c = pairs[vi].back() < pairs[full].back() && floats[vi].back() < floats[full].back();
        cheaper = cheaper && c;
        less_accurate = less_accurate && accuracy[vi].back() + 0.05 < full_accuracy;
        const Message less{c ? "less" : "not_less", {}};
        if (pairs[vi].back() == 0) {
            others.push_back({"other_state", {{"variant", o.variants[vi]}, {"kib", kib(floats[vi].back())}, {"less", less}}});
        } else {
            others.push_back({"other",
                              {{"variant", o.variants[vi]},
                               {"pairs", detail::format("%.0f", pairs[vi].back())},
                               {"less", less},
                               {"slope", detail::format("%.2f", pair_slope[vi])},
                               {"kib", kib(floats[vi].back())}}});
        }
        accuracies.push_back({"other_accuracy", {{"variant", o.variants[vi]}, {"accuracy", detail::percent(accuracy[vi].back())}}});
    }
    Message verdict{"not_held", {}};
    r.verdict = Verdict::partly;
    if (cheaper && !learned) verdict = {"partly_not_learned", {{"accuracy", detail::percent(full_accuracy)}}};
    else if (cheaper && less_accurate) verdict = {"held", {}}, r.verdict = Verdict::held;
    else if (cheaper) verdict = {"partly_work", {}};
    else if (less_accurate && learned) verdict = {"partly_accuracy", {}};
    else r.verdict = Verdict::not_held;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", verdict},
                       {"n", detail::format("%.0f", ns.back())},
                       {"pairs", detail::format("%.0f", pairs[full].back())},
                       {"slope", detail::format("%.2f", pair_slope[full])},
                       {"kib", kib(floats[full].back())},
                       {"others", {others, ""}},
                       {"trained_n", std::to_string(o.lengths.back())},
                       {"accuracy", detail::percent(full_accuracy)},
                       {"accuracies", {accuracies, ""}}}},
                     variants_messages());
}

// The measured side, on the timing line: each variant's time against full's at the largest
// timed length (wall time varies from run to run, so the verdict does not read it).
void set_variants_timing(Result& r, const VariantsOptions& o, std::size_t full, const std::vector<std::vector<double>>& time) {
    std::vector<Message> others;
    const double full_ms = time[full].back();
    for (std::size_t vi = 0; vi < o.variants.size(); ++vi) {
        if (vi == full) continue;
        others.push_back({"timing_other",
                          {{"variant", o.variants[vi]},
                           {"ms", detail::format("%.2f", time[vi].back())},
                           {"ratio", detail::format("%.2f", time[vi].back() / std::max(full_ms, 1e-9))}}});
    }
    detail::set_timing(r,
                       {"timing",
                        {{"n", std::to_string(o.timed_lengths.back())},
                         {"full_ms", detail::format("%.2f", full_ms)},
                         {"others", {others, ""}}}},
                       variants_messages());
}

}  // namespace

Result run_variants(const VariantsOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_variants";
    o.train.validate(where);
    if (o.lengths.empty() || o.timed_lengths.empty() || o.variants.empty()) {
        fail<ConfigError>(where, ": lengths, timed_lengths and variants must not be empty");
    }
    if (o.repeats == 0 || o.batch == 0) fail<ConfigError>(where, ": repeats and batch must be positive");
    for (std::size_t n : o.lengths) {
        if (n < 4) fail<ConfigError>(where, ": every length must be at least 4 (k = n/2 >= 2), got ", n);
    }
    if (o.num_heads == 0 || o.d_model % o.num_heads != 0) {
        fail<ConfigError>(where, ": heads (", o.num_heads, ") must divide d_model (", o.d_model, ")");
    }

    Result r;
    r.name = "variants";
    r.claim = kVariantsClaim;
    r.config = {
        {"variants", detail::format("full; window W = %zu; block_sparse b = %zu (1 window, 1 global, 1 random block); "
                                    "linear (elu + 1 features)",
                                    o.window, o.block_size)},
        {"counted", "from each mechanism, per head of one causal sequence: the query-key pairs it scores (key <= query) "
                    "and the attention it holds (a weight per pair; linear: its D x D state and D normaliser), "
                    "whatever code path the engine takes"},
        {"accuracy", detail::format("k_back at length n with k = n/2; decoder, 1 block, d_model %zu, %zu heads, rope",
                                    o.d_model, o.num_heads)},
        {"timed layer", detail::format("one causal self-attention layer, d_model %zu, %zu heads, batch %zu, T = S = n; "
                                       "best of %zu calls",
                                       o.d_model, o.num_heads, o.batch, o.repeats)}};
    detail::add_training_config(r, o.train);

    const std::size_t nv = o.variants.size();
    Table trained{"variants", {"n", "variant", "pairs / head", "attention KiB / head", "held-out accuracy"}, {}};
    std::vector<std::vector<double>> accuracy(nv);
    const std::size_t runs = o.lengths.size() * nv;
    for (std::size_t li = 0; li < o.lengths.size(); ++li) {
        const std::size_t n = o.lengths[li];
        for (std::size_t vi = 0; vi < nv; ++vi) {
            const std::string& variant = o.variants[vi];
            const std::string name =
                detail::phrase(r, {"run", {{"variant", variant}, {"n", std::to_string(n)}}}, variants_messages());
            accuracy[vi].push_back(trained_accuracy(r, o, variant, n, {name, li * nv + vi, runs}, progress));
            const Mechanism m = mechanism(o, variant, n);
            trained.rows.push_back({std::to_string(n), variant, std::to_string(m.pairs), kib(static_cast<double>(m.floats)),
                                    detail::percent(accuracy[vi].back())});
        }
    }
    r.tables.push_back(trained);

    Table timed{"timed", {"n", "variant", "pairs / head", "forward (ms)", "backward (ms)"}, {}};
    std::vector<std::vector<double>> time(nv);
    for (std::size_t n : o.timed_lengths) {
        for (std::size_t vi = 0; vi < nv; ++vi) {
            const LayerTime t = time_layer(o, o.variants[vi], n);
            time[vi].push_back(t.forward_ms + t.backward_ms);
            timed.rows.push_back({std::to_string(n), o.variants[vi], std::to_string(mechanism(o, o.variants[vi], n).pairs),
                                  detail::number(t.forward_ms, 3), detail::number(t.backward_ms, 3)});
        }
    }
    r.tables.push_back(timed);

    // Every length, trained or timed, counted: the log-log view of how each variant grows.
    std::vector<std::size_t> all = o.lengths;
    all.insert(all.end(), o.timed_lengths.begin(), o.timed_lengths.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::vector<double> ns(all.begin(), all.end()), timed_ns(o.timed_lengths.begin(), o.timed_lengths.end());
    Table slopes{"log_log", {"variant", "pairs ~ n^x", "memory ~ n^x", "forward+backward ~ n^x (ms)",
                             "accuracy at the largest n"}, {}};
    Series pairs_series{"pairs", "n", "query-key pairs scored per head (counted from the mechanism)", ns, {}};
    Series memory{"attention_memory", "n", "KiB of attention held per head (weights, or linear attention's state)", ns, {}};
    Series acc_series{"accuracy", "n", "held-out k_back accuracy (k = n/2)",
                      std::vector<double>(o.lengths.begin(), o.lengths.end()), {}};
    std::vector<std::vector<double>> pairs(nv), floats(nv);
    std::vector<double> pair_slope(nv);
    for (std::size_t vi = 0; vi < nv; ++vi) {
        std::vector<double> kib_line;
        for (std::size_t n : all) {
            const Mechanism m = mechanism(o, o.variants[vi], n);
            pairs[vi].push_back(static_cast<double>(m.pairs));
            floats[vi].push_back(static_cast<double>(m.floats));
            kib_line.push_back(static_cast<double>(m.floats) * sizeof(float) / 1024.0);
        }
        pair_slope[vi] = log_log_slope(ns, pairs[vi]);
        const bool several = ns.size() > 1;
        slopes.rows.push_back({o.variants[vi], several && pairs[vi].back() > 0 ? detail::number(pair_slope[vi], 2) : "n/a",
                               several ? detail::number(log_log_slope(ns, floats[vi]), 2) : "n/a",
                               timed_ns.size() > 1 ? detail::number(log_log_slope(timed_ns, time[vi]), 2) : "n/a",
                               detail::percent(accuracy[vi].back())});
        pairs_series.lines.push_back({o.variants[vi], pairs[vi]});
        memory.lines.push_back({o.variants[vi], kib_line});
        acc_series.lines.push_back({o.variants[vi], accuracy[vi]});
    }
    r.tables.push_back(slopes);
    r.series.push_back(pairs_series);
    r.series.push_back(memory);
    r.series.push_back(acc_series);

    const auto full_it = std::find(o.variants.begin(), o.variants.end(), "full");
    if (full_it == o.variants.end()) {
        detail::conclude(r, {"no_full", {}}, variants_messages());
        return r;
    }
    conclude_variants(r, o, static_cast<std::size_t>(full_it - o.variants.begin()), ns, pairs, floats, pair_slope, accuracy);
    set_variants_timing(r, o, static_cast<std::size_t>(full_it - o.variants.begin()), time);
    return r;
}

namespace {
const detail::ParameterTable<VariantsOptions>& variants_parameters() {
    using O = VariantsOptions;
    static const auto table = detail::ParameterTable<O>()
        .integers("lengths", &O::lengths, 4, 4096, "sequence lengths n the models are trained at")
        .integers("timed-lengths", &O::timed_lengths, 1, 16384, "sequence lengths n one layer is timed at")
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
    e.summary = "full / window / block-sparse / linear as n grows: pairs scored, attention memory, time, k_back "
                "accuracy (k = n/2)";
    e.parameters = variants_parameters().parameters();
    e.quick = {{"lengths", "32,64"}, {"timed-lengths", "256,1024"}, {"block-size", "8"}, {"steps", "60"},
               {"log-every", "20"}, {"warmup", "5"}, {"repeats", "3"}};
    e.messages = variants_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_variants(variants_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
