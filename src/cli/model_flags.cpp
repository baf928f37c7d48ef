#include "model_flags.hpp"

#include <algorithm>
#include <type_traits>

#include "field_flags.hpp"

namespace attnlab::cli {

void add_task_flags(Args& args) {
    std::string names;
    for (const auto& n : task_names()) names += (names.empty() ? "" : ", ") + n;
    args.add("task", "reverse", "task: " + names);
    args.add("length", "", "task length (default: the task's own)");
    args.add("vocab", "", "task vocabulary / symbol count (default: the task's own)");
    args.add("k", "", "k_back: distance to recall");
    args.add("context", "", "series: steps the model reads (default 48)");
    args.add("horizon", "", "series: steps to forecast (default 12)");
    args.add("periods", "", "series: comma-separated periods of the sines, e.g. 12,24 (the default)");
    args.add("features", "", "series: series per example, feature 0 is forecast (default 1)");
    args.add("trend", "", "series: largest |slope| per step (default 0.01)");
    args.add("noise", "", "series: standard deviation of the noise (default 0.1)");
    args.add("drift", "", "series: relative growth of the periods over an example, in [0, 1) (default 0)");
}

const std::vector<const char*>& task_flag_names() {
    static const std::vector<const char*> names{"task",     "length",   "vocab", "k",     "context", "horizon",
                                                "periods",  "features", "trend", "noise", "drift"};
    return names;
}

namespace {
// The command line's defaults where they differ from ModelConfig's: a wider model with rope, and
// two sizes that follow other flags or the task when left at 0.
ModelConfig cli_defaults() {
    ModelConfig c;
    c.d_model = 64;
    c.ff_dim = 0;   // 4 x d-model
    c.max_len = 0;  // the task's length
    c.positional = PositionalKind::rope;
    return c;
}

// A flag's help: field_flag_help, and what a 0 stands for where cli_defaults says.
template <class T>
std::string flag_help(const ModelConfigField& field) {
    const std::string name = field.name;
    if (name == "ff_dim") return std::string(field.doc) + " (0 = 4 x d-model)";
    if (name == "max_len") return std::string(field.doc) + " (0 = the task's length)";
    return field_flag_help<T>(field);
}
}  // namespace

void add_model_flags(Args& args) {
    // One flag per field of model/config_fields.hpp's table that has one; a bool's flag is a switch to
    // the opposite of its default.
    cli_defaults().for_each_field([&](const ModelConfigField& field, const auto& value) {
        add_field_flag(args, field, value, flag_help<std::decay_t<decltype(value)>>(field));
    });
    args.add("scale", "on", "attention scaling: on (1/sqrt(D)), off (scale_attention = false), or a number to multiply "
                            "the scores by (attention_scale)");
}

void add_training_flags(Args& args) {
    args.add("steps", "3000", "optimisation steps");
    args.add("batch", "32", "sequences per step");
    args.add("lr", "0.003", "peak learning rate");
    args.add("min-lr", "0.0001", "final learning rate of the cosine schedule");
    args.add("warmup", "100", "linear warm-up steps");
    args.add("schedule", "cosine", "cosine (warm-up then cosine decay over --steps) or constant");
    args.add("optimizer", "adamw", "adamw or sgd");
    args.add("weight-decay", "0.01", "decoupled weight decay (matrices only)");
    args.add("clip", "1", "clip the global gradient norm (0 = off)");
    args.add("seed", "1", "seed of the weights and the batches");
    args.add("loss-scale", "1", "multiply the loss's gradient by N before backward (1 = off), or 'dynamic' (start at "
                                "65536, halve and skip the step on overflow, double after 100 clean steps)");
}

TaskOptions task_options_of(const std::function<std::string(const char*)>& value_of) {
    // Each given flag parsed as its TaskOptions field: "attnlab: --<flag> must be ..., got '<text>'".
    auto read = [&](const char* flag, auto& field) {
        const std::string text = value_of(flag);
        if (text.empty()) return;
        typename std::decay_t<decltype(field)>::value_type value{};
        parse_field("attnlab", ("--" + std::string(flag)).c_str(), text, value);
        field = value;
    };
    TaskOptions o;
    read("length", o.length);
    read("vocab", o.vocab);
    read("k", o.k);
    read("context", o.context);
    read("horizon", o.horizon);
    read("periods", o.periods);
    read("features", o.features);
    read("trend", o.trend);
    read("noise", o.noise);
    read("drift", o.drift);
    return o;
}

TaskOptions task_options(const Args& args) {
    return task_options_of([&](const char* flag) { return args.get(flag); });
}

std::unique_ptr<Task> task_from(const Args& args) { return make_task(args.get("task"), task_options(args)); }

ModelConfig model_config(const Args& args, const Task& task) {
    ModelConfig c;
    c.for_each_field([&](const ModelConfigField& field, auto& value) { read_field_flag(args, field, value); });
    const bool classification = task.kind() == TaskKind::classification;
    c.kind = classification ? ModelKind::encoder : ModelKind::decoder;
    if (task.kind() == TaskKind::regression) {
        c.kind = ModelKind::forecaster;
        c.num_features = task.num_features();
        c.horizon = task.horizon();
        c.time_periods = task.time_periods();
        // Without --pe a forecaster adds the sinusoidal table (the plain Transformer of the
        // comparison); --pe time adds the timestamps' phases.
        if (!args.given("pe")) c.positional = PositionalKind::sinusoidal;
    }
    c.vocab_size = task.vocab_size();
    c.num_classes = classification ? task.num_classes() : 0;
    c.image_size = task.image_size();
    // The command line's rope default does not apply to patches: without --pe a ViT learns its
    // positions and a Swin relies on its relative position bias alone.
    if (c.is_image() && !args.given("pe")) {
        c.positional = c.architecture == Architecture::vit ? PositionalKind::learned : PositionalKind::none;
    }
    if (c.ff_dim == 0) c.ff_dim = 4 * c.d_model;
    const std::size_t positions = task.seq_len() + (classification && c.pooling == Pooling::cls ? 1 : 0);
    if (c.max_len == 0) c.max_len = positions;
    const std::string& scale = args.get("scale");
    if (scale == "off") {
        c.scale_attention = false;
    } else if (scale != "on") {
        c.attention_scale = args.get_float("scale");
    }
    c.validate();
    return c;
}

TrainerOptions trainer_options(const Args& args) {
    TrainerOptions o;
    o.optimizer = args.get("optimizer");
    o.lr = args.get_float("lr");
    o.min_lr = std::min(o.lr, args.get_float("min-lr"));
    o.weight_decay = args.get_float("weight-decay");
    o.batch_size = args.get_size("batch");
    o.warmup_steps = args.get_size("warmup");
    const std::string& schedule = args.get("schedule");
    if (schedule == "cosine") o.total_steps = std::max(args.get_size("steps"), o.warmup_steps);
    else if (schedule == "constant") o.total_steps = 0;
    else fail<ConfigError>("--schedule must be cosine or constant, got '", schedule, "'");
    o.clip_norm = args.get_float("clip");
    o.seed = static_cast<std::uint64_t>(args.get_int("seed"));
    o.loss_scale = LossScaling::parse(args.get("loss-scale"));
    o.validate();
    return o;
}

}  // namespace attnlab::cli
