#include "attnlab/io/checkpoint.hpp"

#include <cstring>
#include <iterator>
#include <set>
#include <utility>

#include "attnlab/io/safetensors.hpp"

namespace attnlab::io {

namespace {
// Config fields that only affect training, not what the weights mean (kTrainingOnly in
// model/config.hpp's table): a checkpoint may differ in them.
bool training_only(const std::string& key) {
    for (const ModelConfigField& field : kModelConfigFields) {
        if (key == field.name) return (field.flags & kTrainingOnly) != 0;
    }
    return false;
}

template <class M>
std::vector<ParameterView> parameters_of(const M& model) {
    // parameters() hands out mutable views; saving only reads through them.
    return const_cast<M&>(model).parameters();
}

// A parameter of any rank stored as F32: copy into an xtensor of its rank (parameters are rank 1 or 2).
void put_parameter(SafeTensors& st, const ParameterView& p) {
    if (p.shape.size() == 1) {
        Tensor1 t = Tensor1::from_shape({p.shape[0]});
        std::copy_n(p.data, p.size(), t.data());
        st.put(p.name, t);
    } else if (p.shape.size() == 2) {
        Tensor2 t = Tensor2::from_shape({p.shape[0], p.shape[1]});
        std::copy_n(p.data, p.size(), t.data());
        st.put(p.name, t);
    } else {
        fail<IoError>("save_checkpoint: parameter '", p.name, "' has unsupported rank ", p.shape.size());
    }
}

template <class M>
SafeTensors to_safetensors(const M& model, const std::map<std::string, std::string>& extra = {}) {
    SafeTensors st;
    st.metadata() = model.config().to_metadata();
    for (const auto& [key, value] : extra) {
        if (st.metadata().count(key) || key == "format" || key == "version") {
            fail<IoError>("save_checkpoint: metadata key '", key, "' belongs to the checkpoint itself");
        }
        st.metadata()[key] = value;
    }
    st.metadata()["format"] = kCheckpointFormat;
    st.metadata()["version"] = kCheckpointVersion;
    for (const auto& p : parameters_of(model)) put_parameter(st, p);
    return st;
}

SafeTensors parse(const std::vector<std::uint8_t>& bytes, const char* where) {
    try {
        return SafeTensors::parse(bytes);
    } catch (const FileError& e) {
        fail_file(e.problem(), where, ": not a valid safetensors image: ", e.what());
    } catch (const IoError& e) {
        fail<IoError>(where, ": not a valid safetensors image: ", e.what());
    }
}

ModelConfig config_of(const SafeTensors& st, const char* where) {
    std::map<std::string, std::string> meta = st.metadata();
    const auto format = meta.find("format");
    if (format == meta.end() || format->second != kCheckpointFormat) {
        fail_file(FileProblem::not_a_checkpoint, where, ": metadata \"format\" must be \"", kCheckpointFormat,
                  "\", got ", format == meta.end() ? std::string("nothing") : "\"" + format->second + "\"");
    }
    const auto version = meta.find("version");
    if (version == meta.end() || version->second != kCheckpointVersion) {
        fail_file(FileProblem::not_a_checkpoint, where, ": metadata \"version\" must be \"", kCheckpointVersion,
                  "\", got ", version == meta.end() ? std::string("nothing") : "\"" + version->second + "\"");
    }
    meta.erase("format");
    meta.erase("version");
    meta.erase(kTokenizerMetadataKey);
    // Keys under "task." describe what the model was trained on (written by the CLI); they are
    // not part of the model config.
    for (auto it = meta.begin(); it != meta.end();) {
        it = it->first.rfind(kTaskMetadataPrefix, 0) == 0 ? meta.erase(it) : std::next(it);
    }
    try {
        return ModelConfig::from_metadata(meta);
    } catch (const ConfigError& e) {
        fail_file(FileProblem::not_a_checkpoint, where, ": the stored model config is invalid: ", e.what());
    }
}

// Every check load_into makes, before anything is copied.
void validate_against(const SafeTensors& st, const ModelConfig& config, const std::vector<ParameterView>& params,
                      const char* where) {
    const auto stored = config_of(st, where).to_metadata();
    const auto expected = config.to_metadata();
    std::string diffs;
    for (const auto& [key, value] : expected) {
        if (training_only(key) || stored.at(key) == value) continue;
        diffs += (diffs.empty() ? "" : ", ") + key + " is " + stored.at(key) + " in the file but " + value +
                 " in the model";
    }
    if (!diffs.empty()) fail_file(FileProblem::mismatch, where, ": config mismatch: ", diffs);

    std::set<std::string> wanted;
    std::string missing, bad;
    for (const auto& p : params) {
        wanted.insert(p.name);
        if (!st.contains(p.name)) {
            missing += (missing.empty() ? "" : ", ") + p.name;
            continue;
        }
        const Dtype dtype = st.dtype(p.name);
        if (dtype != Dtype::F32 && dtype != Dtype::F16 && dtype != Dtype::BF16) {
            bad += (bad.empty() ? "" : "; ") + p.name + " has dtype " + dtype_name(dtype) + ", expected F32, F16 or BF16";
        } else if (st.shape(p.name) != p.shape) {
            bad += (bad.empty() ? "" : "; ") + p.name + " is " + shape_string(st.shape(p.name)) + ", expected " +
                   shape_string(p.shape);
        }
    }
    std::string extra;
    for (const auto& name : st.names()) {
        if (wanted.count(name) == 0) extra += (extra.empty() ? "" : ", ") + name;
    }
    if (!missing.empty()) fail_file(FileProblem::mismatch, where, ": missing tensors: ", missing);
    if (!extra.empty()) fail_file(FileProblem::mismatch, where, ": unexpected tensors: ", extra);
    if (!bad.empty()) fail_file(FileProblem::mismatch, where, ": mismatched tensors: ", bad);
}

template <class M>
void load_into_impl(M& model, const SafeTensors& st, const char* where) {
    const std::vector<ParameterView> params = model.parameters();
    validate_against(st, model.config(), params, where);
    for (const auto& p : params) {
        const TensorView v = st.view(p.name);
        convert_to_f32(v.dtype, v.data, p.size(), p.data);  // F16 and BF16 widen exactly
    }
}

// A checkpoint must store every parameter, so a config that needs more floats than the file
// holds is refused here, before a model of that size is allocated (a few edited digits in the
// metadata could otherwise ask for terabytes).
void require_parameters_stored(const SafeTensors& st, const ModelConfig& config, const char* where) {
    double stored = 0;
    for (const auto& name : st.names()) {
        const TensorView v = st.view(name);
        if (v.dtype == Dtype::F32 || v.dtype == Dtype::F16 || v.dtype == Dtype::BF16) {
            stored += static_cast<double>(v.nbytes / dtype_size(v.dtype));
        }
    }
    // parameter_count() is exact for every architecture (tested against parameters()) and
    // refuses a count beyond 64 bits with a ConfigError of its own.
    const double needed = static_cast<double>(config.parameter_count());
    if (needed > stored) {
        fail<IoError>(where, ": the stored config describes a model of ", needed,
                      " parameters, but the file holds only ", stored, " floating-point values");
    }
}

template <class M>
M load_new(const SafeTensors& st, const ModelConfig& config, const char* where) {
    require_parameters_stored(st, config, where);
    Rng rng = Rng::zeros();  // every parameter is overwritten below
    M model(config, rng);
    load_into_impl(model, st, where);
    return model;
}

SafeTensors read(const std::string& path, const char* where) {
    try {
        return SafeTensors::read_file(path);
    } catch (const FileError& e) {
        fail_file(e.problem(), where, ": ", e.what());
    } catch (const IoError& e) {
        fail<IoError>(where, ": ", e.what());
    }
}
}  // namespace

std::vector<std::uint8_t> save_checkpoint(const EncoderClassifier& model, const CheckpointMetadata& metadata) {
    return to_safetensors(model, metadata).serialize();
}
std::vector<std::uint8_t> save_checkpoint(const DecoderLM& model, const CheckpointMetadata& metadata) {
    return to_safetensors(model, metadata).serialize();
}
void save_checkpoint_file(const EncoderClassifier& model, const std::string& path) {
    to_safetensors(model).write_file(path);
}
void save_checkpoint_file(const DecoderLM& model, const std::string& path) { to_safetensors(model).write_file(path); }
std::vector<std::uint8_t> save_checkpoint(const LstmClassifier& model, const CheckpointMetadata& metadata) {
    return to_safetensors(model, metadata).serialize();
}
std::vector<std::uint8_t> save_checkpoint(const LstmLM& model, const CheckpointMetadata& metadata) {
    return to_safetensors(model, metadata).serialize();
}
std::vector<std::uint8_t> save_checkpoint(const ImageClassifier& model, const CheckpointMetadata& metadata) {
    return to_safetensors(model, metadata).serialize();
}
std::vector<std::uint8_t> save_checkpoint(const CrossModalModel& model, const CheckpointMetadata& metadata) {
    return to_safetensors(model, metadata).serialize();
}
std::vector<std::uint8_t> save_checkpoint(const Forecaster& model, const CheckpointMetadata& metadata) {
    return to_safetensors(model, metadata).serialize();
}

ModelConfig checkpoint_config(const std::vector<std::uint8_t>& bytes) {
    constexpr const char* where = "checkpoint_config";
    return config_of(parse(bytes, where), where);
}

StoredCheckpoint read_checkpoint(const std::vector<std::uint8_t>& bytes, const char* where) {
    SafeTensors st = parse(bytes, where);
    ModelConfig config = config_of(st, where);
    return StoredCheckpoint{std::move(st), std::move(config)};
}

StoredCheckpoint read_checkpoint_file(const std::string& path, const char* where) {
    SafeTensors st = read(path, where);
    ModelConfig config = config_of(st, where);
    return StoredCheckpoint{std::move(st), std::move(config)};
}

template <class M>
M load_model(const StoredCheckpoint& stored, const char* where) {
    return load_new<M>(stored.tensors, stored.config, where);
}
template EncoderClassifier load_model<EncoderClassifier>(const StoredCheckpoint&, const char*);
template DecoderLM load_model<DecoderLM>(const StoredCheckpoint&, const char*);
template LstmClassifier load_model<LstmClassifier>(const StoredCheckpoint&, const char*);
template LstmLM load_model<LstmLM>(const StoredCheckpoint&, const char*);
template ImageClassifier load_model<ImageClassifier>(const StoredCheckpoint&, const char*);
template CrossModalModel load_model<CrossModalModel>(const StoredCheckpoint&, const char*);
template Forecaster load_model<Forecaster>(const StoredCheckpoint&, const char*);

EncoderClassifier load_encoder(const std::vector<std::uint8_t>& bytes) {
    constexpr const char* where = "load_encoder";
    const SafeTensors st = parse(bytes, where);
    const ModelConfig config = config_of(st, where);
    if (config.kind != ModelKind::encoder) fail<IoError>(where, ": the checkpoint holds a ", model_kind_name(config.kind));
    if (config.architecture != Architecture::transformer) {
        fail<IoError>(where, ": the checkpoint holds an ", architecture_name(config.architecture), " model");
    }
    return load_new<EncoderClassifier>(st, config, where);
}

DecoderLM load_decoder(const std::vector<std::uint8_t>& bytes) {
    constexpr const char* where = "load_decoder";
    const SafeTensors st = parse(bytes, where);
    const ModelConfig config = config_of(st, where);
    if (config.kind != ModelKind::decoder) fail<IoError>(where, ": the checkpoint holds an ", model_kind_name(config.kind));
    if (config.architecture != Architecture::transformer) {
        fail<IoError>(where, ": the checkpoint holds an ", architecture_name(config.architecture), " model");
    }
    return load_new<DecoderLM>(st, config, where);
}

void load_into(EncoderClassifier& model, const std::vector<std::uint8_t>& bytes) {
    load_into_impl(model, parse(bytes, "load_into"), "load_into");
}
void load_into(DecoderLM& model, const std::vector<std::uint8_t>& bytes) {
    load_into_impl(model, parse(bytes, "load_into"), "load_into");
}
void load_into(LstmClassifier& model, const std::vector<std::uint8_t>& bytes) {
    load_into_impl(model, parse(bytes, "load_into"), "load_into");
}
void load_into(LstmLM& model, const std::vector<std::uint8_t>& bytes) {
    load_into_impl(model, parse(bytes, "load_into"), "load_into");
}
void load_into(ImageClassifier& model, const std::vector<std::uint8_t>& bytes) {
    load_into_impl(model, parse(bytes, "load_into"), "load_into");
}
void load_into(CrossModalModel& model, const std::vector<std::uint8_t>& bytes) {
    load_into_impl(model, parse(bytes, "load_into"), "load_into");
}
void load_into(Forecaster& model, const std::vector<std::uint8_t>& bytes) {
    load_into_impl(model, parse(bytes, "load_into"), "load_into");
}
void load_into_file(EncoderClassifier& model, const std::string& path) {
    load_into_impl(model, read(path, "load_into_file"), "load_into_file");
}
void load_into_file(DecoderLM& model, const std::string& path) {
    load_into_impl(model, read(path, "load_into_file"), "load_into_file");
}

std::vector<std::uint8_t> checkpoint_in_f16(const std::vector<std::uint8_t>& bytes) {
    SafeTensors st = parse(bytes, "checkpoint_in_f16");
    config_of(st, "checkpoint_in_f16");  // an attnlab checkpoint, not any safetensors file
    for (const std::string& name : st.names()) {
        const TensorView v = st.view(name);
        if (v.dtype != Dtype::F32) continue;
        std::vector<float> values(v.nbytes / sizeof(float));
        convert_to_f32(Dtype::F32, v.data, values.size(), values.data());
        st.put_f16(name, v.shape, values.data(), values.size());
    }
    return st.serialize();
}

}  // namespace attnlab::io
