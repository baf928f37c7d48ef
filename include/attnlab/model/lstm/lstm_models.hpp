// attnlab/model/lstm/lstm_models.hpp: the recurrent baselines — an LSTM language model and an LSTM
// sequence classifier, for ModelConfig::architecture = lstm.
//
// What it is for: training the article's comparison model (§1.1, §5.1: an LSTM carries the
// past only in (h, c)) on the same tasks, with the same Trainer, checkpoints and generation as
// the Transformers (DecoderLM, EncoderClassifier), so both can be compared at equal parameter
// counts (ModelConfig::parameter_count()).
//   LstmLM:         tokens (B, T) -> tok_emb -> num_layers LSTM layers (width C = d_model)
//                   -> head (no bias, or tok_emb.weight with tie_weights) -> logits (B, T, V)
//   LstmClassifier: tokens (B, T) -> tok_emb -> LSTM layers -> h at the last non-padding step
//                   -> head -> logits (B, K)
// The classifier reads the last non-padding step, not a mean over steps: a unidirectional LSTM's
// state there has read the whole sequence, and the trailing padding after it cannot reach it (it
// is only read later in time), so padding never influences the logits, as in the Transformer
// encoder. Padding must therefore be trailing (every task pads at the end); ValueError otherwise.
// Generation carries each layer's (h, c) forward one token at a time: O(1) work per new token,
// equal to recomputing the whole prefix (generate_uncached; tested).
// No attention: attention_stats() stays empty; the facade refuses attention maps and traces.
// Not for: dropout, bidirectional reading (see nn/lstm.hpp).
//
// Parameter names (PyTorch state_dict style, in this order; [..] only when configured):
//   LstmLM:         tok_emb.weight (V, C), lstm.weight_ih_l0 (4C, C), lstm.weight_hh_l0 (4C, C),
//                   [lstm.bias_ih_l0 (4C), lstm.bias_hh_l0 (4C)], ... l1 ..., [head.weight (V, C)]
//   LstmClassifier: tok_emb.weight, lstm.*, head.weight (K, C), [head.bias (K)]
//
//   attnlab::ModelConfig config; config.architecture = attnlab::Architecture::lstm; config.vocab_size = 11;
//   attnlab::Rng rng(1);
//   attnlab::LstmLM lm(config, rng);
//   lm.zero_grad();
//   attnlab::CrossEntropyResult r = lm.loss_and_backward(tokens, targets);   // (B, T), (B, T)
//   attnlab::GenerateResult out = lm.generate({3, 1, 4}, 8);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/nn/embedding.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/lstm.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab {

// Embedding and LSTM layers: what both LSTM models share. Dimension letters: B batch, T steps,
// C = d_model (embedding and hidden width), L layers, V vocabulary.
struct LstmTrunk {
    Embedding tok_emb;  // (V, C)
    Lstm lstm;          // L layers, input and hidden width C

    LstmTrunk() = default;
    LstmTrunk(const ModelConfig& config, Rng& rng);
    // tok_emb.weight, lstm.* in the order listed at the top
    void parameters(std::vector<ParameterView>& out);
};

struct LstmTrunkGrad {
    EmbeddingGrad tok_emb;  // (V, C)
    LstmGrad lstm;

    LstmTrunkGrad() = default;
    explicit LstmTrunkGrad(LstmTrunk& trunk);  // zeros
    void zero();
    void views(std::vector<ParameterView>& out);  // same names and order as LstmTrunk::parameters
};

// What backward needs from the last training forward.
struct LstmTrunkCache {
    bool valid = false;  // set by a training-mode forward
    Index2 tokens;       // (B, T) the embedding's backward scatters by them
    Tensor3 x;           // (B, T, C) embedded tokens
    LstmCache lstm;      // the recurrence's states and gates
    LstmOutput out;      // output (B, T, C): the head's input; h, c (L, B, C)
    Tensor3 dout, dx;    // (B, T, C) backward buffers, kept so a training loop reuses them
};

class LstmLM {
public:
    // Validates config (kind decoder, architecture lstm) and initialises the parameters from rng:
    // the embedding N(0, 0.02²), the LSTM and the head as torch.nn.LSTM / torch.nn.Linear.
    LstmLM(const ModelConfig& config, Rng& rng);

    const ModelConfig& config() const { return config_; }
    void train(bool on = true) { training_ = on; }
    void eval() { training_ = false; }
    bool training() const { return training_; }

    // tokens: (B, T) -> logits (B, T, V). In training mode records what backward needs.
    // ValueError for an out-of-range id or an empty batch.
    Tensor3 forward(const Index2& tokens);
    // An evaluation forward that leaves the model untouched: tokens (B, T) -> logits (B, T, V).
    Tensor3 logits(const Index2& tokens) const;
    // Backward of the last training-mode forward: dlogits (B, T, V); gradients accumulate (+=).
    void backward(const Tensor3& dlogits);
    // forward + cross-entropy of the (B·T, V) logits against targets (B, T) (-1 = ignored) + backward.
    CrossEntropyResult loss_and_backward(const Index2& tokens, const Index2& targets);

    // Appends max_new_tokens tokens to prompt (>= 1 token): the prompt runs once, then each new
    // token runs one LSTM step from the carried (h, c). ValueError for an empty prompt, an
    // out-of-range id or a negative temperature.
    GenerateResult generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                            const GenerateOptions& options = {}) const;
    // The same by recomputing the whole sequence each step: the reference generate() is tested against.
    GenerateResult generate_uncached(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                     const GenerateOptions& options = {}) const;

    // An LSTM has no attention: recording is a no-op and the statistics stay empty.
    void set_record_attention_stats(bool) {}
    // The loss's gradient is multiplied by this before backward (the Trainer's loss scaling).
    void set_loss_scale(float scale) { loss_scale_ = scale; }
    const AttentionStats& attention_stats() const { return no_stats_; }

    std::vector<ParameterView> parameters();
    std::vector<ParameterView> gradients();
    void zero_grad();

    // The (V, C) matrix the head multiplies by: head.weight, or tok_emb.weight when tied.
    const Tensor2& head_weight() const { return config_.tie_weights ? trunk.tok_emb.weight : head.weight; }

    LstmTrunk trunk;
    Linear head;  // (V, C), no bias; empty when tie_weights

private:
    float loss_scale_ = 1.0f;  // set_loss_scale
    // The forward into cache (training keeps what backward needs) -> logits (B, T, V).
    Tensor3 run(const Index2& tokens, LstmTrunkCache& cache, bool training) const;
    // h: (N, C) -> logits (N, V) = h · head_weight()ᵀ
    void logits_of(const float* h, std::size_t n, float* logits) const;
    void check_generate(const std::vector<std::int32_t>& prompt, const GenerateOptions& options,
                        const char* where) const;

    ModelConfig config_;
    LstmTrunkGrad grads_;
    Tensor2 head_grad_;  // (V, C) untied head only, else empty
    LstmTrunkCache cache_;
    Tensor2 logits_, dlogits_;  // (B·T, V) loss_and_backward's buffers
    Index1 targets_;            // (B·T)
    CrossEntropyCache ce_;
    AttentionStats no_stats_;
    bool training_ = true;
};

class LstmClassifier {
public:
    // Validates config (kind encoder, architecture lstm) and initialises the parameters from rng.
    LstmClassifier(const ModelConfig& config, Rng& rng);

    const ModelConfig& config() const { return config_; }
    void train(bool on = true) { training_ = on; }
    void eval() { training_ = false; }
    bool training() const { return training_; }

    // tokens: (B, T); padding: (B, T) 1 = padding, trailing in every row, or empty -> logits (B, K).
    // ValueError for an out-of-range id, a row that is all padding or has a token after padding;
    // ShapeError for a padding mask of another shape.
    Tensor2 forward(const Index2& tokens, const Mask2& padding = {});
    // An evaluation forward that leaves the model untouched: the same arguments -> logits (B, K).
    Tensor2 logits(const Index2& tokens, const Mask2& padding = {}) const;
    // Backward of the last training-mode forward: dlogits (B, K); gradients accumulate (+=).
    void backward(const Tensor2& dlogits);
    // forward + cross-entropy against labels (B) (-1 = ignored) + backward of the mean loss.
    CrossEntropyResult loss_and_backward(const Index2& tokens, const Mask2& padding, const Index1& labels);

    void set_record_attention_stats(bool) {}
    // The loss's gradient is multiplied by this before backward (the Trainer's loss scaling).
    void set_loss_scale(float scale) { loss_scale_ = scale; }
    const AttentionStats& attention_stats() const { return no_stats_; }

    std::vector<ParameterView> parameters();
    std::vector<ParameterView> gradients();
    void zero_grad();

    LstmTrunk trunk;
    Linear head;  // (K, C)

private:
    float loss_scale_ = 1.0f;  // set_loss_scale
    // What backward needs: the trunk's cache and the pooling.
    struct Cache {
        LstmTrunkCache trunk;
        std::vector<std::size_t> last;  // (B) the last non-padding step of each row: the pooled one
        Tensor2 pooled;                 // (B, C) the head's input: dW_head = dlogitsᵀ·pooled
    };
    // The forward into cache (training keeps what backward needs) -> logits (B, K).
    Tensor2 run(const Index2& tokens, const Mask2& padding, Cache& cache, bool training) const;

    ModelConfig config_;
    LstmTrunkGrad grads_;
    LinearGrad head_grad_;
    Cache cache_;
    Tensor2 dpooled_;           // (B, C)
    Tensor2 logits_, dlogits_;  // (B, K)
    CrossEntropyCache ce_;
    AttentionStats no_stats_;
    bool training_ = true;
};

}  // namespace attnlab
