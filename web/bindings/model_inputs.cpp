// The Model calls' inputs from JavaScript values (model_inputs.hpp).
#include "model_inputs.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "attnlab/core/error.hpp"

namespace attnlab::web {

TokenCall parse_tokens(const Model& model, const val& tokens, const val& options, std::vector<const char*> allowed,
                       const char* where) {
    const JsOptions opt(options, std::move(allowed), where);
    TokenCall call;
    call.tokens = tokens_from_js(tokens, where, "tokens", &call.batched);
    if (!opt.is_null("padding")) {
        if (model.is_decoder()) {
            fail<ConfigError>(where, ": option 'padding' needs an encoder model; a decoder is causal and pads at the end");
        }
        call.padding = mask_from_js(opt.get("padding"), where, "padding", !call.batched);
    }
    call.batch = opt.size("batch", 0);
    return call;
}

std::vector<std::int32_t> prompt_from_js(const val& prompt, const char* where) {
    bool batched = false;
    const Index2 ids = tokens_from_js(prompt, where, "prompt", &batched);
    if (batched && ids.shape(0) != 1) {
        fail<ShapeError>(where, ": prompt must be one sequence ([T] or [1, T]), got ", ids.shape(0), " rows");
    }
    return std::vector<std::int32_t>(ids.begin(), ids.end());
}

Tensor3 images_from_js(const val& images, const char* where, bool* batched) {
    return tensor3_from_js(images, where, "images", batched);
}

PairCall pair_from_js(const val& pair, const char* where) {
    if (pair.isUndefined() || pair.isNull() || pair.typeOf().as<std::string>() != "object" || pair.isArray()) {
        fail<ConfigError>(where, ": a crossmodal model reads a caption and its image: pass { tokens: [T] | [B, T], "
                          "images: [S, S] | [B, S, S] }");
    }
    const JsOptions opt(pair, {"tokens", "images"}, where);
    if (!opt.has("tokens") || !opt.has("images")) {
        fail<ConfigError>(where, ": the pair needs both 'tokens' (the caption) and 'images'");
    }
    PairCall call;
    call.tokens = tokens_from_js(opt.get("tokens"), where, "tokens", &call.batched);
    bool images_batched = false;
    call.images = tensor3_from_js(opt.get("images"), where, "images", &images_batched);
    if (images_batched != call.batched) {
        fail<ShapeError>(where, ": tokens and images must both be batched or both single, got tokens ",
                         call.batched ? "[B, T]" : "[T]", " and images ", images_batched ? "[B, S, S]" : "[S, S]");
    }
    return call;
}

SeriesCall series_from_js(const val& values, const val& time, const char* where) {
    SeriesCall call;
    call.values = tensor3_from_js(values, where, "values", &call.batched);
    if (!time.isUndefined() && !time.isNull()) {
        const auto b = static_cast<std::ptrdiff_t>(call.values.shape(0));
        const std::vector<float> data = call.batched ? floats_from_js(time, {b, -1}, where, "time")
                                                     : floats_from_js(time, {-1}, where, "time");
        const std::size_t n = data.size() / call.values.shape(0);
        call.time = Tensor2::from_shape({call.values.shape(0), n});
        std::copy(data.begin(), data.end(), call.time.begin());
    }
    return call;
}

std::size_t image_layer(const Model& model, const JsOptions& opt, const char* where) {
    const std::size_t layers = model.image_classifier().num_attention_layers();
    if (!opt.has("layer")) fail<ConfigError>(where, ": option 'layer' is required (0..", layers - 1, ")");
    return size_from_js(opt.get("layer"), where, "layer");
}

}  // namespace attnlab::web
