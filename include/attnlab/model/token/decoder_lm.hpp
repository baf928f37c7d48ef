// attnlab/model/token/decoder_lm.hpp: a tiny GPT — a causal Transformer language model with
// KV-cached generation.
//
// What it is for: next-token prediction on the sequence tasks and the character corpus:
//   tokens (B, T) -> tok_emb -> + positional -> N causal blocks -> ln_f (pre-LN only)
//   -> head -> logits (B, T, V)
// The head has no bias (GPT-2's lm_head). With tie_weights it is the embedding matrix itself
// (logits = h·tok_embᵀ, Press & Wolf 2017): one parameter, whose gradient is the sum of its two
// uses. generate() decodes with one KvCache per block (each step feeds only the newest token;
// LayerNorm and feed-forward are position-wise, so they run on the new rows only) and equals
// generate_uncached(), which recomputes the whole sequence every step (tested). With variant
// linear the KvCache holds each block's recurrent state (Σ φ(k) vᵀ and Σ φ(k) per head) instead
// of keys and values: its size does not grow with the tokens generated.
// Not for: padding inside a sequence (causal LM batches pad at the end and ignore those targets).
//
// Everything up to ln_f is the shared Trunk (trunk.hpp); this class adds the LM head.
// Parameter names (PyTorch state_dict style, in this order; [..] only when configured):
//   the trunk's (tok_emb.weight, [pos_emb.weight], blocks.<i>.*, [ln_f.*]),
//   [head.weight (V, C) unless tie_weights]
//
//   attnlab::ModelConfig config; config.vocab_size = 11; config.positional = attnlab::PositionalKind::rope;
//   attnlab::Rng rng(1);
//   attnlab::DecoderLM gpt(config, rng);
//   gpt.zero_grad();
//   attnlab::CrossEntropyResult r = gpt.loss_and_backward(tokens, targets);   // (B, T), (B, T)
//   attnlab::GenerateResult out = gpt.generate({3, 1, 4}, 8, {/*temperature=*/0.0f, /*seed=*/1});
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/attention/stage.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/token/split_step.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/model/token/trunk.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab {

class DecoderLM;

// Gradients of every parameter, same shapes; backward accumulates into them with +=.
struct DecoderLMGrad {
    TrunkGrad trunk;  // trunk.tok_emb: with tie_weights also the head's gradient
    Tensor2 head;     // (V, C) untied head only, else empty

    DecoderLMGrad() = default;
    explicit DecoderLMGrad(const DecoderLM& model);  // zeros
    void zero();
    void add(const DecoderLMGrad& other);  // += other, tensor by tensor (same shapes)
};

// What backward needs from the last training forward, and the head's buffers.
struct DecoderLMCache {
    bool valid = false;  // set by a training-mode forward; backward refuses to run without one
    TrunkCache trunk;    // tokens, causal mask, the blocks' caches and buffers; its output h (B, T, C)
                         // is the head input: dW_head = dlogitsᵀ·h

    // Buffers reused from step to step (a training loop allocates nothing), not needed by backward.
    Tensor2 logits;        // (B·T, V) loss_and_backward's logits, as rows
    Index1 targets;        // (B·T) its targets, as rows
    CrossEntropyCache ce;  // its loss cache
    Tensor2 dlogits;       // (B·T, V)
};

// One slice of a split training step (loss_and_backward; model/token/split_step.hpp).
struct DecoderLMSlice {
    Index2 tokens;   // (b, T) consecutive sequences of the batch
    Index2 targets;  // (b, T)
    Rng dropout{0};  // this slice's dropout generator, drawn from the model's each step
    CrossEntropyResult result;
};
using DecoderLMSplit = SplitStep<DecoderLMSlice, DecoderLMCache, DecoderLMGrad>;

struct GenerateOptions {
    float temperature = 0.0f;  // 0: greedy (argmax, first maximum); > 0: sample softmax(logits / temperature)
    std::uint64_t seed = 0;    // seeds the sampling generator (unused when greedy)
};

struct GenerateResult {
    std::vector<std::int32_t> tokens;  // prompt followed by the new tokens
    Tensor2 logits;                    // (new tokens, V) the logits each new token was chosen from
};

class DecoderLM {
public:
    // Validates config (kind must be decoder) and initialises the parameters from rng.
    DecoderLM(const ModelConfig& config, Rng& rng);

    const ModelConfig& config() const { return trunk.config(); }

    // Training mode (the default, as in PyTorch) applies dropout and records the cache backward
    // needs; evaluation mode does neither.
    void train(bool on = true) { training_ = on; }
    void eval() { training_ = false; }
    bool training() const { return training_; }
    void seed_dropout(std::uint64_t seed) { dropout_rng_ = Rng(seed); }
    void set_gradient_checkpointing(bool on);

    // tokens: (B, T) -> logits (B, T, V). ValueError for an out-of-range id, or T > max_len with
    // learned positions.
    Tensor3 forward(const Index2& tokens);
    // Backward of the last training-mode forward: dlogits (B, T, V); gradients accumulate (+=).
    void backward(const Tensor3& dlogits);
    // forward + cross-entropy of logits (B·T, V) against targets (B, T) (-1 = ignored) + backward.
    // A large batch runs as micro-batches of whole sequences, in parallel on the pool's threads
    // (src/model/token/micro_batches.hpp: why and how many); the gradients equal the whole batch's up to
    // rounding (tests/model/token/test_decoder_lm.cpp). After a split step backward() has no forward
    // to differentiate.
    CrossEntropyResult loss_and_backward(const Index2& tokens, const Index2& targets);

    // Evaluation forward reporting every block's stages to observers[l] (entries may be null).
    Tensor3 forward_observed(const Index2& tokens, const std::vector<StageObserver*>& observers) const;
    // The same with the residual stream shown to `residuals` (null: none), which may rewrite it,
    // as the observers may rewrite each block's concat stage: the interpretability tools' forward
    // (interp/). tokens (B, T) -> logits (B, T, V).
    Tensor3 forward_hooked(const Index2& tokens, const std::vector<StageObserver*>& observers,
                           ResidualHook* residuals) const;
    // Causal attention weights of batch row `batch` in every block: (L, H, T, T).
    Tensor4 attention_maps(const Index2& tokens, std::size_t batch = 0) const;

    void set_record_attention_stats(bool on) { trunk.set_record_attention_stats(on); }
    // The loss's gradient is multiplied by this before backward (the Trainer's loss scaling: it
    // lifts small gradients above the emulated format's underflow; the Trainer divides it out).
    void set_loss_scale(float scale) { loss_scale_ = scale; }
    const AttentionStats& attention_stats() const { return trunk.attention_stats(); }

    // Appends max_new_tokens tokens to prompt (>= 1 token), each from the logits of the last
    // position. Throws ValueError if prompt.size() + max_new_tokens exceeds max_len with learned
    // positions (naming both), or for an empty prompt / out-of-range id / negative temperature.
    GenerateResult generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                            const GenerateOptions& options = {}) const;
    // The same by recomputing the whole sequence each step: the reference generate() is tested against.
    GenerateResult generate_uncached(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                     const GenerateOptions& options = {}) const;

    std::vector<ParameterView> parameters();
    std::vector<ParameterView> gradients();
    void zero_grad();
    DecoderLMGrad& grads() { return grads_; }

    // The (V, C) matrix the head multiplies by: head.weight, or tok_emb.weight when tied.
    const Tensor2& head_weight() const { return config().tie_weights ? trunk.tok_emb.weight : head.weight; }

    Trunk trunk;  // embeddings, positions, blocks, ln_f
    Linear head;  // (V, C), no bias; empty when tie_weights

private:
    float loss_scale_ = 1.0f;  // set_loss_scale
    // The trunk's forward (training fills cache, inference uses it for buffers only): the head
    // input h (B, T, C), which lives in cache.
    const Tensor3& run(const Index2& tokens, const std::vector<StageObserver*>& observers, DecoderLMCache& cache,
                       bool training, Rng* dropout_rng) const;
    // Logits of an inference forward: (B, T, V).
    Tensor3 run_logits(const Index2& tokens, const std::vector<StageObserver*>& observers) const;
    // forward() up to the head input, with the attention statistics when recording them.
    const Tensor3& forward_hidden(const Index2& tokens, DecoderLMCache& local);
    // Backward from dlogits rows (B·T, V) after the shapes were checked, of the forward that
    // filled cache, into grads.
    void backward_rows(DecoderLMCache& cache, const float* dlogits, DecoderLMGrad& grads) const;
    // Logits (B·T, V) of h, cross-entropy against targets (B, T), and backward, in cache and
    // grads; the mean is over `counted` targets (the whole batch's). -> the slice's loss
    CrossEntropyResult loss_rows_and_backward(DecoderLMCache& cache, const Tensor3& h, const Index2& targets,
                                              std::size_t counted, DecoderLMGrad& grads) const;
    // loss_and_backward as `count` slices on `lanes` lanes (count a multiple of lanes).
    CrossEntropyResult loss_and_backward_split(const Index2& tokens, const Index2& targets, std::size_t count,
                                               std::size_t lanes);
    // h: (B, T, C) -> logits (B, T, V) = h · head_weight()ᵀ
    Tensor3 logits_of(const Tensor3& h) const;
    // Validation shared by both generate functions.
    void check_generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                        const GenerateOptions& options, const char* where) const;

    DecoderLMGrad grads_;
    DecoderLMCache cache_;
    DecoderLMSplit split_;  // a split step's slices and lanes, kept from step to step
    bool training_ = true;
    Rng dropout_rng_;
};

}  // namespace attnlab
