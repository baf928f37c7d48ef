// §9.2: an attention weight says how much of v_j a query takes, not how much key j matters.
// Head h adds w_ij · v_j W_O,h to the output at i, so a large weight on a key whose value is
// small (or points where the others already point) changes little. Removing key j (masking it
// and renormalising the row) changes head h's output at i by exactly
//   Δ_ij = w_ij / (1 − w_ij) · (context_i − v_j) W_O,h
// (the others' weights grow by 1 / (1 − w_ij)), so the ablation needs no second forward.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kImportanceClaim =
    "§9.2: an attention weight is not the importance of its key: ranking keys by weight differs from ranking them by "
    "the effect of removing them; weight·||v|| is closer";

// The English templates of the conclusion (Result::conclusion_message).
const MessageTemplates& importance_messages() {
    static const MessageTemplates m = {
        {"conclusion",
         "{verdict}: over {queries} queries the weight ranks keys with mean Spearman {rho_weight} "
         "against removing them (its top key is the ablation's top key {top_weight} of the time); weight "
         "x ||v W_O|| {rho_value} ({top_value}); model held-out accuracy {accuracy}"},
        {"held", "the claim held"},
        {"partly", "the claim held for the weight, but weight·||v|| was not closer to the ablation"},
        {"not_held", "the claim did NOT hold: the weight ranked keys like the ablation"},
    };
    return m;
}

// Ranks of `x` (0-based, ties get their mean rank).
std::vector<double> ranks(const std::vector<double>& x) {
    std::vector<std::size_t> order(x.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
    std::vector<double> r(x.size());
    for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i;
        while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
        for (std::size_t k = i; k <= j; ++k) r[order[k]] = 0.5 * static_cast<double>(i + j);
        i = j + 1;
    }
    return r;
}

// Spearman rank correlation: Pearson of the ranks; NaN when either is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
    const std::vector<double> ra = ranks(a), rb = ranks(b);
    const double n = static_cast<double>(a.size());
    const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : std::nan("");
}

std::size_t argmax(const std::vector<double>& x) { return static_cast<std::size_t>(std::max_element(x.begin(), x.end()) - x.begin()); }

// ||u W_O,h||: u (D) is head h's part of concat; W_O (C, C), out_c = Σ_d u_d W_O[c, h·D + d].
double projected_norm(const std::vector<double>& u, const float* w_o, std::size_t c, std::size_t head, std::size_t d) {
    double sum = 0.0;
    for (std::size_t row = 0; row < c; ++row) {
        double y = 0.0;
        const float* w = w_o + row * c + head * d;
        for (std::size_t k = 0; k < d; ++k) y += u[k] * w[k];
        sum += y * y;
    }
    return std::sqrt(sum);
}

}  // namespace

Result run_importance(const ImportanceOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_importance";
    o.train.validate(where);
    if (o.sequences == 0) fail<ConfigError>(where, ": sequences must be positive");
    TaskOptions task_options;
    task_options.length = o.length;
    if (o.task == "k_back") task_options.k = o.k;
    const auto task = make_task(o.task, task_options);
    if (task->kind() != TaskKind::sequence) fail<ConfigError>(where, ": task '", o.task, "' is not a sequence task");
    const ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, o.num_layers);

    Result r;
    r.name = "importance";
    r.claim = kImportanceClaim;
    r.config = {{"task", detail::format("%s, length %zu%s (T = %zu)", o.task.c_str(), o.length,
                                        o.task == "k_back" ? detail::format(", k %zu", o.k).c_str() : "", task->seq_len())},
                {"model", detail::format("decoder, %zu layers, d_model %zu, %zu heads, rope, pre-LN", o.num_layers,
                                         o.d_model, o.num_heads)},
                {"analysed", detail::format("last block, every head, every query with 3 or more visible keys, %zu "
                                            "held-out sequences", o.sequences)},
                {"ablation", "change of the head's output at the query when the key is masked out (exact, closed form)"}};
    detail::add_training_config(r, o.train);

    Model model(config, o.train.seed);
    const detail::RunOutcome run =
        detail::train_run(model, *task, detail::trainer_options(o.train), o.train, {"decoder", 0, 1}, progress);
    if (run.failed_step) detail::note(r, {"training_stopped", {{"error", detail::error_value(run)}}});
    const EvalResult eval = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);

    const std::size_t layer = o.num_layers - 1, c = o.d_model, d = config.head_dim();
    const std::string w_name = detail::format("blocks.%zu.attn.out_proj.weight", layer);
    const float* w_o = nullptr;
    for (const ParameterView& p : model.parameters()) {
        if (p.name == w_name) w_o = p.data;
    }
    if (!w_o) fail<Error>(where, ": the model has no parameter ", w_name);

    Rng rng(0x1A9E);
    const Batch batch = task->sample(o.sequences, rng);
    const std::size_t t = batch.tokens.shape(1);
    std::vector<double> rho_weight, rho_value;
    std::size_t top_weight = 0, top_value = 0, queries = 0;
    for (std::size_t b = 0; b < o.sequences; ++b) {
        Index2 one = Index2::from_shape({1, t});  // (1, T)
        std::copy(&batch.tokens(b, 0), &batch.tokens(b, 0) + t, one.begin());
        const auto trace = model.trace_layer(one, layer);
        for (std::size_t h = 0; h < o.num_heads; ++h) {
            const Tensor2& weights = trace->get(Stage::weights, 0, static_cast<std::ptrdiff_t>(h));  // (T, S)
            const Tensor2& v = trace->get(Stage::v, 0, static_cast<std::ptrdiff_t>(h));              // (S, D)
            const Tensor2& context = trace->get(Stage::context, 0, static_cast<std::ptrdiff_t>(h));  // (T, D)
            std::vector<double> value_norm(t);
            std::vector<double> u(d);
            for (std::size_t j = 0; j < t; ++j) {
                for (std::size_t k = 0; k < d; ++k) u[k] = v(j, k);
                value_norm[j] = projected_norm(u, w_o, c, h, d);
            }
            for (std::size_t i = 2; i < t; ++i) {
                std::vector<double> by_weight(i + 1), by_value(i + 1), by_ablation(i + 1);
                for (std::size_t j = 0; j <= i; ++j) {
                    const double w = weights(i, j);
                    by_weight[j] = w;
                    by_value[j] = w * value_norm[j];
                    for (std::size_t k = 0; k < d; ++k) u[k] = context(i, k) - v(j, k);
                    by_ablation[j] = w / std::max(1.0 - w, 1e-12) * projected_norm(u, w_o, c, h, d);
                }
                const double a = spearman(by_weight, by_ablation), bv = spearman(by_value, by_ablation);
                if (std::isfinite(a)) rho_weight.push_back(a);
                if (std::isfinite(bv)) rho_value.push_back(bv);
                top_weight += argmax(by_weight) == argmax(by_ablation);
                top_value += argmax(by_value) == argmax(by_ablation);
                ++queries;
            }
        }
    }
    auto mean = [](const std::vector<double>& x) {
        return x.empty() ? std::nan("") : std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
    };
    const double rw = mean(rho_weight), rv = mean(rho_value);
    const double tw = static_cast<double>(top_weight) / static_cast<double>(std::max<std::size_t>(queries, 1));
    const double tv = static_cast<double>(top_value) / static_cast<double>(std::max<std::size_t>(queries, 1));
    Table table{"importance",
                {"ranking", "mean Spearman vs ablation", "top key = ablation's top key", "queries"},
                {{"weight", detail::number(rw, 3), detail::percent(tw), std::to_string(queries)},
                 {"weight x ||v W_O||", detail::number(rv, 3), detail::percent(tv), std::to_string(queries)}}};
    r.tables.push_back(table);
    r.tables.push_back({"model", {"held-out loss", "held-out accuracy"},
                        {{detail::number(eval.loss), detail::percent(eval.accuracy)}}});
    r.series.push_back(detail::loss_series({"decoder"}, {run}));

    // Held: the weight ranking disagrees with the ablation (mean Spearman below 0.95), and
    // weight·||v|| agrees at least as well as the weight.
    const bool imperfect = rw < 0.95;
    const bool value_closer = rv >= rw;
    r.verdict = imperfect && value_closer ? Verdict::held : imperfect ? Verdict::partly : Verdict::not_held;
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", Message{imperfect && value_closer ? "held" : imperfect ? "partly" : "not_held", {}}},
                       {"queries", std::to_string(queries)},
                       {"rho_weight", detail::format("%.3f", rw)},
                       {"top_weight", detail::percent(tw)},
                       {"rho_value", detail::format("%.3f", rv)},
                       {"top_value", detail::percent(tv)},
                       {"accuracy", detail::percent(eval.accuracy)}}},
                     importance_messages());
    return r;
}

namespace {
const detail::ParameterTable<ImportanceOptions>& importance_parameters() {
    using O = ImportanceOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 3, 512, "task length")
        .integer("k", &O::k, 1, 512, "k_back: distance to recall")
        .model_shape(&O::d_model, &O::num_heads, &O::num_layers)
        .integer("sequences", &O::sequences, 1, 256, "held-out sequences analysed")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::importance_entry() {
    Experiment e;
    e.name = "importance";
    e.section = "§9.2";
    e.claim = kImportanceClaim;
    e.summary = "trained decoder: keys ranked by weight, by weight·||v||, by removing them; rank correlations";
    e.parameters = importance_parameters().parameters();
    e.quick = {{"steps", "100"}, {"log-every", "20"}, {"warmup", "10"}, {"sequences", "4"}, {"eval-batches", "2"}};
    e.messages = importance_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_importance(importance_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
