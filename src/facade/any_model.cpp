// AnyModel (facade/any_model.hpp): the one place a config's kind and architecture pick a model
// class, for new models and loaded checkpoints alike.
#include "attnlab/facade/any_model.hpp"

#include "attnlab/io/checkpoint.hpp"

namespace attnlab {

namespace {

template <class M>
struct ModelClass {
    using type = M;
};

// make(ModelClass<M>{}) for the model class M that config describes.
template <class Make>
AnyModel with_model_class(const ModelConfig& config, Make&& make) {
    if (config.is_image()) return make(ModelClass<ImageClassifier>{});
    if (config.is_crossmodal()) return make(ModelClass<CrossModalModel>{});
    if (config.is_forecaster()) return make(ModelClass<Forecaster>{});
    if (config.architecture == Architecture::lstm) {
        if (config.kind == ModelKind::encoder) return make(ModelClass<LstmClassifier>{});
        return make(ModelClass<LstmLM>{});
    }
    if (config.kind == ModelKind::encoder) return make(ModelClass<EncoderClassifier>{});
    return make(ModelClass<DecoderLM>{});
}

AnyModel load_stored(const io::StoredCheckpoint& stored, const char* where) {
    return with_model_class(stored.config, [&](auto model_class) -> AnyModel {
        return io::load_model<typename decltype(model_class)::type>(stored, where);
    });
}

}  // namespace

AnyModel make_model(const ModelConfig& config, Rng& rng) {
    config.validate();
    return with_model_class(config, [&](auto model_class) -> AnyModel {
        return typename decltype(model_class)::type(config, rng);
    });
}

AnyModel load_checkpoint(const std::vector<std::uint8_t>& bytes) {
    constexpr const char* where = "load_checkpoint";
    return load_stored(io::read_checkpoint(bytes, where), where);
}

AnyModel load_checkpoint_file(const std::string& path) {
    constexpr const char* where = "load_checkpoint_file";
    return load_stored(io::read_checkpoint_file(path, where), where);
}

}  // namespace attnlab
