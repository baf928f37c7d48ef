// §5.2/§3.2: induction heads, the mechanism by which a Transformer copies what followed an earlier
// occurrence of the current token (Olsson et al. 2022, "In-context Learning and Induction Heads";
// the attention-only models of Elhage et al. 2021). They need two heads in series: a
// previous-token head writes "the token before me" into each position, and a head of a later
// layer matches the current token against it. A 1-layer model has no earlier layer to read, so
// it cannot form one; a 2-layer model forms one suddenly, and the loss on a repeated sequence
// falls at the same steps (the phase change).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "attnlab/core/error.hpp"
#include "attnlab/interp/detectors.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kInductionClaim =
    "§5.2/§3.2: induction heads form in a phase change: a 2-layer attention-only model's loss on a repeated "
    "sequence drops sharply while a head that copies from after the previous occurrence appears; a 1-layer "
    "model cannot form one";

const MessageTemplates& induction_messages() {
    static const MessageTemplates m = {
        {"held", "the claim held: {deep}; {shallow}"},
        {"partly", "half the claim held: {deep}; but {shallow}"},
        {"not_held", "the claim did NOT hold here: {deep}; {shallow}"},
        {"untested", "not tested: the claim compares a 1-layer model with one of 2 or more layers, and depths was "
                     "{layers}; {runs}"},
        {"phase", "{run}: phase change between steps {start} and {end}: the repeated-half loss fell from "
                  "{loss_before} to {loss_after} while the best induction score rose from {score_before} to "
                  "{score_after}"},
        {"no_phase", "{run}: no phase change (at the end repeated-half loss {repeated}, first half {first}, best "
                     "induction score {score}: {reason})"},
        {"no_copy", "the repeated half never cost less than half the first half"},
        {"slow", "no stretch of {share} of the {steps} steps held half of its drop"},
        {"no_jump", "the induction score rose only from {score_before} to {score_after}"},
        {"run", "{layers}-layer"},
        {"timing", "training speed {runs}"},
        {"speed", "{run} {speed} steps/s"},
    };
    return m;
}

// Random repeating sequences: n tokens from 0..V-1 (n drawn in [T/4, T/2] per sequence), then
// the same n again and again; targets are the next token at every position.
class RepeatTask final : public Task {
public:
    RepeatTask(std::size_t length, std::size_t vocab) : length_(length), vocab_(vocab) {}
    std::string name() const override { return "repeat"; }
    TaskKind kind() const override { return TaskKind::sequence; }
    std::size_t vocab_size() const override { return vocab_; }
    std::size_t seq_len() const override { return length_; }
    std::size_t num_classes() const override { return vocab_; }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        const std::size_t T = length_, lo = T / 4, hi = T / 2;
        shape_to(batch.tokens, std::array<std::size_t, 2>{batch_size, T});
        shape_to(batch.targets, std::array<std::size_t, 2>{batch_size, T});
        std::vector<std::int32_t> example(T + 1);
        for (std::size_t b = 0; b < batch_size; ++b) {
            const std::size_t n = lo + rng.below(static_cast<std::uint32_t>(hi - lo + 1));
            for (std::size_t t = 0; t <= T; ++t) {
                example[t] = t < n ? static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(vocab_)))
                                   : example[t - n];
            }
            for (std::size_t t = 0; t < T; ++t) {
                batch.tokens(b, t) = example[t];
                batch.targets(b, t) = example[t + 1];
            }
        }
    }

    std::string decode(const std::int32_t* tokens, std::size_t n) const override {
        std::string s;
        for (std::size_t i = 0; i < n; ++i) s += (i ? " " : "") + std::to_string(tokens[i]);
        return s;
    }

private:
    std::size_t length_, vocab_;
};

// One logged point of a run on the held-out repeated sequences.
struct Point {
    double first = 0, repeated = 0, score = 0;
    std::size_t best_layer = 0, best_head = 0;
};

// The held-out sequences: interp::random_repeat(N, V, seed + i), N = T/2, as rows of (S, 2N).
Index2 held_out(std::size_t count, std::size_t n, std::size_t vocab, std::uint64_t seed) {
    Index2 tokens = Index2::from_shape({count, 2 * n});
    for (std::size_t i = 0; i < count; ++i) {
        const auto seq = interp::random_repeat(n, vocab, seed + i);
        std::copy(seq.begin(), seq.end(), &tokens(i, 0));
    }
    return tokens;
}

// The mean next-token loss over positions [from, to) of every row: logits (S, T, V), tokens (S, T);
// position t predicts tokens(s, t + 1).
double mean_loss(const Tensor3& logits, const Index2& tokens, std::size_t from, std::size_t to) {
    const std::size_t S = logits.shape(0), V = logits.shape(2);
    double sum = 0.0;
    for (std::size_t s = 0; s < S; ++s) {
        for (std::size_t t = from; t < to; ++t) {
            const float* row = &logits(s, t, 0);
            const float top = *std::max_element(row, row + V);
            double z = 0.0;
            for (std::size_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(row[v] - top));
            sum += std::log(z) + top - row[tokens(s, t + 1)];
        }
    }
    return sum / static_cast<double>(S * (to - from));
}

// Losses of both halves and the best head's induction score (averaged over the sequences).
Point measure(const Model& model, const Index2& tokens) {
    const std::size_t S = tokens.shape(0), n = tokens.shape(1) / 2;
    const Tensor3 logits = model.sequence_logits(tokens);
    Point p;
    p.first = mean_loss(logits, tokens, 0, n - 1);       // predicting tokens 1..N-1
    p.repeated = mean_loss(logits, tokens, n, 2 * n - 1);  // predicting tokens N+1..2N-1
    std::vector<double> sum;
    std::vector<interp::HeadScores> heads;
    for (std::size_t s = 0; s < S; ++s) {
        const std::vector<std::int32_t> seq(&tokens(s, 0), &tokens(s, 0) + 2 * n);
        heads = interp::detect_heads(model.decoder(), seq);
        sum.resize(heads.size(), 0.0);
        for (std::size_t h = 0; h < heads.size(); ++h) sum[h] += heads[h].score(HeadPattern::induction).value_or(0.0);
    }
    const auto best = static_cast<std::size_t>(std::max_element(sum.begin(), sum.end()) - sum.begin());
    p.score = sum[best] / static_cast<double>(S);
    p.best_layer = heads[best].layer;
    p.best_head = heads[best].head;
    return p;
}

struct RunCurves {
    std::string name;
    std::size_t layers = 0;
    std::vector<double> steps, first, repeated, score, train_loss;
    Point last;
    std::size_t steps_done = 0, parameters = 0;
    std::optional<std::size_t> failed_step;
    std::string error;
    double seconds = 0.0;
};

// Trains one attention-only decoder, measuring at step 0 and every log_every steps; each
// measurement goes out as a progress point's values.
RunCurves train_one(const InductionOptions& o, const Task& task, const Index2& eval, std::size_t layers,
                    const detail::RunLabel& label, const ProgressFn& progress) {
    ModelConfig config = detail::decoder_config(task, o.d_model, o.num_heads, layers);
    config.attention_only = true;
    config.validate();
    Model model(config, o.train.seed);
    // The learning rate stays at lr after the warm-up: the phase change then comes at about the
    // same step in a short run and in a long one.
    TrainerOptions schedule = detail::trainer_options(o.train);
    schedule.total_steps = 0;
    schedule.min_lr = o.train.lr;
    Trainer trainer(model, task, schedule);
    RunCurves c;
    c.name = label.name;
    c.layers = layers;
    c.parameters = model.num_parameters();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto record = [&](std::size_t step, float loss, double train_loss) {
        const Point p = measure(model, eval);
        c.steps.push_back(static_cast<double>(step));
        c.first.push_back(p.first);
        c.repeated.push_back(p.repeated);
        c.score.push_back(p.score);
        c.train_loss.push_back(train_loss);
        c.last = p;
        if (!progress) return;
        std::vector<std::pair<std::string, double>> values = {
            {"first_half_loss", p.first}, {"repeated_half_loss", p.repeated}, {"induction_score", p.score}};
        // The phase change as the curves so far show it, measured against the whole run's steps.
        const InductionPhaseChange so_far = find_induction_phase_change(c.steps, c.first, c.repeated, c.score, o.window,
                                                                        static_cast<double>(o.train.steps));
        if (so_far.found) {
            values.emplace_back("phase_start", so_far.start);
            values.emplace_back("phase_end", so_far.end);
        }
        progress({label.name, label.index, label.count, step, o.train.steps, loss, std::move(values)});
    };
    record(0, nan, nan);
    double loss_sum = 0.0;
    std::size_t in_interval = 0;
    StepMetrics m;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t step = 0; step < o.train.steps; ++step) {
        try {
            trainer.step(m);
        } catch (const ValueError& e) {
            c.failed_step = step;
            c.error = e.what();
            break;
        }
        c.steps_done = step + 1;
        loss_sum += m.loss;
        ++in_interval;
        if (c.steps_done % o.train.log_every == 0 || c.steps_done == o.train.steps) {
            record(c.steps_done, m.loss, loss_sum / static_cast<double>(in_interval));
            loss_sum = 0.0;
            in_interval = 0;
        } else if (progress) {
            progress({label.name, label.index, label.count, c.steps_done, o.train.steps, m.loss});
        }
    }
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return c;
}

std::string fixed(double v, int decimals = 3) { return detail::number(v, decimals); }

// The conclusion's part for one run: its phase change, or why there is none.
Message run_message(const RunCurves& c, const InductionPhaseChange& pc, const InductionOptions& o) {
    if (pc.found) {
        return {"phase",
                {{"run", c.name}, {"start", fixed(pc.start, 0)}, {"end", fixed(pc.end, 0)},
                 {"loss_before", fixed(pc.loss_before)}, {"loss_after", fixed(pc.loss_after)},
                 {"score_before", fixed(pc.score_before, 2)}, {"score_after", fixed(pc.score_after, 2)}}};
    }
    Message reason;
    if (!pc.copies) {
        reason = {"no_copy", {}};
    } else if (!pc.sharp) {
        reason = {"slow", {{"share", detail::percent(o.window)}, {"steps", std::to_string(c.steps_done)}}};
    } else {
        reason = {"no_jump", {{"score_before", fixed(pc.score_before, 2)}, {"score_after", fixed(pc.score_after, 2)}}};
    }
    return {"no_phase",
            {{"run", c.name}, {"repeated", fixed(c.repeated.back())}, {"first", fixed(c.first.back())},
             {"score", fixed(c.score.back(), 2)}, {"reason", MessageValue(reason)}}};
}

Series curves(const char* name, const char* y_label, const std::vector<RunCurves>& runs,
              std::vector<double> RunCurves::*member) {
    Series s;
    s.name = name;
    s.x_label = "step";
    s.y_label = y_label;
    std::size_t longest = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (runs[i].steps.size() > runs[longest].steps.size()) longest = i;
    }
    s.x = runs[longest].steps;
    for (const RunCurves& c : runs) {
        std::vector<double> y = c.*member;
        y.resize(s.x.size(), std::numeric_limits<double>::quiet_NaN());  // a run that stopped early
        s.lines.push_back({c.name, y});
    }
    return s;
}

void add_tables(Result& r, const std::vector<RunCurves>& runs, const std::vector<InductionPhaseChange>& found) {
    Table phase{"phase_change",
                {"run", "layers", "phase change", "start step", "end step", "repeated-half loss before",
                 "repeated-half loss after", "induction score before", "induction score after"},
                {}};
    Table final{"final",
                {"run", "layers", "parameters", "first-half loss", "repeated-half loss", "best induction score",
                 "best head", "steps/s"},
                {}};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const RunCurves& c = runs[i];
        const InductionPhaseChange& pc = found[i];
        const auto or_dash = [&](const std::string& v) { return pc.copies ? v : std::string("-"); };
        phase.rows.push_back({c.name, std::to_string(c.layers), pc.found ? "yes" : "no", or_dash(fixed(pc.start, 0)),
                              or_dash(fixed(pc.end, 0)), or_dash(fixed(pc.loss_before)), or_dash(fixed(pc.loss_after)),
                              or_dash(fixed(pc.score_before, 2)), or_dash(fixed(pc.score_after, 2))});
        const double speed = c.seconds > 0 ? static_cast<double>(c.steps_done) / c.seconds : 0.0;
        final.rows.push_back({c.name, std::to_string(c.layers), std::to_string(c.parameters), fixed(c.last.first),
                              fixed(c.last.repeated), fixed(c.last.score, 3),
                              detail::format("%zu.%zu", c.last.best_layer, c.last.best_head), fixed(speed, 1)});
    }
    r.tables.push_back(phase);
    r.tables.push_back(final);
}

void validate(const InductionOptions& o) {
    constexpr const char* where = "run_induction";
    o.train.validate(where);
    if (o.length < 8 || o.length % 2 != 0) {
        fail<ConfigError>(where, ": length must be even and at least 8 (periods length/4..length/2), got ", o.length);
    }
    if (o.vocab < 2) fail<ConfigError>(where, ": vocab must be at least 2, got ", o.vocab);
    if (o.layers.empty()) fail<ConfigError>(where, ": layers must not be empty");
    if (!(o.window > 0.0f && o.window <= 1.0f)) fail<ConfigError>(where, ": window must be in (0, 1], got ", o.window);
}

// The verdict and conclusion from each run's phase change: the deepest run must show one, a
// 1-layer run must not.
void conclude_runs(Result& r, const InductionOptions& o, const std::vector<RunCurves>& runs,
                   const std::vector<InductionPhaseChange>& found) {
    std::optional<std::size_t> deep, shallow;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (runs[i].layers >= 2 && (!deep || runs[i].layers > runs[*deep].layers)) deep = i;
        if (runs[i].layers == 1 && !shallow) shallow = i;
    }
    std::vector<Message> all;
    for (std::size_t i = 0; i < runs.size(); ++i) all.push_back(run_message(runs[i], found[i], o));
    if (!deep || !shallow) {
        r.verdict = Verdict::untested;
        std::string layers;
        for (std::size_t l : o.layers) layers += (layers.empty() ? "" : ",") + std::to_string(l);
        detail::conclude(r, {"untested", {{"layers", layers}, {"runs", {all, "; "}}}}, induction_messages());
        return;
    }
    const bool deep_formed = found[*deep].found, shallow_formed = found[*shallow].found;
    r.verdict = !deep_formed ? Verdict::not_held : shallow_formed ? Verdict::partly : Verdict::held;
    const char* id = !deep_formed ? "not_held" : shallow_formed ? "partly" : "held";
    detail::conclude(r,
                     {id,
                      {{"deep", MessageValue(run_message(runs[*deep], found[*deep], o))},
                       {"shallow", MessageValue(run_message(runs[*shallow], found[*shallow], o))}}},
                     induction_messages());
}

}  // namespace

InductionPhaseChange find_induction_phase_change(const std::vector<double>& steps, const std::vector<double>& first,
                                                 const std::vector<double>& repeated, const std::vector<double>& score,
                                                 double window_share, double span) {
    const std::size_t n = steps.size();
    if (n == 0 || first.size() != n || repeated.size() != n || score.size() != n) {
        fail<ConfigError>("find_induction_phase_change: steps, first, repeated and score must be non-empty lists of one "
                          "length, got ", n, ", ", first.size(), ", ", repeated.size(), ", ", score.size());
    }
    InductionPhaseChange pc;
    const double drop = repeated[0] - repeated[n - 1];
    pc.copies = repeated[n - 1] <= first[n - 1] / 2 && drop > 0;
    if (!pc.copies) return pc;
    // The steepest stretch: the largest fall between two points at most window_share x span apart.
    std::size_t a = 0, b = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n && steps[j] - steps[i] <= window_share * span; ++j) {
            if (repeated[i] - repeated[j] > repeated[a] - repeated[b]) a = i, b = j;
        }
    }
    const double fall = repeated[a] - repeated[b];
    // Trimmed to where the loss falls: from the last point within 10% of the fall of its top to
    // the first point within 10% of its bottom.
    std::size_t start = a, end = b;
    for (std::size_t i = a; i <= b; ++i) {
        if (repeated[i] >= repeated[a] - 0.1 * fall) start = i;
    }
    for (std::size_t j = b + 1; j-- > start;) {
        if (repeated[j] <= repeated[a] - 0.9 * fall) end = j;
    }
    pc.start = steps[start];
    pc.end = steps[end];
    pc.loss_before = repeated[start];
    pc.loss_after = repeated[end];
    pc.score_before = score[start];
    pc.score_after = score[end];
    pc.sharp = fall > 0 && fall >= 0.5 * drop;
    pc.score_jumped = pc.score_after - pc.score_before >= 0.2;
    pc.found = pc.copies && pc.sharp && pc.score_jumped;
    return pc;
}

Result run_induction(const InductionOptions& o, const ProgressFn& progress) {
    validate(o);
    const RepeatTask task(o.length, o.vocab);
    const Index2 eval = held_out(o.train.eval_batches * o.train.batch_size, o.length / 2, o.vocab, o.train.seed + 0xE7A1);

    Result r;
    r.name = "induction";
    r.claim = kInductionClaim;
    r.config = {{"task", detail::format("random tokens 0..%zu repeating with a period drawn in %zu..%zu, T = %zu",
                                        o.vocab - 1, o.length / 4, o.length / 2, o.length)},
                {"model", detail::format("attention-only decoder (no feed-forward), d_model %zu, %zu heads, rope",
                                         o.d_model, o.num_heads)},
                {"held-out", detail::format("%zu sequences of %zu random tokens then the same %zu again",
                                            eval.shape(0), o.length / 2, o.length / 2)}};
    detail::add_training_config(r, o.train);
    for (auto& [key, value] : r.config) {
        if (key == "lr") {
            value = detail::format("%g (AdamW, constant after the warm-up)", static_cast<double>(o.train.lr));
        }
    }

    std::vector<RunCurves> runs;
    for (std::size_t i = 0; i < o.layers.size(); ++i) {
        const std::string name =
            detail::phrase(r, {"run", {{"layers", std::to_string(o.layers[i])}}}, induction_messages());
        runs.push_back(train_one(o, task, eval, o.layers[i], {name, i, o.layers.size()}, progress));
        if (runs.back().failed_step) {
            detail::note(r, {"stopped", {{"run", name}, {"error", runs.back().error}}});
        }
    }
    std::vector<InductionPhaseChange> found;
    for (const RunCurves& c : runs) {
        found.push_back(find_induction_phase_change(c.steps, c.first, c.repeated, c.score, o.window,
                                                    static_cast<double>(c.steps_done)));
    }
    r.series.push_back(curves("repeated_half_loss", "held-out loss on the repeated half", runs, &RunCurves::repeated));
    r.series.push_back(curves("first_half_loss", "held-out loss on the first half", runs, &RunCurves::first));
    r.series.push_back(curves("induction_score", "best induction score over heads", runs, &RunCurves::score));
    r.series.push_back(curves("train_loss", "mean training loss over the steps since the previous point", runs,
                              &RunCurves::train_loss));
    add_tables(r, runs, found);
    conclude_runs(r, o, runs, found);

    std::vector<Message> speeds;
    for (const RunCurves& c : runs) {
        const double speed = c.seconds > 0 ? static_cast<double>(c.steps_done) / c.seconds : 0.0;
        speeds.push_back({"speed", {{"run", c.name}, {"speed", fixed(speed, 1)}}});
    }
    detail::set_timing(r, {"timing", {{"runs", {speeds, ", "}}}}, induction_messages());
    return r;
}

namespace {
const detail::ParameterTable<InductionOptions>& induction_parameters() {
    using O = InductionOptions;
    static const auto table = detail::ParameterTable<O>()
        .integer("vocab", &O::vocab, 2, 4096, "random tokens 0..vocab-1")
        .integer("length", &O::length, 8, 512, "training sequence length T (even); held-out: T/2 tokens twice")
        .integers("depths", &O::layers, 1, 8, "layers of each attention-only model to train, comma-separated")
        .integer("d-model", &O::d_model, 2, 512, "model width C")
        .integer("heads", &O::num_heads, 1, 16, "attention heads per layer")
        .number("phase-window", &O::window, 0.01, 1, "largest share of the steps a sharp drop may take")
        .training(&O::train);
    return table;
}
}  // namespace

Experiment detail::induction_entry() {
    Experiment e;
    e.name = "induction";
    e.section = "§5.2 §3.2";
    e.claim = kInductionClaim;
    e.summary = "1- vs 2-layer attention-only decoders on repeated random tokens: in-context loss, induction score";
    e.parameters = induction_parameters().parameters();
    e.quick = {{"steps", "600"}, {"log-every", "30"}};
    e.messages = induction_messages();
    e.run = [](const Values& v, const ProgressFn& progress) {
        return run_induction(induction_parameters().read(v), progress);
    };
    return e;
}

}  // namespace attnlab::experiments
