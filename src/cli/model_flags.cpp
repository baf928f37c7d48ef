#include "model_flags.hpp"

#include <algorithm>
#include <type_traits>

namespace attnlab::cli {

void add_task_flags(Args& args) {
    std::string names;
    for (const auto& n : task_names()) names += (names.empty() ? "" : ", ") + n;
    args.add("task", "reverse", "task: " + names);
    args.add("length", "", "task length (default: the task's own)");
    args.add("vocab", "", "task vocabulary / symbol count (default: the task's own)");
    args.add("k", "", "k_back: distance to recall");
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

// A flag's help: the field's doc, and what a 0 stands for where cli_defaults says.
std::string flag_help(const ModelConfigField& field) {
    const std::string name = field.name;
    if (name == "ff_dim") return std::string(field.doc) + " (0 = 4 x d-model)";
    if (name == "max_len") return std::string(field.doc) + " (0 = the task's length)";
    return field.doc;
}
}  // namespace

void add_model_flags(Args& args) {
    // One flag per field of model/config.hpp's table that has one; a bool's flag is a switch to
    // the opposite of its default.
    cli_defaults().for_each_field([&](const ModelConfigField& field, const auto& value) {
        if (!field.cli) return;
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>) {
            args.add_switch(field.cli, std::string(field.name) + " = " + format_field(!value) + ": " + field.doc);
        } else {
            args.add(field.cli, format_field(value), flag_help(field));
        }
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

TaskOptions task_options(const Args& args) {
    TaskOptions o;
    if (!args.get("length").empty()) o.length = args.get_size("length");
    if (!args.get("vocab").empty()) o.vocab = args.get_size("vocab");
    if (!args.get("k").empty()) o.k = args.get_size("k");
    return o;
}

std::unique_ptr<Task> task_from(const Args& args) { return make_task(args.get("task"), task_options(args)); }

ModelConfig model_config(const Args& args, const Task& task) {
    ModelConfig c;
    c.for_each_field([&](const ModelConfigField& field, auto& value) {
        if (!field.cli) return;
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>) {
            if (args.get_switch(field.cli)) value = !value;
        } else {
            const std::string flag = std::string("--") + field.cli;
            parse_field("attnlab", flag.c_str(), args.get(field.cli), value);
        }
    });
    const bool classification = task.kind() == TaskKind::classification;
    c.kind = classification ? ModelKind::encoder : ModelKind::decoder;
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
