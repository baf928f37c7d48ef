// §6.1: the causal mask. A decoder trained without it lets position t attend to token t + 1,
// which is exactly its target: the teacher-forced loss collapses, but at generation time the
// next token does not exist yet, so the model has learned nothing it can use.
#include <algorithm>
#include <cmath>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kMaskClaim =
    "§6.1: without the causal mask the training loss collapses suspiciously fast (each position sees its answer) and "
    "generation fails; the masked model trained as long generates well";

// The English templates of the conclusion (Result::conclusion_message).
const MessageTemplates& mask_messages() {
    static const MessageTemplates m = {
        {"conclusion",
         "{verdict}: without the mask the training loss fell to {unmasked_loss} (masked {masked_loss}) "
         "and teacher-forced accuracy is {unmasked_forced}, yet greedy generation gets "
         "{unmasked_generated} right (masked: {masked_forced} teacher-forced, {masked_generated} "
         "generated)"},
        {"held", "the claim held"},
        {"partly",
         "the claim held for the unmasked model, but the masked model generates only {masked_generated} "
         "right (train longer)"},
        {"not_held", "the claim did NOT hold here"},
        {"samples", "samples: {run}"},
    };
    return m;
}


// Text in double quotes with newlines and quotes escaped, so a sample stays on one line.
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '\n') out += "\\n";
        else if (c == '"') out += "\\\"";
        else out += c;
    }
    return out + "\"";
}

struct Generated {
    std::size_t right = 0, total = 0;
    std::vector<std::string> samples;  // "prompt | generated | expected"
};

// Greedy decoding by recomputing the whole sequence each step with the model's own forward (so
// whatever mask the model trained with is the one it generates with; a KV cache would assume a
// causal model). The prompt is everything before the first scored target (plus that position's
// input); LM tasks with every target scored are prompted with their first half.
Generated generate_answers(Model& model, const Task& task, std::size_t examples, std::size_t shown) {
    DecoderLM& lm = model.decoder();
    const bool was_training = lm.training();
    lm.eval();
    Generated g;
    Rng rng(0x6E4E);
    const Batch batch = task.sample(examples, rng);
    const std::size_t t = batch.tokens.shape(1);
    for (std::size_t b = 0; b < examples; ++b) {
        std::size_t first = 0;
        while (first < t && batch.targets(b, first) < 0) ++first;
        if (first == 0) first = t / 2;
        std::vector<std::int32_t> seq(&batch.tokens(b, 0), &batch.tokens(b, 0) + first + 1);
        std::vector<std::int32_t> expected(&batch.targets(b, first), &batch.targets(b, 0) + t);
        std::vector<std::int32_t> got;
        for (std::size_t i = 0; i < expected.size(); ++i) {
            Index2 tokens = Index2::from_shape({1, seq.size()});
            std::copy(seq.begin(), seq.end(), tokens.begin());
            const Tensor3 logits = lm.forward(tokens);  // (1, T', V)
            const float* last = &logits(0, seq.size() - 1, 0);
            const std::size_t v = logits.shape(2);
            const auto next = static_cast<std::int32_t>(std::max_element(last, last + v) - last);
            got.push_back(next);
            seq.push_back(next);
        }
        for (std::size_t i = 0; i < expected.size(); ++i) g.right += got[i] == expected[i];
        g.total += expected.size();
        if (b < shown) {
            g.samples.push_back(quoted(task.decode(seq.data(), first + 1)) + " -> " +
                                quoted(task.decode(got.data(), got.size())) + "   (expected " +
                                quoted(task.decode(expected.data(), expected.size())) + ")");
        }
    }
    lm.train(was_training);
    return g;
}

}  // namespace

Result run_mask(const MaskOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_mask";
    o.train.validate(where);
    const auto task = detail::sequence_task(where, o.task, o.length);
    const ModelConfig masked = detail::decoder_config(*task, o.d_model, o.num_heads, o.num_layers);

    Result r;
    r.name = "mask";
    r.claim = kMaskClaim;
    r.config = {{"task", detail::format("%s, length %zu (T = %zu)", o.task.c_str(), o.length, task->seq_len())},
                {"model", detail::format("decoder, %zu layers, d_model %zu, %zu heads, rope, pre-LN", o.num_layers,
                                         o.d_model, o.num_heads)},
                {"generation", detail::format("greedy, full recompute per token, %zu held-out prompts", o.gen_examples)}};
    detail::add_training_config(r, o.train);

    // The same decoder with its causal mask off (ModelConfig::causal): each position sees its answer.
    ModelConfig unmasked = masked;
    unmasked.causal = false;
    const std::vector<std::string> names{"causal mask", "no mask"};
    const std::vector<ModelConfig> configs{masked, unmasked};

    std::vector<detail::RunOutcome> runs;
    Table table{"final",
                {"run", "last train loss", "held-out loss (teacher-forced)", "teacher-forced accuracy",
                 "generated accuracy"},
                {}};
    std::vector<double> forced, generated, last_loss;
    for (std::size_t i = 0; i < configs.size(); ++i) {
        Model model(configs[i], o.train.seed);
        runs.push_back(detail::train_run(model, *task, detail::trainer_options(o.train), o.train,
                                         {names[i], i, configs.size()}, progress));
        if (runs.back().failed_step) detail::stopped_note(r, names[i], runs.back());
        const EvalResult e = detail::evaluate(model, *task, o.train.eval_batches, o.train.batch_size);
        const Generated g = generate_answers(model, *task, std::max(o.gen_examples, o.samples), o.samples);
        const double gen_acc = g.total ? static_cast<double>(g.right) / static_cast<double>(g.total) : 0.0;
        forced.push_back(e.accuracy);
        generated.push_back(gen_acc);
        last_loss.push_back(runs.back().loss.back());
        table.rows.push_back({names[i], detail::number(runs.back().loss.back()), detail::number(e.loss),
                              detail::percent(e.accuracy), detail::percent(gen_acc)});
        Table samples{detail::phrase(r, {"samples", {{"run", names[i]}}}, mask_messages()),
                      {"prompt -> greedy generation   (expected)"},
                      {}};
        for (const std::string& s : g.samples) samples.rows.push_back({s});
        r.tables.push_back(samples);
    }
    r.tables.insert(r.tables.begin(), table);
    r.series.push_back(detail::loss_series(names, runs));

    // Held: the unmasked loss ends lower, yet its generated answers trail the masked model's
    // by 30 points while the masked model generates at least 80% right.
    const bool collapsed = last_loss[1] < last_loss[0];
    const bool fails = generated[1] + 0.3 < generated[0];
    const bool masked_good = generated[0] >= 0.8;
    r.verdict = collapsed && fails && masked_good ? Verdict::held
                : collapsed && fails              ? Verdict::partly
                                                  : Verdict::not_held;
    const Message verdict = collapsed && fails && masked_good ? Message{"held", {}}
                            : collapsed && fails ? Message{"partly", {{"masked_generated", detail::percent(generated[0])}}}
                                                 : Message{"not_held", {}};
    detail::conclude(r,
                     {"conclusion",
                      {{"verdict", verdict},
                       {"unmasked_loss", detail::format("%.3f", last_loss[1])},
                       {"masked_loss", detail::format("%.3f", last_loss[0])},
                       {"unmasked_forced", detail::percent(forced[1])},
                       {"unmasked_generated", detail::percent(generated[1])},
                       {"masked_forced", detail::percent(forced[0])},
                       {"masked_generated", detail::percent(generated[0])}}},
                     mask_messages());
    return r;
}

namespace {
const detail::ParameterTable<MaskOptions>& mask_parameters() {
    using O = MaskOptions;
    static const auto table = detail::ParameterTable<O>()
        .text("task", &O::task, detail::sequence_task_names(), "task")
        .integer("length", &O::length, 1, 512, "task length")
        .model_shape(&O::d_model, &O::num_heads, &O::num_layers)
        .integer("samples", &O::samples, 0, 100, "generated examples to show")
        .integer("gen-examples", &O::gen_examples, 1, 1000, "held-out prompts whose generated answers are scored")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::mask_entry() {
    Experiment e;
    e.name = "mask";
    e.section = "§6.1";
    e.claim = kMaskClaim;
    e.summary = "decoder with and without the causal mask: leaked training loss vs generated answers";
    e.parameters = mask_parameters().parameters();
    e.quick = {{"steps", "200"}, {"log-every", "25"}, {"warmup", "10"}, {"gen-examples", "16"}, {"eval-batches", "2"}};
    e.messages = mask_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_mask(mask_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
