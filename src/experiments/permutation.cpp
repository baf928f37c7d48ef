// §4.1: "I love you" and "you love I" look the same to attention without positions. Self-
// attention is a weighted sum over keys whose weights depend only on the contents of query and
// key, so permuting the input rows permutes the output rows and nothing else: f(P x) = P f(x).
// The feed-forward network and LayerNorm act on each row alone, so a whole unmasked model keeps
// that symmetry; any positional encoding (and the causal mask) breaks it.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnlab/core/error.hpp"
#include "common.hpp"
#include "entries.hpp"

namespace attnlab::experiments {
namespace {

constexpr const char* kPermutationClaim =
    "§4.1: without positional information attention is permutation-equivariant (\"I love you\" = \"you love I\"): "
    "the outputs of a permuted input are the permuted outputs; every encoding breaks that";

// The conclusion's English templates (Result::conclusion_message).
const MessageTemplates& permutation_messages() {
    static const MessageTemplates m = {
        {"held", "the claim held: {encodings}"},
        {"not_held", "the claim did NOT hold: {encodings}"},
        {"equivariant", "{pe} equivariant (relative gap {gap})"},
        {"not_equivariant", "{pe} not equivariant (relative gap {gap})"},
    };
    return m;
}

}  // namespace

detail::PermutationGap detail::permutation_gap(const ModelConfig& config, std::uint64_t weight_seed, std::size_t length,
                                               std::size_t batches, std::uint64_t seed) {
    const Model model(config, weight_seed);
    Rng rng(seed);
    Index2 tokens = Index2::from_shape({batches, length});  // (B, T)
    Index2 permuted = Index2::from_shape({batches, length});
    std::vector<std::vector<std::size_t>> perms(batches);
    for (std::size_t b = 0; b < batches; ++b) {
        for (std::size_t t = 0; t < length; ++t) {
            tokens(b, t) = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(config.vocab_size)));
        }
        perms[b].resize(length);
        std::iota(perms[b].begin(), perms[b].end(), std::size_t{0});
        for (std::size_t t = length; t > 1; --t) std::swap(perms[b][t - 1], perms[b][rng.below(static_cast<std::uint32_t>(t))]);
        for (std::size_t t = 0; t < length; ++t) permuted(b, t) = tokens(b, perms[b][t]);
    }
    const Tensor3 out = model.sequence_logits(tokens);     // (B, T, V)
    const Tensor3 out_p = model.sequence_logits(permuted);  // (B, T, V)
    PermutationGap g;
    const std::size_t v = out.shape(2);
    for (std::size_t b = 0; b < batches; ++b) {
        for (std::size_t t = 0; t < length; ++t) {
            for (std::size_t c = 0; c < v; ++c) {
                const double a = out(b, perms[b][t], c);
                g.gap = std::max(g.gap, std::abs(static_cast<double>(out_p(b, t, c)) - a));
                g.scale = std::max(g.scale, std::abs(a));
            }
        }
    }
    return g;
}

Result run_permutation(const PermutationOptions& o, const ProgressFn& progress) {
    constexpr const char* where = "run_permutation";
    if (o.encodings.empty()) fail<ConfigError>(where, ": encodings must not be empty");
    if (o.length < 2 || o.vocab < 2 || o.batches == 0) {
        fail<ConfigError>(where, ": length and vocab must be at least 2 and batches positive, got ", o.length, ", ",
                          o.vocab, ", ", o.batches);
    }
    Result r;
    r.name = "permutation";
    r.claim = kPermutationClaim;
    r.config = {{"model", detail::format("decoder without its causal mask, %zu layers, d_model %zu, %zu heads, pre-LN, "
                                         "at initialisation (seed %llu)", o.num_layers, o.d_model, o.num_heads,
                                         static_cast<unsigned long long>(o.seed))},
                {"inputs", detail::format("%zu sequences of %zu tokens (vocabulary %zu), each with its own random "
                                          "permutation", o.batches, o.length, o.vocab)},
                {"equal means", detail::format("max |f(Px) - P f(x)| below %g x max |f(x)|", o.tolerance)}};

    Table table{"permutation", {"pe", "max |f(Px) - P f(x)|", "max |f(x)|", "relative", "equivariant"}, {}};
    std::vector<double> relative;
    for (std::size_t i = 0; i < o.encodings.size(); ++i) {
        ModelConfig config;
        config.kind = ModelKind::decoder;
        config.vocab_size = o.vocab;
        config.max_len = o.length;
        config.d_model = o.d_model;
        config.num_heads = o.num_heads;
        config.num_layers = o.num_layers;
        config.ff_dim = 4 * o.d_model;
        config.causal = false;
        config.positional = positional_from_name(o.encodings[i]);
        const detail::PermutationGap g = detail::permutation_gap(config, o.seed, o.length, o.batches, o.seed + 1);
        relative.push_back(g.scale > 0 ? g.gap / g.scale : 0.0);
        table.rows.push_back({o.encodings[i], detail::format("%.3e", g.gap), detail::format("%.3e", g.scale),
                              detail::format("%.3e", relative.back()), relative.back() < o.tolerance ? "yes" : "no"});
        if (progress) progress({o.encodings[i], i, o.encodings.size(), 1, 1, 0.0f});
    }
    r.tables.push_back(table);

    bool held = true;
    std::vector<Message> parts;
    for (std::size_t i = 0; i < o.encodings.size(); ++i) {
        const bool equal = relative[i] < o.tolerance;
        const bool expected = o.encodings[i] == "none";
        held = held && equal == expected;
        parts.push_back({equal ? "equivariant" : "not_equivariant",
                         {{"pe", o.encodings[i]}, {"gap", detail::format("%.1e", relative[i])}}});
    }
    r.verdict = held ? Verdict::held : Verdict::not_held;
    detail::conclude(r, {held ? "held" : "not_held", {{"encodings", {parts, "; "}}}}, permutation_messages());
    return r;
}

namespace {
const detail::ParameterTable<PermutationOptions>& permutation_parameters() {
    using O = PermutationOptions;
    static const auto table = detail::ParameterTable<O>()
        .integer("length", &O::length, 2, 1024, "tokens per sequence")
        .integer("vocab", &O::vocab, 2, 4096, "vocabulary")
        .model_shape(&O::d_model, &O::num_heads, &O::num_layers)
        .integer("batches", &O::batches, 1, 256, "sequences (each with its own permutation)")
        .texts("pe", &O::encodings, detail::token_positional_names(), "encodings to compare")
        .number("tolerance", &O::tolerance, 1e-9, 1, "relative gap that counts as equal")
        .integer("seed", &O::seed, 0, 4294967295.0, "seed of the weights and inputs");
    return table;
}
}  // namespace

Experiment detail::permutation_entry() {
    Experiment e;
    e.name = "permutation";
    e.section = "§4.1";
    e.claim = kPermutationClaim;
    e.summary = "f(permuted x) vs permuted f(x), unmasked, for none and each encoding: the max difference";
    e.parameters = permutation_parameters().parameters();
    e.quick = {{"batches", "4"}};
    e.messages = permutation_messages();
    e.run = [](const Values& v, const ProgressFn& progress) { return run_permutation(permutation_parameters().read(v), progress); };
    return e;
}

}  // namespace attnlab::experiments
