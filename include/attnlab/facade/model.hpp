// attnlab/facade/model.hpp: any of the seven model classes behind one interface.
//
// What it is for: the trainer, the CLI and the JavaScript bindings work with "a model" whose
// class comes from its config or its checkpoint (kind: encoder, decoder or forecaster;
// architecture: transformer, lstm, vit, swin or crossmodal). Model holds an AnyModel
// (facade/any_model.hpp), forwards each call to the EncoderClassifier, DecoderLM,
// LstmClassifier, LstmLM, ImageClassifier (vit, swin), CrossModalModel or Forecaster in it, and
// turns a task Batch into the right call (an image batch's pixels go to the image classifier, a
// batch of pixels and tokens to the crossmodal model, a series batch's values and timestamps to
// the Forecaster, whose loss is the MSE: regression_loss_and_backward). An LSTM has no
// attention: its attention_stats() are empty, attention_maps() and trace_layer() refuse it. It
// sits above io/ (it loads and saves checkpoints) and below train/ (the Trainer trains it), so
// no folder includes one above it. Not for: model-specific features (CLS pooling details, KV
// caches): reach them through encoder() / decoder() / lstm_lm() / image_classifier() / ...
//
//   attnlab::ModelConfig config; config.kind = attnlab::ModelKind::decoder; config.vocab_size = 11;
//   attnlab::Model model(config, /*seed=*/1);
//   attnlab::CrossEntropyResult r = model.loss_and_backward(batch);   // batch from a Task
//   std::vector<std::uint8_t> bytes = model.save();                     // safetensors
//   attnlab::Model again = attnlab::Model::load(bytes);
//
// A token model may carry the tokenizer that turns text into its ids (text/tokenizer.hpp):
// save() stores it in the checkpoint's metadata (io::kTokenizerMetadataKey) and load() restores
// it, so `attnlab generate --model FILE --prompt TEXT` needs nothing else.
#pragma once

#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "attnlab/attention/stage.hpp"
#include "attnlab/facade/any_model.hpp"
#include "attnlab/io/checkpoint.hpp"
#include "attnlab/model/batch.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/crossmodal/crossmodal.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"
#include "attnlab/model/vision/image_classifier.hpp"
#include "attnlab/model/lstm/lstm_models.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/text/tokenizer.hpp"

namespace attnlab {

class Model {
public:
    // A fresh model with parameters drawn from Rng(seed). Throws ConfigError for a bad config.
    Model(const ModelConfig& config, std::uint64_t seed);
    explicit Model(AnyModel model);
    // From a safetensors checkpoint (IoError on a bad one), with its tokenizer if it has one.
    static Model load(const std::vector<std::uint8_t>& bytes);
    // The checkpoint: parameters, config and, when set, the tokenizer.
    std::vector<std::uint8_t> save() const;
    // Overwrites the parameters from a checkpoint of the same config; all-or-nothing.
    void load_parameters(const std::vector<std::uint8_t>& bytes);

    const ModelConfig& config() const;
    ModelKind kind() const { return config().kind; }

    // The tokenizer of a token model, or null. set_tokenizer(nullptr) removes it; ConfigError
    // for a model that reads no tokens (images, series) or a tokenizer with more ids than the
    // model's vocab_size (naming both).
    const text::Tokenizer* tokenizer() const { return tokenizer_.get(); }
    const std::shared_ptr<const text::Tokenizer>& shared_tokenizer() const { return tokenizer_; }
    void set_tokenizer(std::shared_ptr<const text::Tokenizer> tokenizer);
    bool is_decoder() const { return kind() == ModelKind::decoder; }
    bool is_lstm() const { return config().architecture == Architecture::lstm; }
    bool is_image() const { return config().is_image(); }
    bool is_crossmodal() const { return config().is_crossmodal(); }
    bool is_forecaster() const { return config().is_forecaster(); }
    // Throws ConfigError naming the kind and architecture if the model is another one.
    EncoderClassifier& encoder();
    DecoderLM& decoder();
    LstmClassifier& lstm_classifier();
    LstmLM& lstm_lm();
    ImageClassifier& image_classifier();
    const ImageClassifier& image_classifier() const;
    CrossModalModel& crossmodal();
    const CrossModalModel& crossmodal() const;
    Forecaster& forecaster();
    const Forecaster& forecaster() const;
    const EncoderClassifier& encoder() const;
    const DecoderLM& decoder() const;
    const LstmClassifier& lstm_classifier() const;
    const LstmLM& lstm_lm() const;

    std::vector<ParameterView> parameters();
    std::vector<ParameterView> gradients();
    std::size_t num_parameters() const { return config().parameter_count(); }
    void zero_grad();
    void set_record_attention_stats(bool on);
    // loss_and_backward multiplies the loss's gradient by `scale` (the Trainer's loss scaling).
    void set_loss_scale(float scale);
    const AttentionStats& attention_stats() const;

    // Training forward + loss + backward on a task batch (sequence batches need a decoder,
    // classification batches an encoder; ConfigError otherwise, and for a series batch, whose
    // loss is regression_loss_and_backward's). Gradients accumulate.
    CrossEntropyResult loss_and_backward(const Batch& batch);
    // Evaluation-mode forward and loss, no gradients, no dropout (token and image batches).
    CrossEntropyResult evaluate(const Batch& batch);
    // A forecaster on a series batch (values, time, forecast): forward + MSE (and MAE) + backward;
    // ConfigError for another model or batch. Gradients accumulate.
    RegressionResult regression_loss_and_backward(const Batch& batch);
    // The same in evaluation mode, no gradients.
    RegressionResult evaluate_regression(const Batch& batch);
    // Forecasters: values (B, T, F), time (B, T') -> (B, horizon); ConfigError for other models.
    Tensor2 forecast(const Tensor3& values, const Tensor2& time) const;
    // Evaluation-mode logits, the model untouched. Decoders (either architecture): tokens (B, T)
    // -> (B, T, V); ConfigError for an encoder.
    Tensor3 sequence_logits(const Index2& tokens) const;
    // Encoders (either architecture): tokens, padding (B, T) -> (B, K); ConfigError for a decoder.
    Tensor2 class_logits(const Index2& tokens, const Mask2& padding = {}) const;
    // Image models (vit, swin): pixels (B, S, S) -> (B, K); ConfigError for a token model.
    Tensor2 image_logits(const Tensor3& pixels) const;
    // Crossmodal models: captions (B, T), images (B, S, S), padding (B, T) or empty -> (B, K);
    // ConfigError for another model.
    Tensor2 pair_logits(const Index2& tokens, const Tensor3& pixels, const Mask2& padding = {}) const;
    // Appends max_new_tokens tokens to prompt (DecoderLM::generate, LstmLM::generate); ConfigError
    // for an encoder.
    GenerateResult generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                            const GenerateOptions& options = {}) const;
    // Attention weights of batch row `batch` in every block: tokens (B, T) -> (L, H, T', T').
    Tensor4 attention_maps(const Index2& tokens, const Mask2& padding = {}, std::size_t batch = 0) const;
    // Every stage of block `layer` in an evaluation forward of tokens (B, T): x (the block's
    // attention input, after its norm for pre-norm), q/k/v, scores, scaled, masked (causal for
    // the decoder, padding for the encoder), weights, context, concat, output. Its weights equal
    // attention_maps(tokens)[layer]. ConfigError naming the layer and the count if layer >= L.
    // (A TraceRecorder holds a mutex and cannot move, hence the pointer.)
    std::unique_ptr<TraceRecorder> trace_layer(const Index2& tokens, std::size_t layer, const Mask2& padding = {}) const;
    // The same for a transformer forecaster over values (B, T, F) and time (B, T'): (L, H, T, T),
    // and block `layer`'s stages (Forecaster::attention_maps, trace_layer); ConfigError for
    // other models.
    Tensor4 attention_maps(const Tensor3& values, const Tensor2& time, std::size_t batch = 0) const;
    std::unique_ptr<TraceRecorder> trace_layer(const Tensor3& values, const Tensor2& time, std::size_t layer) const;

private:
    void require_batch_kind(const Batch& batch, const char* where) const;
    void require_attention(const char* where) const;  // ConfigError for an LSTM
    AnyModel model_;
    std::shared_ptr<const text::Tokenizer> tokenizer_;
};

}  // namespace attnlab
