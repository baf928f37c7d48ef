// attnlab/facade/any_model.hpp: every model class in one variant, and which of them a config or
// a checkpoint describes.
//
// What it is for: Model (facade/model.hpp) holds an AnyModel. Here, once, a ModelConfig (kind,
// architecture) is mapped onto one of the seven model classes, for a new model and for a loaded
// checkpoint alike. Not for: calling the model (Model forwards each call to the one it holds) or
// reading a checkpoint of a known class (io::load_into, io::load_model in io/checkpoint.hpp).
//
//   attnlab::ModelConfig config; config.kind = attnlab::ModelKind::decoder; config.vocab_size = 11;
//   attnlab::Rng rng(1);
//   attnlab::AnyModel fresh = attnlab::make_model(config, rng);                     // a DecoderLM
//   attnlab::AnyModel loaded = attnlab::load_checkpoint_file("model.safetensors");  // as its config says
//   bool decoder = std::holds_alternative<attnlab::DecoderLM>(loaded);
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "attnlab/core/random.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/crossmodal/crossmodal.hpp"
#include "attnlab/model/lstm/lstm_models.hpp"
#include "attnlab/model/series/series_models.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"
#include "attnlab/model/vision/image_classifier.hpp"

namespace attnlab {

// Any model, as its config says: the transformer encoder classifier and decoder LM, their LSTM
// counterparts, the image classifier (vit, swin), the crossmodal model and the forecaster
// (transformer or lstm).
using AnyModel =
    std::variant<EncoderClassifier, DecoderLM, LstmClassifier, LstmLM, ImageClassifier, CrossModalModel, Forecaster>;

// A new model of the class config describes, its parameters drawn from rng. ConfigError for a
// bad config.
AnyModel make_model(const ModelConfig& config, Rng& rng);

// A new model of the class a checkpoint's stored config describes, with the stored parameters
// (IoError for a bad checkpoint, see io/checkpoint.hpp; a config asking for more floats than the
// file holds is refused before the model is allocated).
AnyModel load_checkpoint(const std::vector<std::uint8_t>& bytes);
AnyModel load_checkpoint_file(const std::string& path);

}  // namespace attnlab
