// §3.3 MQA / GQA (Shazeer 2019; Ainslie et al. 2023): query heads share key/value heads, so
// W_K and W_V shrink and, above all, the KV cache a decoder keeps per generated token shrinks by
// num_heads / num_kv_heads, at a small cost in quality.
#include <algorithm>
#include <chrono>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kKvHeadsClaim =
    "§3.3: MQA/GQA share key/value heads: a KV cache num_heads/num_kv_heads times smaller, fewer parameters, little "
    "loss in quality";

// The English templates of the conclusion and the timing line (Result::conclusion_message).
const MessageTemplates& kv_heads_messages() {
    static const MessageTemplates m = {
        {"conclusion",
         "{verdict}: {kv} keeps {floats} floats per token in its KV cache vs {first_floats} for {first} "
         "({ratio}x smaller) with {parameters} vs {first_parameters} parameters; held-out accuracy "
         "{accuracy} vs {first_accuracy}"},
        {"held", "the claim held"},
        {"not_held", "the claim did NOT hold for quality"},
        {"partly", "the claim held in part: {runs} lost more than 5 points of accuracy"},
        {"not_shown",
         "not shown by this run: {first} itself reached only {first_accuracy}, so there was no quality to lose "
         "(more steps)"},
        {"name", "{run}"},
        {"timing", "KV-cached generation: {first} {first_rate} tokens/s, {kv} {rate} tokens/s"},
        {"run", "{kind} kv={kv}"},
    };
    return m;
}

}  // namespace

Result run_kv_heads(const KvHeadsOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_kv_heads";
    o.train.validate(where);
    if (o.kv_heads.empty()) fail<ConfigError>(where, ": kv_heads must not be empty");
    const auto task = detail::sequence_task(where, o.task, o.length);

    Result r;
    r.name = "kv_heads";
    r.claim = kKvHeadsClaim;
    r.config = {{"task", detail::format("%s, length %zu (T = %zu)", o.task.c_str(), o.length, task->seq_len())},
                {"model", detail::format("decoder, %zu layers, d_model %zu, %zu query heads, rope, pre-LN",
                                         o.num_layers, o.d_model, o.num_heads)},
                {"generation", detail::format("greedy, KV-cached, %zu new tokens after a 1-token prompt", o.gen_tokens)}};
    detail::add_training_config(r, o.train);

    std::vector<std::string> names;
    std::vector<detail::RunOutcome> runs;
    std::vector<EvalResult> finals;
    std::vector<std::size_t> params, cache_floats;
    std::vector<double> rates;
    Table table{"final",
                {"kv heads", "kind", "parameters", "held-out loss", "held-out accuracy", "KV floats/token",
                 "KV bytes/token (fp32)", "generated tokens/s"},
                {}};
    for (std::size_t i = 0; i < o.kv_heads.size(); ++i) {
        ModelConfig config = detail::decoder_config(*task, o.d_model, o.num_heads, o.num_layers);
        config.num_kv_heads = o.kv_heads[i];
        config.validate();
        Model model(config, o.train.seed);
        const std::size_t hkv = config.kv_heads();
        const char* kind = hkv == config.num_heads ? "MHA" : hkv == 1 ? "MQA" : "GQA";
        names.push_back(detail::phrase(r, {"run", {{"kind", kind}, {"kv", std::to_string(hkv)}}}, kv_heads_messages()));
        runs.push_back(detail::train_run(model, *task, detail::trainer_options(o.train), o.train,
                                         {names.back(), i, o.kv_heads.size()}, progress));
        if (runs.back().failed_step) detail::stopped_note(r, names.back(), runs.back());
        finals.push_back(detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size));
        params.push_back(model.num_parameters());
        // Each block caches k and v, (B, Hkv, S, D): per token 2 · Hkv · D floats per layer.
        cache_floats.push_back(2 * config.num_layers * hkv * config.head_dim());

        const auto start = std::chrono::steady_clock::now();
        const GenerateResult g = model.decoder().generate({0}, o.gen_tokens);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double rate = seconds > 0 ? static_cast<double>(g.tokens.size() - 1) / seconds : 0.0;
        table.rows.push_back({std::to_string(hkv), kind, std::to_string(params.back()),
                              detail::number(finals.back().loss), detail::percent(finals.back().accuracy),
                              std::to_string(cache_floats.back()), std::to_string(4 * cache_floats.back()),
                              detail::number(rate, 0)});
        rates.push_back(rate);
    }
    r.tables.push_back(table);
    r.series.push_back(detail::loss_series(names, runs));

    const std::size_t last = o.kv_heads.size() - 1;
    // "Little loss in quality": every run sharing key/value heads within 5 accuracy points of the
    // first (MHA) run, which must itself have learned the task (more than half right).
    std::vector<Message> lost;
    for (std::size_t i = 1; i < finals.size(); ++i) {
        if (finals[i].accuracy + 0.05f < finals[0].accuracy) lost.push_back({"name", {{"run", names[i]}}});
    }
    Message verdict{"held", {}};
    r.verdict = Verdict::held;
    if (!(finals[0].accuracy > 0.5f)) {
        verdict = {"not_shown", {{"first", names[0]}, {"first_accuracy", detail::percent(finals[0].accuracy)}}};
        r.verdict = Verdict::untested;
    } else if (!lost.empty() && lost.size() + 1 == finals.size()) {
        verdict = {"not_held", {}};
        r.verdict = Verdict::not_held;
    } else if (!lost.empty()) {
        verdict = {"partly", {{"runs", {lost, ", "}}}};
        r.verdict = Verdict::partly;
    }
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", verdict},
                       {"kv", names[last]},
                       {"floats", std::to_string(cache_floats[last])},
                       {"first_floats", std::to_string(cache_floats[0])},
                       {"first", names[0]},
                       {"ratio", detail::format("%.1f", static_cast<double>(cache_floats[0]) /
                                                            static_cast<double>(cache_floats[last]))},
                       {"parameters", std::to_string(params[last])},
                       {"first_parameters", std::to_string(params[0])},
                       {"accuracy", detail::percent(finals[last].accuracy)},
                       {"first_accuracy", detail::percent(finals[0].accuracy)}}},
                     kv_heads_messages());
    detail::set_timing(r,
                       {"timing",
                        {{"first", names[0]},
                         {"first_rate", detail::format("%.0f", rates[0])},
                         {"kv", names[last]},
                         {"rate", detail::format("%.0f", rates[last])}}},
                       kv_heads_messages());
    return r;
}

namespace {
const detail::ParameterTable<KvHeadsOptions>& kv_heads_parameters() {
    using O = KvHeadsOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 1, 512, "task length")
        .integer("d-model", &O::d_model, 2, 1024, "model width C")
        .integer("heads", &O::num_heads, 1, 64, "query heads")
        .integer("layers", &O::num_layers, 1, 24, "Transformer blocks")
        .integers("kv-heads", &O::kv_heads, 1, 64, "key/value head counts to compare (divisors of heads)")
        .integer("gen-tokens", &O::gen_tokens, 1, 4096, "tokens generated to time the KV-cached decoder")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::kv_heads_entry() {
    Experiment e;
    e.name = "kv-heads";
    e.section = "§3.3";
    e.claim = kKvHeadsClaim;
    e.summary = "MHA / GQA / MQA (num_kv_heads 4, 2, 1): parameters, accuracy, KV cache per token";
    e.parameters = kv_heads_parameters().parameters();
    e.quick = {{"steps", "100"}, {"log-every", "20"}, {"warmup", "10"}, {"eval-batches", "2"}, {"gen-tokens", "50"}};
    e.messages = kv_heads_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_kv_heads(kv_heads_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
