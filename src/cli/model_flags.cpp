#include "model_flags.hpp"

#include <algorithm>

namespace attnlab::cli {

void add_task_flags(Args& args) {
    std::string names;
    for (const auto& n : task_names()) names += (names.empty() ? "" : ", ") + n;
    args.add("task", "reverse", "task: " + names);
    args.add("length", "", "task length (default: the task's own)");
    args.add("vocab", "", "task vocabulary / symbol count (default: the task's own)");
    args.add("k", "", "k_back: distance to recall");
}

void add_model_flags(Args& args) {
    args.add("layers", "2", "Transformer blocks");
    args.add("d-model", "64", "model width C");
    args.add("heads", "4", "attention heads H");
    args.add("kv-heads", "0", "key/value heads (0 = heads: MHA; 1 = MQA; a divisor = GQA)");
    args.add("ff", "0", "feed-forward width (0 = 4 x d-model)");
    args.add("pe", "rope", "positional encoding: none, sinusoidal, learned, rope");
    args.add("norm", "pre", "LayerNorm placement: pre or post");
    args.add("scale", "on", "divide scores by sqrt(d_k): on, off, or a number to multiply by");
    args.add("activation", "gelu", "feed-forward activation: gelu or relu");
    args.add("dropout", "0", "dropout probability");
    args.add("pooling", "mean", "encoder pooling: mean or cls");
    args.add("max-len", "0", "positions of a learned table (0 = the task's length)");
    args.add_switch("tie", "decoder: tie the LM head to the token embedding");
    args.add_switch("checkpointing", "recompute block activations in backward (less memory)");
    args.add("window", "0", "sliding-window attention: see keys at most N positions away (0 = full)");
    args.add("global-tokens", "0", "with --window: the first N positions attend and are attended globally");
    args.add_switch("no-causal", "decoder without the causal mask (the article's §6.1 failure: it sees the answer)");
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
    const bool classification = task.kind() == TaskKind::classification;
    c.kind = classification ? ModelKind::encoder : ModelKind::decoder;
    c.vocab_size = task.vocab_size();
    c.num_classes = classification ? task.num_classes() : 0;
    c.num_layers = args.get_size("layers");
    c.d_model = args.get_size("d-model");
    c.num_heads = args.get_size("heads");
    c.num_kv_heads = args.get_size("kv-heads");
    c.ff_dim = args.get_size("ff") == 0 ? 4 * c.d_model : args.get_size("ff");
    c.positional = positional_from_name(args.get("pe"));
    c.norm = norm_placement_from_name(args.get("norm"));
    const std::string& scale = args.get("scale");
    if (scale == "off") {
        c.scale_attention = false;
    } else if (scale != "on") {
        c.attention_scale = args.get_float("scale");
    }
    const std::string& act = args.get("activation");
    if (act == "gelu") c.activation = Activation::gelu;
    else if (act == "relu") c.activation = Activation::relu;
    else fail<ConfigError>("--activation must be gelu or relu, got '", act, "'");
    c.dropout = args.get_float("dropout");
    c.pooling = pooling_from_name(args.get("pooling"));
    c.tie_weights = args.get_switch("tie");
    c.gradient_checkpointing = args.get_switch("checkpointing");
    c.causal = !args.get_switch("no-causal");
    c.attention_window = args.get_size("window");
    c.global_tokens = args.get_size("global-tokens");
    const std::size_t positions = task.seq_len() + (classification && c.pooling == Pooling::cls ? 1 : 0);
    c.max_len = args.get_size("max-len") == 0 ? positions : args.get_size("max-len");
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
    o.validate();
    return o;
}

}  // namespace attnlab::cli
