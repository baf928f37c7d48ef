// §3.2: splitting d_model into h heads of width D = d_model / h does not change the work. The four
// projections are (T, C)·(C, C) whatever h; the scores q·kᵀ are h products (T, D)·(D, S), together
// T·S·C multiply-adds, and so is weights·v. Only the shapes change: more, smaller matrices, which
// a real machine runs less efficiently, so the wall time may grow with h while the count does not.
// The multiply-adds are counted by the engine's product kernels (core/flop_counter.hpp) over one
// forward and one backward call, next to the count the shapes predict.
#include <algorithm>
#include <chrono>
#include <limits>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/flop_counter.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kCostClaim =
    "§3.2: multi-head attention costs the same as one head of the full width (the same multiply-adds, split into h "
    "smaller products)";

// The English templates of the conclusion and the timing line (Result::conclusion_message).
const MessageTemplates& cost_messages() {
    static const MessageTemplates m = {
        {"conclusion",
         "{verdict}: the engine counted {forward} and {backward} at d_model {d_model}, T {length}; the "
         "shapes predict {predicted} forward ({prediction})"},
        {"held", "the claim held for the work"},
        {"partly", "the claim held for the forward work"},
        {"not_held", "the claim did NOT hold: the counted forward work differs between head counts"},
        {"forward_same", "{mflop} MFLOP forward for every head count"},
        {"forward_differs", "different amounts of MFLOP forward"},
        {"backward_same", "{mflop} backward"},
        {"backward_differs",
         "backward {min} to {max} (h={min_h} to h={max_h}: the attention's backward takes another path "
         "at some head dims)"},
        {"predicted_equal", "equal to the count"},
        {"predicted_differs", "the count differs"},
        {"timing",
         "measured time is not constant: forward {forward_min} ms (h={forward_min_h}) to {forward_max} "
         "ms (h={forward_max_h}), {forward_ratio}x; backward {backward_min} ms (h={backward_min_h}) to "
         "{backward_max} ms (h={backward_max_h}), {backward_ratio}x"},
    };
    return m;
}

// Multiply-adds of one self-attention forward on (B, T, C), S = T, per product of the layer.
struct MacCount {
    std::uint64_t projections = 0;  // q, k, v, out: 4 · B·T·C·C
    std::uint64_t scores = 0;       // h · B·T·S·D = B·T·S·C
    std::uint64_t context = 0;      // h · B·T·S·D
    std::uint64_t total() const { return projections + scores + context; }
};

MacCount forward_macs(std::size_t batch, std::size_t t, std::size_t c, std::size_t heads) {
    const std::uint64_t b = batch, T = t, C = c, H = heads, D = c / heads;
    MacCount m;
    m.projections = 4 * b * T * C * C;
    m.scores = H * b * T * T * D;
    m.context = H * b * T * T * D;
    return m;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result run_cost(const CostOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_cost";
    if (o.heads.empty() || o.repeats == 0 || o.length == 0 || o.batch == 0) {
        fail<ConfigError>(where, ": heads must not be empty and repeats, length, batch must be positive");
    }
    for (std::size_t h : o.heads) {
        if (h == 0 || o.d_model % h != 0) fail<ConfigError>(where, ": h = ", h, " does not divide d_model ", o.d_model);
    }
    Result r;
    r.name = "cost";
    r.claim = kCostClaim;
    r.config = {{"layer", detail::format("one self-attention layer, d_model %zu, no mask, batch %zu, T = S = %zu",
                                         o.d_model, o.batch, o.length)},
                {"flops", "2 x multiply-adds: 'shapes' from the formula 4·B·T·C² + 2·B·T·S·C, 'counted' by the "
                          "engine's product kernels over one call (backward: input and weight gradients, and the "
                          "attention's recomputed scores where its path recomputes them)"},
                {"time", detail::format("best of %zu calls, forward and backward separately", o.repeats)}};

    Table table{"cost",
                {"h", "head dim", "projection MFLOP", "score+context MFLOP", "forward MFLOP", "counted forward MFLOP",
                 "counted backward MFLOP", "forward (ms)", "backward (ms)"},
                {}};
    Series series{"flops", "heads", "MFLOP of one call, counted by the engine", {}, {{"forward", {}}, {"backward", {}}}};
    std::vector<std::uint64_t> totals, counted_fwd, counted_bwd;
    std::vector<double> fwd_ms, bwd_ms;
    for (std::size_t i = 0; i < o.heads.size(); ++i) {
        const std::size_t h = o.heads[i];
        MultiHeadAttentionConfig config;
        config.d_model = o.d_model;
        config.num_heads = h;
        Rng rng(o.seed);
        const MultiHeadAttention mha(config, rng);
        Tensor3 x = Tensor3::from_shape({o.batch, o.length, o.d_model});     // (B, T, C)
        Tensor3 dout = Tensor3::from_shape({o.batch, o.length, o.d_model});  // (B, T, C)
        for (float& v : x) v = rng.normal();
        for (float& v : dout) v = rng.normal();
        MultiHeadAttentionCache cache;
        MultiHeadAttentionGrad grads(mha);
        Tensor3 out, dx;
        const AttentionOptions options;
        {
            FlopScope scope;  // one untimed call of each, counted
            mha.forward(x, nullptr, options, nullptr, &cache, out);
            counted_fwd.push_back(scope.multiply_adds());
            scope.reset();
            mha.backward(dout, cache, options, grads, dx);
            counted_bwd.push_back(scope.multiply_adds());
        }
        double best_f = std::numeric_limits<double>::infinity(), best_b = best_f;
        for (std::size_t rep = 0; rep < o.repeats; ++rep) {
            auto start = std::chrono::steady_clock::now();
            mha.forward(x, nullptr, options, nullptr, &cache, out);
            best_f = std::min(best_f, seconds_since(start));
            start = std::chrono::steady_clock::now();
            mha.backward(dout, cache, options, grads, dx);
            best_b = std::min(best_b, seconds_since(start));
        }
        const MacCount macs = forward_macs(o.batch, o.length, o.d_model, h);
        totals.push_back(macs.total());
        const double mflop = 2.0 * static_cast<double>(macs.total()) / 1e6;
        fwd_ms.push_back(1e3 * best_f);
        bwd_ms.push_back(1e3 * best_b);
        table.rows.push_back({std::to_string(h), std::to_string(o.d_model / h),
                              detail::number(2.0 * static_cast<double>(macs.projections) / 1e6, 3),
                              detail::number(2.0 * static_cast<double>(macs.scores + macs.context) / 1e6, 3),
                              detail::number(mflop, 3), detail::number(2.0 * static_cast<double>(counted_fwd.back()) / 1e6, 3),
                              detail::number(2.0 * static_cast<double>(counted_bwd.back()) / 1e6, 3),
                              detail::number(fwd_ms.back(), 3), detail::number(bwd_ms.back(), 3)});
        series.x.push_back(static_cast<double>(h));
        series.lines[0].y.push_back(2.0 * static_cast<double>(counted_fwd.back()) / 1e6);
        series.lines[1].y.push_back(2.0 * static_cast<double>(counted_bwd.back()) / 1e6);
        if (progress) progress({detail::format("h=%zu", h), i, o.heads.size(), o.repeats, o.repeats, 0.0f});
    }
    r.tables.push_back(table);
    r.series.push_back(series);

    auto all_equal = [](const std::vector<std::uint64_t>& v) {
        return std::all_of(v.begin(), v.end(), [&](std::uint64_t t) { return t == v[0]; });
    };
    const bool same_fwd = all_equal(counted_fwd), same_bwd = all_equal(counted_bwd);
    const bool as_predicted = counted_fwd == totals;
    auto mflop = [](std::uint64_t macs) { return 2.0 * static_cast<double>(macs) / 1e6; };
    const auto [bmin_it, bmax_it] = std::minmax_element(counted_bwd.begin(), counted_bwd.end());
    const Message backward =
        same_bwd ? Message{"backward_same", {{"mflop", detail::format("%.3f", mflop(counted_bwd[0]))}}}
                 : Message{"backward_differs",
                           {{"min", detail::format("%.3f", mflop(*bmin_it))},
                            {"max", detail::format("%.3f", mflop(*bmax_it))},
                            {"min_h", std::to_string(o.heads[bmin_it - counted_bwd.begin()])},
                            {"max_h", std::to_string(o.heads[bmax_it - counted_bwd.begin()])}}};
    const Message forward = same_fwd ? Message{"forward_same", {{"mflop", detail::number(mflop(counted_fwd[0]), 3)}}}
                                     : Message{"forward_differs", {}};
    r.verdict = same_fwd && same_bwd ? Verdict::held : same_fwd ? Verdict::partly : Verdict::not_held;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", Message{same_fwd && same_bwd ? "held" : same_fwd ? "partly" : "not_held", {}}},
                       {"forward", forward},
                       {"backward", backward},
                       {"d_model", std::to_string(o.d_model)},
                       {"length", std::to_string(o.length)},
                       {"predicted", detail::format("%.3f", mflop(totals[0]))},
                       {"prediction", Message{as_predicted ? "predicted_equal" : "predicted_differs", {}}}}},
                     cost_messages());
    const auto fmax = std::max_element(fwd_ms.begin(), fwd_ms.end()), fmin = std::min_element(fwd_ms.begin(), fwd_ms.end());
    const auto bmax = std::max_element(bwd_ms.begin(), bwd_ms.end()), bmin = std::min_element(bwd_ms.begin(), bwd_ms.end());
    detail::set_timing(r,
                       {"timing",
                        {{"forward_min", detail::format("%.3f", *fmin)},
                         {"forward_min_h", std::to_string(o.heads[fmin - fwd_ms.begin()])},
                         {"forward_max", detail::format("%.3f", *fmax)},
                         {"forward_max_h", std::to_string(o.heads[fmax - fwd_ms.begin()])},
                         {"forward_ratio", detail::format("%.2f", *fmax / *fmin)},
                         {"backward_min", detail::format("%.3f", *bmin)},
                         {"backward_min_h", std::to_string(o.heads[bmin - bwd_ms.begin()])},
                         {"backward_max", detail::format("%.3f", *bmax)},
                         {"backward_max_h", std::to_string(o.heads[bmax - bwd_ms.begin()])},
                         {"backward_ratio", detail::format("%.2f", *bmax / *bmin)}}},
                       cost_messages());
    return r;
}

namespace {
const detail::ParameterTable<CostOptions>& cost_parameters() {
    using O = CostOptions;
    static const auto table = detail::ParameterTable<O>()
        .integer("d-model", &O::d_model, 1, 4096, "model width C")
        .integer("length", &O::length, 1, 4096, "sequence length T = S")
        .integer("batch", &O::batch, 1, 256, "sequences per call")
        .integers("heads", &O::heads, 1, 4096, "head counts (each must divide d-model)")
        .integer("repeats", &O::repeats, 1, 1000, "calls timed per head count (the best is kept)")
        .integer("seed", &O::seed, 0, 4294967295.0, "seed of the weights and inputs");
    return table;
}
}  // namespace

Experiment detail::cost_entry() {
    Experiment e;
    e.name = "cost";
    e.section = "§3.2";
    e.claim = kCostClaim;
    e.summary = "FLOPs and measured forward/backward time of one attention layer for h = 1..16 at a fixed d_model";
    e.parameters = cost_parameters().parameters();
    e.quick = {{"d-model", "128"}, {"length", "64"}, {"repeats", "3"}};
    e.messages = cost_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_cost(cost_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
