#include "attnlab/train/trainer.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <sstream>

#include "attnlab/train/memory.hpp"

namespace attnlab {

void TrainerOptions::validate() const {
    constexpr const char* where = "TrainerOptions";
    if (!(lr > 0.0f) || !std::isfinite(lr)) fail<ConfigError>(where, ": lr must be positive and finite, got ", lr);
    if (!(min_lr >= 0.0f) || min_lr > lr) fail<ConfigError>(where, ": min_lr must be in [0, lr=", lr, "], got ", min_lr);
    if (batch_size == 0) fail<ConfigError>(where, ": batch_size must be positive, got 0");
    if (!(clip_norm >= 0.0f)) fail<ConfigError>(where, ": clip_norm must be >= 0 (0 = off), got ", clip_norm);
    if (!(weight_decay >= 0.0f)) fail<ConfigError>(where, ": weight_decay must be >= 0, got ", weight_decay);
    if (total_steps > 0 && warmup_steps > total_steps) {
        fail<ConfigError>(where, ": warmup_steps (", warmup_steps, ") exceeds total_steps (", total_steps, ")");
    }
    if (!(loss_scale.scale > 0.0f) || !std::isfinite(loss_scale.scale)) {
        fail<ConfigError>(where, ": loss_scale must be positive and finite, got ", loss_scale.scale);
    }
    if (loss_scale.dynamic && loss_scale.growth_interval == 0) {
        fail<ConfigError>(where, ": the dynamic loss scale's growth_interval must be positive, got 0");
    }
}

LossScaling LossScaling::parse(const std::string& text) {
    LossScaling out;
    if (text == "dynamic") {
        out.dynamic = true;
        out.scale = 65536.0f;  // 2^16, GradScaler's start: halving finds the largest safe scale quickly
        return out;
    }
    char* end = nullptr;
    errno = 0;
    const float value = std::strtof(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !(value > 0.0f) || !std::isfinite(value)) {
        fail<ConfigError>("loss scale must be a positive number or 'dynamic', got '", text, "'");
    }
    out.scale = value;
    return out;
}

std::string LossScaling::to_string() const {
    if (dynamic) return "dynamic";
    std::ostringstream s;
    s << scale;
    return s.str();
}

namespace {
std::unique_ptr<Optimizer> optimizer_for(const TrainerOptions& o) {
    OptimizerOptions opt;
    opt.weight_decay = o.weight_decay;
    opt.decay = decay_matrices_only;
    if (o.optimizer == "adamw") {
        opt.beta1 = o.beta1;
        opt.beta2 = o.beta2;
    } else if (o.optimizer == "sgd") {
        opt.momentum = o.momentum;
    }
    return make_optimizer(o.optimizer, opt);
}

bool all_finite(const std::vector<ParameterView>& grads) {
    for (const ParameterView& g : grads) {
        for (std::size_t i = 0, n = g.size(); i < n; ++i) {
            if (!std::isfinite(g.data[i])) return false;
        }
    }
    return true;
}

// grads /= scale, undoing the loss scale before clipping and the update.
void unscale(const std::vector<ParameterView>& grads, float scale) {
    const float inverse = 1.0f / scale;
    for (const ParameterView& g : grads) {
        for (std::size_t i = 0, n = g.size(); i < n; ++i) g.data[i] *= inverse;
    }
}

std::unique_ptr<Schedule> schedule_for(const TrainerOptions& o) {
    ScheduleOptions s;
    s.lr = o.lr;
    s.min_lr = o.min_lr;
    s.warmup_steps = o.warmup_steps;
    s.total_steps = o.total_steps;
    return make_schedule(o.total_steps > 0 ? "cosine" : "constant", s);
}
}  // namespace

Trainer::Trainer(Model& model, const Task& task, const TrainerOptions& options)
    : model_(model), task_(task), options_(options), data_rng_(options.seed), scale_(options.loss_scale.scale) {
    options_.validate();
    constexpr const char* where = "Trainer";
    const ModelConfig& c = model.config();
    const bool classification = task.kind() == TaskKind::classification;
    const bool regression = task.kind() == TaskKind::regression;
    if (regression != c.is_forecaster()) {
        fail<ConfigError>(where, ": task '", task.name(), "' ",
                          regression ? "forecasts values and needs a forecaster model" : "needs a token or image model",
                          ", got kind ", model_kind_name(c.kind));
    }
    if (regression && (c.num_features != task.num_features() || c.horizon != task.horizon())) {
        fail<ConfigError>(where, ": the forecaster reads ", c.num_features, " features and forecasts ", c.horizon,
                          " steps, task '", task.name(), "' has ", task.num_features(), " features and horizon ",
                          task.horizon());
    }
    if (regression && c.architecture == Architecture::transformer && c.positional == PositionalKind::learned &&
        task.seq_len() > c.max_len) {
        fail<ConfigError>(where, ": task '", task.name(), "' has a context of ", task.seq_len(),
                          " steps but the learned position table holds max_len = ", c.max_len);
    }
    if (regression) {
        finish_setup();
        return;
    }
    if (classification && c.kind != ModelKind::encoder) {
        fail<ConfigError>(where, ": task '", task.name(), "' is a classification task and needs an encoder model");
    }
    if (!classification && c.kind != ModelKind::decoder) {
        fail<ConfigError>(where, ": task '", task.name(), "' is a sequence task and needs a decoder model");
    }
    if ((task.input() == TaskInput::pixels) != c.is_image() || (task.input() == TaskInput::paired) != c.is_crossmodal()) {
        fail<ConfigError>(where, ": task '", task.name(), "' reads ",
                          task.input() == TaskInput::pixels   ? "images and needs a vit or swin model"
                          : task.input() == TaskInput::paired ? "images with captions and needs a crossmodal model"
                                                              : "tokens and needs a transformer or lstm model",
                          ", got architecture ", architecture_name(c.architecture));
    }
    if ((c.is_image() || c.is_crossmodal()) && c.image_size != task.image_size()) {
        fail<ConfigError>(where, ": the model reads ", c.image_size, "x", c.image_size, " images, task '", task.name(),
                          "' draws ", task.image_size(), "x", task.image_size());
    }
    if (c.vocab_size < task.vocab_size()) {
        fail<ConfigError>(where, ": the model's vocab_size (", c.vocab_size, ") is smaller than task '", task.name(),
                          "' needs (", task.vocab_size(), ")");
    }
    if (classification && c.num_classes != task.num_classes()) {
        fail<ConfigError>(where, ": the model has ", c.num_classes, " classes, task '", task.name(), "' has ",
                          task.num_classes());
    }
    const std::size_t positions = task.seq_len() + (classification && c.pooling == Pooling::cls ? 1 : 0);
    if (!c.is_image() && c.positional == PositionalKind::learned && positions > c.max_len) {
        fail<ConfigError>(where, ": task '", task.name(), "' has sequences of ", positions,
                          " positions but the learned position table holds max_len = ", c.max_len);
    }
    finish_setup();
}

void Trainer::finish_setup() {
    optimizer_ = optimizer_for(options_);
    schedule_ = schedule_for(options_);
    keep_freed_memory();  // evaluation (and a caller's own tensors) free and re-create memory
    use_huge_pages();     // the activations a step streams, on 2 MiB pages (train/memory.hpp)
    model_.set_record_attention_stats(options_.track_attention);
    params_ = model_.parameters();
    grads_ = model_.gradients();
}

void Trainer::record_attention(StepMetrics& m) const {
    if (options_.track_attention) {
        const AttentionStats& stats = model_.attention_stats();
        m.max_score = stats.max_abs();
        m.head_entropy.assign(stats.entropy.begin(), stats.entropy.end());
    } else {
        m.max_score = 0.0f;
        m.head_entropy.clear();
    }
}

StepMetrics Trainer::step() {
    StepMetrics m;
    step(m);
    return m;
}

void Trainer::step(StepMetrics& m) {
    const auto start = std::chrono::steady_clock::now();
    task_.sample_into(options_.batch_size, data_rng_, batch_);
    model_.zero_grad();
    model_.set_loss_scale(scale_);
    const LossOfStep result = loss_and_backward_of_step();
    if (!std::isfinite(result.loss)) {
        const ModelConfig& c = model_.config();
        const bool emulated = !c.precision_options().is_plain();
        const std::string precision = emulated ? std::string(precision_name(c.precision)) : std::string();
        const std::string softmax = emulated ? std::string(softmax_precision_name(c.softmax_precision)) : std::string();
        const bool naive = emulated && !c.stable_softmax;
        throw NonFiniteLoss(
            detail::concat("Trainer: the loss is ", result.loss, " at step ", step_,
                           "; training stopped (try a lower learning rate, clipping, or scaling on",
                           emulated ? "; attention runs in " + precision + " with softmax " + softmax + (naive ? ", naive" : "") +
                                          ": a softmax in fp32 (stable) keeps large scores finite"
                                    : std::string(),
                           ")"),
            detail::concat(result.loss), step_, precision, softmax, naive);
    }
    m.step = step_;
    m.loss_scale = scale_;
    m.skipped = false;
    if (options_.loss_scale.dynamic && !all_finite(grads_)) {
        // The scaled gradients overflowed: skip the update, halve the scale.
        scale_ *= 0.5f;
        clean_steps_ = 0;
        m.skipped = true;
        m.grad_norm = std::numeric_limits<float>::infinity();
        m.lr = schedule_->lr_at(step_);
        result.write(m);
        record_attention(m);
        ++step_;
        m.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return;
    }
    if (scale_ != 1.0f) unscale(grads_, scale_);
    require_finite_gradients(grads_, step_);
    if (options_.loss_scale.dynamic && ++clean_steps_ >= options_.loss_scale.growth_interval) {
        scale_ *= 2.0f;
        clean_steps_ = 0;
    }
    m.grad_norm = options_.clip_norm > 0.0f ? clip_grad_norm(grads_, options_.clip_norm) : global_grad_norm(grads_);
    m.lr = schedule_->lr_at(step_);
    optimizer_->step(params_, grads_, m.lr);
    result.write(m);
    record_attention(m);
    ++step_;
    m.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void Trainer::LossOfStep::write(StepMetrics& m) const {
    m.loss = loss;
    m.accuracy = accuracy;
    m.mae = mae;
    m.baseline_mse = baseline_mse;
    m.baseline_mae = baseline_mae;
}

Trainer::LossOfStep Trainer::loss_and_backward_of_step() {
    LossOfStep out;
    if (task_.kind() == TaskKind::regression) {
        const RegressionResult r = model_.regression_loss_and_backward(batch_);
        const RegressionResult base = mse_forward(batch_.baseline, batch_.forecast);
        out.loss = r.mse;
        out.accuracy = kNoMetric;
        out.mae = r.mae;
        out.baseline_mse = base.mse;
        out.baseline_mae = base.mae;
        return out;
    }
    const CrossEntropyResult r = model_.loss_and_backward(batch_);
    out.loss = r.loss;
    out.accuracy = r.count ? static_cast<float>(r.correct) / static_cast<float>(r.count) : 0.0f;
    return out;
}

namespace {
// Regression over `batches` batches: sums weighted by each batch's count, like the cross-entropy.
EvalResult evaluate_regression(Model& model, const Task& task, std::size_t batches, std::size_t batch_size,
                               std::uint64_t seed) {
    Rng rng(seed);
    double mse = 0.0, mae = 0.0, base_mse = 0.0, base_mae = 0.0;
    std::size_t count = 0;
    Batch batch;
    for (std::size_t i = 0; i < batches; ++i) {
        task.sample_into(batch_size, rng, batch);
        const RegressionResult r = model.evaluate_regression(batch);
        const RegressionResult base = mse_forward(batch.baseline, batch.forecast);
        const double n = static_cast<double>(r.count);
        mse += r.mse * n;
        mae += r.mae * n;
        base_mse += base.mse * n;
        base_mae += base.mae * n;
        count += r.count;
    }
    EvalResult e;
    e.count = count;
    const double n = count ? static_cast<double>(count) : 1.0;
    e.loss = static_cast<float>(mse / n);
    e.accuracy = kNoMetric;
    e.mae = static_cast<float>(mae / n);
    e.baseline_mse = static_cast<float>(base_mse / n);
    e.baseline_mae = static_cast<float>(base_mae / n);
    return e;
}
}  // namespace

EvalResult evaluate_model(Model& model, const Task& task, std::size_t batches, std::size_t batch_size,
                          std::uint64_t seed) {
    if (task.kind() == TaskKind::regression) return evaluate_regression(model, task, batches, batch_size, seed);
    Rng rng(seed);
    double loss_sum = 0.0;
    std::size_t count = 0, correct = 0;
    for (std::size_t i = 0; i < batches; ++i) {
        const CrossEntropyResult r = model.evaluate(task.sample(batch_size, rng));
        loss_sum += static_cast<double>(r.loss) * static_cast<double>(r.count);
        count += r.count;
        correct += r.correct;
    }
    EvalResult e;
    e.count = count;
    e.loss = count ? static_cast<float>(loss_sum / static_cast<double>(count)) : 0.0f;
    e.accuracy = count ? static_cast<float>(correct) / static_cast<float>(count) : 0.0f;
    return e;
}

EvalResult Trainer::evaluate(std::size_t batches, std::uint64_t seed) {
    if (batches == 0) fail<ConfigError>("Trainer::evaluate: batches must be positive, got 0");
    return evaluate_model(model_, task_, batches, options_.batch_size, seed);
}

}  // namespace attnlab
