#include "attnlab/facade/model.hpp"

#include <string>
#include <type_traits>

#include "attnlab/core/error.hpp"
#include "attnlab/io/safetensors.hpp"

namespace attnlab {

namespace {
AnyModel build(const ModelConfig& config, std::uint64_t seed) {
    Rng rng(seed);
    return make_model(config, rng);
}

// "a decoder", "an encoder classifier", "an lstm decoder", ...: what a model is, for error messages.
std::string describe(const ModelConfig& config) {
    if (config.is_image()) return "a " + std::string(architecture_name(config.architecture)) + " image classifier";
    if (config.is_crossmodal()) return "a crossmodal (image and caption) model";
    const bool lstm = config.architecture == Architecture::lstm;
    if (config.is_forecaster()) return lstm ? "an lstm forecaster" : "a transformer forecaster";
    if (config.kind == ModelKind::decoder) return lstm ? "an lstm decoder" : "a decoder";
    return lstm ? "an lstm encoder classifier" : "an encoder classifier";
}

template <class M>
M& get_model(AnyModel& model, const ModelConfig& config, const char* where, const char* wanted) {
    if (auto* m = std::get_if<M>(&model)) return *m;
    fail<ConfigError>(where, ": this model is ", describe(config), ", not ", wanted);
}
}  // namespace

Model::Model(const ModelConfig& config, std::uint64_t seed) : model_(build(config, seed)) {}

Model::Model(AnyModel model) : model_(std::move(model)) {}

Model Model::load(const std::vector<std::uint8_t>& bytes) {
    Model model(load_checkpoint(bytes));
    const io::SafeTensorsHeader header = io::parse_safetensors_header(bytes.data(), bytes.size(), bytes.size());
    const auto stored = header.metadata.find(io::kTokenizerMetadataKey);
    if (stored != header.metadata.end()) {
        const auto* data = reinterpret_cast<const std::uint8_t*>(stored->second.data());
        try {
            model.set_tokenizer(text::tokenizer_from_bytes(data, stored->second.size()));
        } catch (const Error& e) {
            fail<IoError>("Model::load: the checkpoint's tokenizer is invalid: ", e.what());
        }
    }
    return model;
}

std::vector<std::uint8_t> Model::save() const {
    if (!tokenizer_) return std::visit([](const auto& m) { return io::save_checkpoint(m); }, model_);
    const std::vector<std::uint8_t> bytes = tokenizer_->to_bytes();
    const io::CheckpointMetadata metadata{{io::kTokenizerMetadataKey, std::string(bytes.begin(), bytes.end())}};
    return std::visit([&](const auto& m) { return io::save_checkpoint(m, metadata); }, model_);
}

void Model::set_tokenizer(std::shared_ptr<const text::Tokenizer> tokenizer) {
    if (tokenizer) {
        const ModelConfig& c = config();
        if (c.is_image() || c.is_forecaster()) {
            fail<ConfigError>("Model::set_tokenizer: this model is ", describe(c), "; it reads no tokens");
        }
        if (tokenizer->vocab_size() > c.vocab_size) {
            fail<ConfigError>("Model::set_tokenizer: the ", tokenizer->kind(), " tokenizer has ", tokenizer->vocab_size(),
                              " token ids, more than the model's vocab_size of ", c.vocab_size);
        }
    }
    tokenizer_ = std::move(tokenizer);
}

void Model::load_parameters(const std::vector<std::uint8_t>& bytes) {
    std::visit([&](auto& m) { io::load_into(m, bytes); }, model_);
}

const ModelConfig& Model::config() const {
    return std::visit([](const auto& m) -> const ModelConfig& { return m.config(); }, model_);
}

EncoderClassifier& Model::encoder() {
    return get_model<EncoderClassifier>(model_, config(), "Model::encoder", "a transformer encoder classifier");
}
DecoderLM& Model::decoder() { return get_model<DecoderLM>(model_, config(), "Model::decoder", "a transformer decoder"); }
LstmClassifier& Model::lstm_classifier() {
    return get_model<LstmClassifier>(model_, config(), "Model::lstm_classifier", "an lstm encoder classifier");
}
LstmLM& Model::lstm_lm() { return get_model<LstmLM>(model_, config(), "Model::lstm_lm", "an lstm decoder"); }
ImageClassifier& Model::image_classifier() {
    return get_model<ImageClassifier>(model_, config(), "Model::image_classifier", "an image classifier (vit, swin)");
}
const ImageClassifier& Model::image_classifier() const { return const_cast<Model*>(this)->image_classifier(); }
CrossModalModel& Model::crossmodal() {
    return get_model<CrossModalModel>(model_, config(), "Model::crossmodal", "a crossmodal model");
}
const CrossModalModel& Model::crossmodal() const { return const_cast<Model*>(this)->crossmodal(); }
Forecaster& Model::forecaster() {
    return get_model<Forecaster>(model_, config(), "Model::forecaster", "a forecaster");
}
const Forecaster& Model::forecaster() const { return const_cast<Model*>(this)->forecaster(); }
const EncoderClassifier& Model::encoder() const { return const_cast<Model*>(this)->encoder(); }
const DecoderLM& Model::decoder() const { return const_cast<Model*>(this)->decoder(); }
const LstmClassifier& Model::lstm_classifier() const { return const_cast<Model*>(this)->lstm_classifier(); }
const LstmLM& Model::lstm_lm() const { return const_cast<Model*>(this)->lstm_lm(); }

std::vector<ParameterView> Model::parameters() {
    return std::visit([](auto& m) { return m.parameters(); }, model_);
}
std::vector<ParameterView> Model::gradients() {
    return std::visit([](auto& m) { return m.gradients(); }, model_);
}
void Model::zero_grad() {
    std::visit([](auto& m) { m.zero_grad(); }, model_);
}
void Model::set_record_attention_stats(bool on) {
    std::visit([&](auto& m) { m.set_record_attention_stats(on); }, model_);
}

void Model::set_loss_scale(float scale) {
    std::visit([&](auto& m) { m.set_loss_scale(scale); }, model_);
}
const AttentionStats& Model::attention_stats() const {
    return std::visit([](const auto& m) -> const AttentionStats& { return m.attention_stats(); }, model_);
}

void Model::require_batch_kind(const Batch& batch, const char* where) const {
    if (is_forecaster() || batch.values.size() > 0) {
        fail<ConfigError>(where, ": ", is_forecaster() ? "this model is " + describe(config()) + "; its loss is the MSE"
                                                       : "a series batch needs a forecaster (its loss is the MSE)",
                          " (Model::regression_loss_and_backward, evaluate_regression)");
    }
    const bool images = batch.pixels.size() > 0, paired = images && batch.tokens.size() > 0;
    if (paired != is_crossmodal()) {
        fail<ConfigError>(where, ": ", paired ? "a batch of images and captions needs a crossmodal model"
                                              : "a crossmodal model needs a batch of images and captions",
                          ", this one is ", describe(config()));
    }
    if (!paired && images != is_image()) {
        fail<ConfigError>(where, ": ", images ? "an image batch needs a vit or swin model" : "a token batch needs a token model",
                          ", this one is ", describe(config()));
    }
    const bool classification = batch.labels.size() > 0;
    if (classification && is_decoder()) {
        fail<ConfigError>(where, ": a classification task needs an encoder model, this one is a decoder");
    }
    if (!classification && !is_decoder()) {
        fail<ConfigError>(where, ": a sequence task needs a decoder model, this one is an encoder");
    }
}

CrossEntropyResult Model::loss_and_backward(const Batch& batch) {
    require_batch_kind(batch, "Model::loss_and_backward");
    return std::visit(
        [&](auto& m) {
            if constexpr (std::is_same_v<std::decay_t<decltype(m)>, DecoderLM> ||
                          std::is_same_v<std::decay_t<decltype(m)>, LstmLM>) {
                return m.loss_and_backward(batch.tokens, batch.targets);
            } else if constexpr (std::is_same_v<std::decay_t<decltype(m)>, ImageClassifier>) {
                return m.loss_and_backward(batch.pixels, batch.labels);
            } else if constexpr (std::is_same_v<std::decay_t<decltype(m)>, CrossModalModel>) {
                return m.loss_and_backward(batch.tokens, batch.padding, batch.pixels, batch.labels);
            } else if constexpr (std::is_same_v<std::decay_t<decltype(m)>, Forecaster>) {
                return CrossEntropyResult{};  // refused by require_batch_kind
            } else {
                return m.loss_and_backward(batch.tokens, batch.padding, batch.labels);
            }
        },
        model_);
}

namespace {
void require_series_batch(const Batch& batch, const char* where) {
    if (batch.values.size() == 0) {
        fail<ConfigError>(where, ": a forecaster needs a series batch (values, time, forecast); this one has none");
    }
}
}  // namespace

RegressionResult Model::regression_loss_and_backward(const Batch& batch) {
    constexpr const char* where = "Model::regression_loss_and_backward";
    require_series_batch(batch, where);
    return forecaster().loss_and_backward(batch.values, batch.time, batch.forecast);
}

RegressionResult Model::evaluate_regression(const Batch& batch) {
    constexpr const char* where = "Model::evaluate_regression";
    require_series_batch(batch, where);
    return mse_forward(forecaster().predict(batch.values, batch.time), batch.forecast);
}

Tensor2 Model::forecast(const Tensor3& values, const Tensor2& time) const { return forecaster().predict(values, time); }

Tensor4 Model::attention_maps(const Tensor3& values, const Tensor2& time, std::size_t batch) const {
    return forecaster().attention_maps(values, time, batch);
}

std::unique_ptr<TraceRecorder> Model::trace_layer(const Tensor3& values, const Tensor2& time, std::size_t layer) const {
    return forecaster().trace_layer(values, time, layer);
}

Tensor3 Model::sequence_logits(const Index2& tokens) const {
    if (!is_decoder()) fail<ConfigError>("Model::sequence_logits: this model is ", describe(config()), ", not a decoder");
    if (is_lstm()) return lstm_lm().logits(tokens);
    return decoder().forward_observed(tokens, {});
}

Tensor2 Model::class_logits(const Index2& tokens, const Mask2& padding) const {
    if (is_decoder()) fail<ConfigError>("Model::class_logits: this model is ", describe(config()), ", not an encoder");
    if (is_image()) fail<ConfigError>("Model::class_logits: this model is ", describe(config()), "; it reads pixels (image_logits)");
    if (is_crossmodal()) {
        fail<ConfigError>("Model::class_logits: this model is ", describe(config()), "; it reads pixels and tokens (pair_logits)");
    }
    if (is_forecaster()) fail<ConfigError>("Model::class_logits: this model is ", describe(config()), "; it reads values (forecast)");
    if (is_lstm()) return lstm_classifier().logits(tokens, padding);
    return encoder().forward_observed(tokens, padding, {});
}

Tensor2 Model::image_logits(const Tensor3& pixels) const {
    if (!is_image()) fail<ConfigError>("Model::image_logits: this model is ", describe(config()), ", not a vit or swin");
    return image_classifier().logits(pixels);
}

Tensor2 Model::pair_logits(const Index2& tokens, const Tensor3& pixels, const Mask2& padding) const {
    if (!is_crossmodal()) fail<ConfigError>("Model::pair_logits: this model is ", describe(config()), ", not a crossmodal model");
    return crossmodal().logits(tokens, padding, pixels);
}

GenerateResult Model::generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                               const GenerateOptions& options) const {
    if (is_forecaster()) {
        fail<ConfigError>("Model::generate: this model is ", describe(config()),
                          "; it forecasts values from values (Model::forecast) and has no tokens to generate");
    }
    if (!is_decoder()) fail<ConfigError>("Model::generate: this model is ", describe(config()), ", not a decoder");
    if (is_lstm()) return lstm_lm().generate(prompt, max_new_tokens, options);
    return decoder().generate(prompt, max_new_tokens, options);
}

void Model::require_attention(const char* where) const {
    if (is_image()) {
        fail<ConfigError>(where, ": this model is ", describe(config()),
                          "; its attention is traced over pixels (ImageClassifier::trace_layer, attention_maps)");
    }
    if (is_forecaster()) {
        fail<ConfigError>(where, ": this model is ", describe(config()),
                          "; its attention is traced over values and timestamps (attention_maps(values, time), "
                          "trace_layer(values, time, layer))");
    }
    if (is_lstm()) fail<ConfigError>(where, ": this model is ", describe(config()), "; it has no attention to show");
    if (is_crossmodal()) {
        fail<ConfigError>(where, ": this model is ", describe(config()),
                          "; its attention is traced over a caption and an image (CrossModalModel::trace_layer, "
                          "cross_attention_maps)");
    }
}

CrossEntropyResult Model::evaluate(const Batch& batch) {
    require_batch_kind(batch, "Model::evaluate");
    const bool was_training = std::visit([](const auto& m) { return m.training(); }, model_);
    std::visit([](auto& m) { m.eval(); }, model_);
    CrossEntropyResult result;
    try {
        if (is_decoder()) {
            const Tensor3 logits = is_lstm() ? lstm_lm().logits(batch.tokens) : decoder().forward(batch.tokens);  // (B, T, V)
            Tensor2 flat = Tensor2::from_shape({logits.shape(0) * logits.shape(1), logits.shape(2)});
            std::copy(logits.begin(), logits.end(), flat.begin());
            Index1 targets = Index1::from_shape({batch.targets.size()});
            std::copy(batch.targets.begin(), batch.targets.end(), targets.begin());
            result = cross_entropy_forward(flat, targets);
        } else if (is_image()) {
            result = cross_entropy_forward(image_classifier().logits(batch.pixels), batch.labels);  // (B, K)
        } else if (is_crossmodal()) {
            result = crossmodal().evaluate(batch.tokens, batch.padding, batch.pixels, batch.labels);
        } else {
            const Tensor2 logits = is_lstm() ? lstm_classifier().logits(batch.tokens, batch.padding)
                                             : encoder().forward(batch.tokens, batch.padding);  // (B, K)
            result = cross_entropy_forward(logits, batch.labels);
        }
    } catch (...) {
        std::visit([&](auto& m) { m.train(was_training); }, model_);
        throw;
    }
    std::visit([&](auto& m) { m.train(was_training); }, model_);
    return result;
}

std::unique_ptr<TraceRecorder> Model::trace_layer(const Index2& tokens, std::size_t layer, const Mask2& padding) const {
    require_attention("Model::trace_layer");
    const std::size_t layers = config().num_layers;
    if (layer >= layers) {
        fail<ConfigError>("Model::trace_layer: layer ", layer, " is out of range: the model has ", layers, " layer",
                          layers == 1 ? "" : "s", " (0..", layers - 1, ")");
    }
    auto recorder = std::make_unique<TraceRecorder>();
    std::vector<StageObserver*> observers(layers, nullptr);
    observers[layer] = recorder.get();
    if (is_decoder()) {
        if (padding.size() > 0) fail<ConfigError>("Model::trace_layer: a padding mask needs an encoder model; a decoder is causal");
        (void)decoder().forward_observed(tokens, observers);
    } else {
        (void)encoder().forward_observed(tokens, padding, observers);
    }
    return recorder;
}

Tensor4 Model::attention_maps(const Index2& tokens, const Mask2& padding, std::size_t batch) const {
    require_attention("Model::attention_maps");
    if (is_decoder()) return decoder().attention_maps(tokens, batch);
    return encoder().attention_maps(tokens, padding, batch);
}

}  // namespace attnlab
