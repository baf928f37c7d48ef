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
#include "real_text.hpp"

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
        {"conclusion_model", "{verdict}. The toy decoder (held-out accuracy {accuracy}): {toy}. The shipped {model} on {text}: {real}"},
        {"arm", "{arm_verdict}: over {queries} queries the weight ranks keys with mean Spearman {rho_weight} against "
                "removing them (its top key is the ablation's top key {top_weight} of the time); weight x ||v W_O|| "
                "{rho_value} ({top_value})"},
        {"both", "the claim held on both models"},
        {"mixed", "the claim held on one model only, or only in part"},
        {"neither", "the claim did NOT hold on either model"},
        {"text_tang", "{count} held-out poems"},
        {"text_brown", "{count} held-out windows of the Brown file ca20"},
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


// The rankings of keys by weight, by weight x ||v W_O|| and by removing them, compared over
// every query seen: per query the Spearman correlation of each with the ablation's ranking,
// and whether their top keys agree.
struct KeyRankings {
    // Held: the weight ranking disagrees with the ablation (mean Spearman below 0.95) and
    // weight x ||v W_O|| agrees at least as well as the weight; partly: only the first.
    Verdict verdict() const {
        const bool imperfect = rho_weight() < 0.95, value_closer = rho_value() >= rho_weight();
        return imperfect && value_closer ? Verdict::held : imperfect ? Verdict::partly : Verdict::not_held;
    }
    // The rows of a table of these rankings, after `lead` cells.
    std::vector<std::vector<std::string>> rows(const std::vector<std::string>& lead) const {
        std::vector<std::string> w = lead, v = lead;
        for (const std::string& cell : {std::string("weight"), detail::number(rho_weight(), 3), detail::percent(top_weight_share()),
                                        std::to_string(queries)}) w.push_back(cell);
        for (const std::string& cell : {std::string("weight x ||v W_O||"), detail::number(rho_value(), 3),
                                        detail::percent(top_value_share()), std::to_string(queries)}) v.push_back(cell);
        return {w, v};
    }
    // The values of the conclusion's numbers.
    std::vector<std::pair<std::string, MessageValue>> values() const {
        return {{"queries", std::to_string(queries)},
                {"rho_weight", detail::format("%.3f", rho_weight())},
                {"top_weight", detail::percent(top_weight_share())},
                {"rho_value", detail::format("%.3f", rho_value())},
                {"top_value", detail::percent(top_value_share())}};
    }
    std::vector<double> rho_weight_each, rho_value_each;
    std::size_t top_weight = 0, top_value = 0, queries = 0;
    static double mean(const std::vector<double>& x) {
        return x.empty() ? std::nan("") : std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
    }
    double rho_weight() const { return mean(rho_weight_each); }
    double rho_value() const { return mean(rho_value_each); }
    double share(std::size_t n) const { return static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(queries, 1)); }
    double top_weight_share() const { return share(top_weight); }
    double top_value_share() const { return share(top_value); }
};

// Adds every head of the last block of `model` on one sequence (1, T), every query i >= 2.
void rank_keys(Model& model, const Index2& one, KeyRankings& out, const char* where) {
    const ModelConfig& config = model.config();
    const std::size_t layer = config.num_layers - 1, c = config.d_model, d = config.head_dim(), t = one.shape(1);
    const std::string w_name = detail::format("blocks.%zu.attn.out_proj.weight", layer);
    const float* w_o = nullptr;
    for (const ParameterView& p : model.parameters()) {
        if (p.name == w_name) w_o = p.data;
    }
    if (!w_o) fail<Error>(where, ": the model has no parameter ", w_name);
    const auto trace = model.trace_layer(one, layer);
    std::vector<double> value_norm(t), u(d);
    for (std::size_t h = 0; h < config.num_heads; ++h) {
        const Tensor2& weights = trace->get(Stage::weights, 0, static_cast<std::ptrdiff_t>(h));  // (T, S)
        const Tensor2& v = trace->get(Stage::v, 0, static_cast<std::ptrdiff_t>(h));              // (S, D)
        const Tensor2& context = trace->get(Stage::context, 0, static_cast<std::ptrdiff_t>(h));  // (T, D)
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
            if (std::isfinite(a)) out.rho_weight_each.push_back(a);
            if (std::isfinite(bv)) out.rho_value_each.push_back(bv);
            out.top_weight += argmax(by_weight) == argmax(by_ablation);
            out.top_value += argmax(by_value) == argmax(by_ablation);
            ++out.queries;
        }
    }
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

    Rng rng(0x1A9E);
    const Batch batch = task->sample(o.sequences, rng);
    const std::size_t t = batch.tokens.shape(1);
    KeyRankings toy;
    for (std::size_t b = 0; b < o.sequences; ++b) {
        Index2 one = Index2::from_shape({1, t});  // (1, T)
        std::copy(&batch.tokens(b, 0), &batch.tokens(b, 0) + t, one.begin());
        rank_keys(model, one, toy, where);
    }
    r.tables.push_back({"importance", {"ranking", "mean Spearman vs ablation", "top key = ablation's top key", "queries"},
                        toy.rows({})});
    r.tables.push_back({"model", {"held-out loss", "held-out accuracy"},
                        {{detail::number(eval.loss), detail::percent(eval.accuracy)}}});
    r.series.push_back(detail::loss_series({"decoder"}, {run}));
    if (o.model_path == "none") {
        r.verdict = toy.verdict();
        auto values = toy.values();
        values.emplace_back("verdict", Message{verdict_name(r.verdict), {}});
        values.emplace_back("accuracy", detail::percent(eval.accuracy));
        detail::conclude(r, {"conclusion", values}, importance_messages());
        return r;
    }
    // The same rankings on a shipped model and its held-out text.
    detail::RealText text = detail::load_real_text(o.model_path, o.data_dir, o.real_sequences, where);
    KeyRankings real;
    for (const detail::RealSequence& seq : text.sequences) {
        Index2 one = Index2::from_shape({1, seq.ids.size()});  // (1, T)
        std::copy(seq.ids.begin(), seq.ids.end(), one.begin());
        rank_keys(text.model, one, real, where);
    }
    const ModelConfig& rc = text.model.config();
    r.config.push_back({"real model", detail::format("%s: %zu layers x %zu heads, d_model %zu (last block analysed); %s",
                                                     o.model_path.c_str(), rc.num_layers, rc.num_heads, rc.d_model,
                                                     text.source.c_str())});
    r.tables.push_back({"real model", {"model", "ranking", "mean Spearman vs ablation", "top key = ablation's top key", "queries"},
                        real.rows({text.name})});
    const Verdict a = toy.verdict(), b = real.verdict();
    r.verdict = a == Verdict::held && b == Verdict::held           ? Verdict::held
                : a == Verdict::not_held && b == Verdict::not_held ? Verdict::not_held
                                                                   : Verdict::partly;
    auto arm = [](const KeyRankings& k) {
        auto values = k.values();
        values.emplace_back("arm_verdict", Message{verdict_name(k.verdict()), {}});
        return Message{"arm", values};
    };
    detail::conclude(r,
                     {"conclusion_model",
                      {{"verdict", Message{r.verdict == Verdict::held ? "both" : r.verdict == Verdict::not_held ? "neither" : "mixed", {}}},
                       {"accuracy", detail::percent(eval.accuracy)},
                       {"toy", arm(toy)},
                       {"model", text.name},
                       {"text", Message{"text_" + text.name, {{"count", std::to_string(o.real_sequences)}}}},
                       {"real", arm(real)}}},
                     importance_messages());
    return r;
}

namespace {
// --model's offered values: none, and every shipped model's file under models/.
std::vector<std::string> shipped_model_paths() {
    std::vector<std::string> paths{"none"};
    for (const std::string& name : detail::real_model_names()) paths.push_back("models/" + name + ".safetensors");
    return paths;
}

const detail::ParameterTable<ImportanceOptions>& importance_parameters() {
    using O = ImportanceOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 3, 512, "task length")
        .integer("k", &O::k, 1, 512, "k_back: distance to recall")
        .model_shape(&O::d_model, &O::num_heads, &O::num_layers)
        .integer("sequences", &O::sequences, 1, 256, "held-out sequences analysed")
        .text("model", &O::model_path, {}, "none, or a shipped model to compare as well (models/tang.safetensors, "
                                            "models/brown.safetensors) on its held-out text")
        .suggest(shipped_model_paths())
        .text("data", &O::data_dir, {}, "folder of the held-out text: splits/ and node_modules/ (scripts/fetch_data.sh)")
        .integer("real-sequences", &O::real_sequences, 1, 16, "--model: held-out poems (tang) or windows (brown)")
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
    e.inputs = [](const Values& v) {
        const ImportanceOptions o = importance_parameters().read(v);
        if (o.model_path == "none") return std::vector<std::string>{};
        // The run reads the corpus from the checkpoint; before it, the shipped ones are known by
        // their names, and any other needs the text of either.
        std::vector<std::string> files;
        for (const std::string& corpus : detail::real_model_names()) {
            const bool named = o.model_path.find(corpus) != std::string::npos;
            const bool other = o.model_path.find(corpus == "tang" ? "brown" : "tang") != std::string::npos;
            if (named || !other) {
                for (std::string& f : detail::real_text_files(corpus, o.model_path, o.data_dir)) {
                    if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(std::move(f));
                }
            }
        }
        return files;
    };
    return e;
}

}  // namespace attnlab::experiments
