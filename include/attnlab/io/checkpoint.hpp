// attnlab/io/checkpoint.hpp: save and load whole models as safetensors files.
//
// What it is for: checkpoints a PyTorch user can open. Every parameter is stored as a
// little-endian float32 tensor under its state_dict name ("tok_emb.weight",
// "blocks.0.attn.q_proj.weight", ...; the lists are in encoder_classifier.hpp, decoder_lm.hpp and
// lstm_models.hpp)
// and the ModelConfig travels in the header's __metadata__ (ModelConfig::to_metadata()), next to
// "format": "attnlab" and "version": "1". The round trip is bit-exact. A tied decoder head is
// stored once, as tok_emb.weight (safetensors cannot alias two names to one buffer); PyTorch code
// ties it again after loading.
// Not for: optimiser state or training progress (see train/), or other people's checkpoints
// (Hugging Face GPT-2 checkpoints: io/hf_gpt2.hpp).
//
// Loading validates everything before it copies anything: a truncated or corrupt image, a
// wrong "format"/"version", a config that does not parse or differs from the model's, a missing,
// extra, non-F32 or mis-shaped tensor — each throws IoError naming the problem, and the model is
// left exactly as it was. The training-only fields dropout and gradient_checkpointing may differ
// (they do not change what the weights mean).
//
//   auto bytes = attnlab::io::save_checkpoint(gpt);                  // std::vector<std::uint8_t>
//   attnlab::io::save_checkpoint_file(gpt, "model.safetensors");
//   attnlab::DecoderLM copy = attnlab::io::load_decoder(bytes);      // config from the header
//   attnlab::io::load_into(gpt, bytes);                              // same config required
// A checkpoint of any of the seven model classes, whichever its config names:
// attnlab::load_checkpoint (facade/any_model.hpp), built on read_checkpoint and load_model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnlab/io/safetensors.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/crossmodal/crossmodal.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/model/token/encoder_classifier.hpp"
#include "attnlab/model/vision/image_classifier.hpp"
#include "attnlab/model/lstm/lstm_models.hpp"
#include "attnlab/model/series/series_models.hpp"

namespace attnlab::io {

inline constexpr const char* kCheckpointFormat = "attnlab";
inline constexpr const char* kCheckpointVersion = "1";
// Metadata keys with this prefix (e.g. "task.name") are free-form notes about the training run;
// loaders ignore them.
inline constexpr const char* kTaskMetadataPrefix = "task.";
// The metadata key of the tokenizer a model carries (text::Tokenizer::to_bytes(), which is UTF-8
// text; the facade's Model writes and reads it); the model loaders ignore it.
inline constexpr const char* kTokenizerMetadataKey = "tokenizer";

// The same checkpoint with every F32 parameter stored as F16 (round to nearest even; the shipped
// text models are stored so, half the bytes). Loading widens F16 and BF16 parameters to float32
// exactly, so a model loaded from the result computes with the rounded values. IoError for
// bytes that are not an attnlab checkpoint, or a parameter beyond fp16's range (naming it).
std::vector<std::uint8_t> checkpoint_in_f16(const std::vector<std::uint8_t>& bytes);

// The complete safetensors image of the model's parameters and config, with extra metadata
// entries beside them (the facade's tokenizer; IoError if a key is one the checkpoint itself
// uses: a config field, "format" or "version").
using CheckpointMetadata = std::map<std::string, std::string>;
std::vector<std::uint8_t> save_checkpoint(const EncoderClassifier& model, const CheckpointMetadata& metadata = {});
std::vector<std::uint8_t> save_checkpoint(const DecoderLM& model, const CheckpointMetadata& metadata = {});
// The same written to path (IoError naming the path if it cannot be written).
void save_checkpoint_file(const EncoderClassifier& model, const std::string& path);
void save_checkpoint_file(const DecoderLM& model, const std::string& path);
std::vector<std::uint8_t> save_checkpoint(const LstmClassifier& model, const CheckpointMetadata& metadata = {});
std::vector<std::uint8_t> save_checkpoint(const LstmLM& model, const CheckpointMetadata& metadata = {});
std::vector<std::uint8_t> save_checkpoint(const ImageClassifier& model, const CheckpointMetadata& metadata = {});
std::vector<std::uint8_t> save_checkpoint(const CrossModalModel& model, const CheckpointMetadata& metadata = {});
std::vector<std::uint8_t> save_checkpoint(const Forecaster& model, const CheckpointMetadata& metadata = {});

// The config stored in a checkpoint (IoError if the image or its metadata is bad).
ModelConfig checkpoint_config(const std::vector<std::uint8_t>& bytes);

// A checkpoint image parsed and its stored config read, before any model is built. `where` names
// the caller in the IoError raised for a bad image, bad metadata or an invalid config.
struct StoredCheckpoint {
    SafeTensors tensors;
    ModelConfig config;
};
StoredCheckpoint read_checkpoint(const std::vector<std::uint8_t>& bytes, const char* where);
StoredCheckpoint read_checkpoint_file(const std::string& path, const char* where);

// A new M (any of the seven model classes) built from stored.config, with the stored parameters.
// The file must hold at least the floats the config needs (checked before the model is
// allocated), then everything load_into checks; IoError naming `where` otherwise.
template <class M>
M load_model(const StoredCheckpoint& stored, const char* where);

// A new transformer encoder classifier or decoder LM from a checkpoint, with IoError if it holds
// the other kind of model or another architecture.
EncoderClassifier load_encoder(const std::vector<std::uint8_t>& bytes);
DecoderLM load_decoder(const std::vector<std::uint8_t>& bytes);

// Overwrites the parameters of an existing model of the same config; all-or-nothing.
void load_into(EncoderClassifier& model, const std::vector<std::uint8_t>& bytes);
void load_into(DecoderLM& model, const std::vector<std::uint8_t>& bytes);
void load_into(LstmClassifier& model, const std::vector<std::uint8_t>& bytes);
void load_into(LstmLM& model, const std::vector<std::uint8_t>& bytes);
void load_into(ImageClassifier& model, const std::vector<std::uint8_t>& bytes);
void load_into(CrossModalModel& model, const std::vector<std::uint8_t>& bytes);
void load_into(Forecaster& model, const std::vector<std::uint8_t>& bytes);
void load_into_file(EncoderClassifier& model, const std::string& path);
void load_into_file(DecoderLM& model, const std::string& path);

}  // namespace attnlab::io
