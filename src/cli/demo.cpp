// `attnlab demo`: one multi-head attention call on a short sentence, every stage printed.
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "args.hpp"
#include "attnlab/attnlab.hpp"
#include "commands.hpp"
#include "engine_flags.hpp"
#include "field_flags.hpp"
#include "pretrained.hpp"
#include "text_flags.hpp"

namespace attnlab::cli {
namespace {

std::vector<std::string> split_words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

// A deterministic embedding per word: the same word always gets the same vector for a seed,
// so permuting the sentence permutes the rows (the §4.1 experiment is visible in the output).
Tensor3 embed(const std::vector<std::string>& words, std::size_t c, std::uint64_t seed) {
    Tensor3 x = Tensor3::from_shape({1, words.size(), c});
    for (std::size_t i = 0; i < words.size(); ++i) {
        Rng rng(seed * 0x9E3779B97F4A7C15ull ^ std::hash<std::string>{}(words[i]));
        for (std::size_t j = 0; j < c; ++j) x(0, i, j) = rng.normal();
    }
    return x;
}

void print_matrix(const Tensor2& m, const std::vector<std::string>& row_labels,
                  const std::vector<std::string>& col_labels) {
    std::printf("%10s", "");
    for (std::size_t j = 0; j < m.shape(1); ++j) {
        std::printf(" %8.8s", j < col_labels.size() ? col_labels[j].c_str() : std::to_string(j).c_str());
    }
    std::printf("\n");
    for (std::size_t i = 0; i < m.shape(0); ++i) {
        std::printf("%10.10s", i < row_labels.size() ? row_labels[i].c_str() : std::to_string(i).c_str());
        for (std::size_t j = 0; j < m.shape(1); ++j) {
            const float v = m(i, j);
            if (std::isinf(v)) std::printf(" %8s", v < 0 ? "-inf" : "inf");
            else std::printf(" %8.4f", v);
        }
        std::printf("\n");
    }
}

const char* explain(Stage s) {
    switch (s) {
        case Stage::x: return "token embeddings (+ positions), one row per token";
        case Stage::q: return "queries: x·W_Qᵀ + b_Q, this head's slice";
        case Stage::k: return "keys: x·W_Kᵀ + b_K, this key/value head's slice";
        case Stage::v: return "values: x·W_Vᵀ + b_V, this key/value head's slice";
        case Stage::q_rot: return "queries rotated by RoPE (angle grows with position)";
        case Stage::k_rot: return "keys rotated by RoPE";
        case Stage::scores: return "S = Q·Kᵀ: row i, column j is q_i · k_j";
        case Stage::scaled: return "S · scale (1/sqrt(d_k) keeps the softmax out of saturation)";
        case Stage::masked: return "hidden keys set to -inf";
        case Stage::weights: return "softmax of each row: every row sums to 1, hidden keys get exactly 0";
        case Stage::context: return "weights·V: each row a weighted average of value rows";
        case Stage::concat: return "all heads' context side by side";
        case Stage::output: return "concat·W_Oᵀ + b_O";
    }
    return "";
}

// Prints `stage` of the trace: whole-width stages once, per-head stages for each head (or only
// `only_head` when >= 0), with the tokens as row (and, for the T x T stages, column) labels.
// `in_model`: the trace is of a model's layer, whose x is its attention input, not an embedding.
void print_stage(const TraceRecorder& trace, Stage s, const std::vector<std::string>& words, long long only_head,
                 bool in_model) {
    const bool keyed = s == Stage::scores || s == Stage::scaled || s == Stage::masked || s == Stage::weights;
    const std::vector<std::string> no_labels;
    if (!stage_is_per_head(s)) {
        const char* what = in_model && s == Stage::x
                               ? "the layer's attention input (after its LayerNorm for pre-LN), one row per token"
                               : explain(s);
        std::printf("\n== %s %s: %s\n", std::string(stage_name(s)).c_str(), shape_string(trace.get(s).shape()).c_str(), what);
        print_matrix(trace.get(s), words, no_labels);
        return;
    }
    for (std::size_t h = 0; h < trace.num_heads(s); ++h) {
        if (only_head >= 0 && static_cast<long long>(h) != only_head) continue;
        const Tensor2& m = trace.get(s, 0, static_cast<std::ptrdiff_t>(h));
        std::printf("\n== %s, head %zu %s: %s\n", std::string(stage_name(s)).c_str(), h, shape_string(m.shape()).c_str(),
                    explain(s));
        print_matrix(m, words, keyed ? words : no_labels);
    }
}

// `attnlab demo --model FILE --text TEXT`: every stage of one layer (and head) of a saved or
// pretrained decoder on the tokens of the text.
int run_model_demo(const Args& args) {
    Model model = load_model_file(args.get("model"), args.get("config"), "attnlab demo");
    if (!model.is_decoder() || model.is_lstm()) {
        fail<ConfigError>("attnlab demo: --model must hold a transformer decoder (its attention is what the demo shows)");
    }
    const text::Tokenizer* tokenizer = apply_tokenizer_flag(args, model);
    if (!tokenizer) fail<ConfigError>("attnlab demo: --model's text needs a tokenizer: give --tokenizer DIR");
    const std::vector<text::TokenSpan> spans = tokenizer->encode_spans(args.get("text"));
    if (spans.empty()) fail<ConfigError>("attnlab demo: the text \"", args.get("text"), "\" has no tokens");
    require_prompt_fits(model, spans.size(), "attnlab demo");
    const ModelConfig& c = model.config();
    const long long layer = args.get_int("layer"), head = args.get_int("head");
    if (layer < 0 || static_cast<std::size_t>(layer) >= c.num_layers) {
        fail<ConfigError>("attnlab demo: --layer must be 0 .. ", c.num_layers - 1, ", got ", layer);
    }
    if (head < -1 || (head >= 0 && static_cast<std::size_t>(head) >= c.num_heads)) {
        fail<ConfigError>("attnlab demo: --head must be -1 (all) or 0 .. ", c.num_heads - 1, ", got ", head);
    }
    Index2 tokens = Index2::from_shape({1, spans.size()});
    std::vector<std::string> words;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        tokens(0, i) = spans[i].id;
        words.push_back(args.get("text").substr(spans[i].begin, spans[i].end - spans[i].begin));
    }
    const std::unique_ptr<TraceRecorder> trace = model.trace_layer(tokens, static_cast<std::size_t>(layer));
    std::printf("attnlab demo: %s, layer %lld of %zu, %zu tokens, d_model %zu, %zu heads of d_k %zu\n",
                args.get("model").c_str(), layer, c.num_layers, spans.size(), c.d_model, c.num_heads, c.head_dim());
    for (Stage s : trace->stages()) print_stage(*trace, s, words, head, true);
    return 0;
}

}  // namespace

int run_demo(int argc, char** argv) {
    Args args("demo", "Runs one multi-head self-attention layer with random weights on a short sentence and\n"
                      "prints every recorded stage (x, Q, K, V, scores, scaled, masked, weights, context, concat, output).");
    args.add("text", "the cat sat on the mat", "the input sentence (words separated by spaces)");
    args.add("d-model", "8", "model width C");
    args.add("heads", "2", "number of query heads H (C must be divisible by H)");
    args.add("kv-heads", "0", "key/value heads (0 = same as heads; 1 = MQA; a divisor of heads = GQA)");
    args.add("pe", "none", "positional encoding: none, sinusoidal or rope");
    args.add("mask", "causal", "none, causal, or padding (appends two padding tokens that no query may see)");
    args.add("head", "-1", "print only this head (-1 = all)");
    args.add("model", "", "a decoder checkpoint (attnlab's, or a GPT-2 model.safetensors): its layer --layer on --text's tokens");
    args.add("config", "", "with --model: config.json of a GPT-2 checkpoint");
    args.add("tokenizer", "", "with --model: directory of the tokenizer's files (unless the checkpoint carries one)");
    args.add("layer", "0", "with --model: the layer whose stages are printed");
    args.add("seed", "1", "seed of the random weights and embeddings");
    // The attention options that have a flag (attention/attention_options.hpp's table).
    const AttentionOptions defaults;
    for_each_attention_option(defaults, [&](const auto& field, const auto& value) { add_field_flag(args, field, value); });
    add_engine_flags(args);
    if (!args.parse(argc, argv, 2)) return 0;
    apply_engine_flags(args);
    if (!args.get("model").empty()) {
        // The model's config decides its layers: the flags of the random layer do not apply.
        std::vector<std::string> layer_flags = {"d-model", "heads", "kv-heads", "pe", "mask", "seed"};
        for_each_attention_option(defaults, [&](const auto& field, const auto&) {
            if (field.cli) layer_flags.emplace_back(field.cli);
        });
        for (const std::string& flag : layer_flags) {
            if (args.given(flag)) {
                fail<ConfigError>("attnlab demo: --", flag, " sets the random layer; with --model the model's config decides it");
            }
        }
        return run_model_demo(args);
    }

    std::vector<std::string> words = split_words(args.get("text"));
    if (words.empty()) fail<ConfigError>("attnlab demo: --text must contain at least one word");
    const std::string mask_kind = args.get("mask");
    const PositionalKind pe = positional_from_name(args.get("pe"));
    if (pe == PositionalKind::learned) fail<ConfigError>("attnlab demo: --pe learned needs training; use none, sinusoidal or rope");
    if (pe == PositionalKind::time) fail<ConfigError>("attnlab demo: --pe time needs timestamps (a forecaster); use none, sinusoidal or rope");

    MultiHeadAttentionConfig config;
    config.d_model = args.get_size("d-model");
    config.num_heads = args.get_size("heads");
    config.num_kv_heads = args.get_size("kv-heads");
    const auto seed = static_cast<std::uint64_t>(args.get_int("seed"));
    Rng rng(seed);
    MultiHeadAttention mha(config, rng);

    AttentionOptions options;
    const std::size_t real_tokens = words.size();
    if (mask_kind == "causal") {
        options.mask.causal = true;
    } else if (mask_kind == "padding") {
        words.push_back("<pad>");
        words.push_back("<pad>");
        options.mask.key_padding = padding_mask_from_lengths({real_tokens}, words.size());
    } else if (mask_kind != "none") {
        fail<ConfigError>("attnlab demo: --mask must be none, causal or padding, got '", mask_kind, "'");
    }
    for_each_attention_option(options, [&](const auto& field, auto& value) { read_field_flag(args, field, value); });
    options.rope = pe == PositionalKind::rope;

    Tensor3 x = embed(words, config.d_model, seed);
    if (pe == PositionalKind::sinusoidal) add_sinusoidal(x);

    TraceRecorder trace;
    mha.forward(x, nullptr, options, &trace);

    const long long only_head = args.get_int("head");
    std::printf("attnlab demo: %zu tokens, d_model %zu, %zu heads of d_k %zu, %zu key/value heads, pe %s, mask %s, scale %g, "
                "normalizer %s\n",
                words.size(), config.d_model, config.num_heads, config.head_dim(), config.kv_heads(),
                std::string(positional_name(pe)).c_str(), mask_kind.c_str(), options.scale.effective(config.head_dim()),
                std::string(normalizer_name(options.normalizer)).c_str());
    for (Stage s : trace.stages()) print_stage(trace, s, words, only_head, false);
    if (!options.precision.is_plain()) {
        std::printf("\n== numerics in %s (softmax %s, %s): per stage over all heads\n",
                    std::string(precision_name(options.precision.format)).c_str(),
                    std::string(softmax_precision_name(options.precision.softmax)).c_str(),
                    options.precision.stable_softmax ? "stable" : "naive");
        std::printf("%-8s %12s %7s %7s %7s %8s\n", "stage", "max |value|", "+inf", "-inf", "NaN", "flushed");
        for (const StageNumerics& n : trace.numerics()) {
            std::printf("%-8s %12.6g %7zu %7zu %7zu %8zu\n", std::string(stage_name(n.stage)).c_str(),
                        static_cast<double>(n.max_abs), n.pos_inf, n.neg_inf, n.nan, n.flushed);
        }
    }
    return 0;
}

}  // namespace attnlab::cli
