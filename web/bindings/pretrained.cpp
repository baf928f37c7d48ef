// The JavaScript `Gpt2Loader`: attnlab::io::Gpt2Loader (io/hf_gpt2.hpp), fed one tensor at a time,
// so that a page opening GPT-2 small (~500 MB) never holds the file whole in JavaScript. It is the
// engine half of lab.loadPretrained (pretrained.post.js), which reads the file's slices and calls:
//
//   const n = lab.Gpt2Loader.headerBytes(first8);                  // 8 + N: the header's bytes
//   const loader = new lab.Gpt2Loader(header, file.size, configText); // every check without the data
//   loader.reads();        // [{ name, begin, end }]: byte ranges of the file, in the order to feed
//   loader.feed(i, bytes); // bytes: Uint8Array of reads()[i]
//   const model = loader.finish();                                 // a lab.Model (decoder)
//   loader.delete();
//
// A model whose float32 parameters need more than half the module's memory
// (ATTNLAB_WASM_MAX_MEMORY_MB) is refused by the constructor with its size and that limit: the
// rest is what loading (one tensor in transit) and a forward pass need beside it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/io/hf_gpt2.hpp"
#include "attnlab/io/safetensors.hpp"
#include "convert.hpp"
#include "model.hpp"

namespace attnlab::web {

namespace {

constexpr std::uint64_t kMaxParameterBytes = std::uint64_t{ATTNLAB_WASM_MAX_MEMORY_MB} * 1024 * 1024 / 2;

class Gpt2LoaderBinding {
public:
    static Gpt2LoaderBinding* create(val header, val file_size, val config) {
        return guarded("Gpt2Loader", [&] {
            const std::vector<std::uint8_t> bytes = bytes_from_js(header, "Gpt2Loader", "the header");
            if (!file_size.isNumber() || file_size.as<double>() < 0 || file_size.as<double>() > 9007199254740991.0) {
                fail<ConfigError>("Gpt2Loader: the file size must be a non-negative number, got ", file_size.typeOf().as<std::string>());
            }
            std::optional<std::string> text;
            if (config.isString()) {
                text = config.as<std::string>();
            } else if (!config.isNull() && !config.isUndefined()) {
                fail<ConfigError>("Gpt2Loader: config must be the text of config.json or null, got ", config.typeOf().as<std::string>());
            }
            const auto size = static_cast<std::uint64_t>(file_size.as<double>());
            io::SafeTensorsHeader parsed = io::parse_safetensors_header(bytes.data(), bytes.size(), size);
            auto loader = std::make_unique<io::Gpt2Loader>(parsed, text ? &*text : nullptr, kMaxParameterBytes);
            return new Gpt2LoaderBinding(std::move(loader), parsed.data_offset);
        }, header, file_size, config);
    }

    // 8 + N from the file's first 8 bytes.
    static double header_bytes(val first) {
        return guarded("Gpt2Loader.headerBytes", [&] {
            const std::vector<std::uint8_t> b = bytes_from_js(first, "Gpt2Loader.headerBytes", "the first bytes");
            return static_cast<double>(io::safetensors_header_bytes(b.data(), b.size()));
        }, first);
    }

    val reads() const {
        return guarded("Gpt2Loader.reads", [&] {
            val out = val::array();
            const auto& reads = loader().reads();
            for (std::size_t i = 0; i < reads.size(); ++i) {
                val r = val::object();
                r.set("name", reads[i].name);
                r.set("begin", static_cast<double>(data_offset_ + reads[i].begin));
                r.set("end", static_cast<double>(data_offset_ + reads[i].end));
                out.set(i, r);
            }
            return out;
        });
    }

    val notes() const {
        return guarded("Gpt2Loader.notes", [&] { return strings_to_js(loader().notes()); });
    }

    val layout() const {
        return guarded("Gpt2Loader.layout", [&] { return val(std::string(io::gpt2_layout_name(loader().layout()))); });
    }

    void feed(val index, val bytes) {
        guarded("Gpt2Loader.feed", [&] {
            const std::size_t i = size_from_js(index, "Gpt2Loader.feed", "the read's index");
            const std::vector<std::uint8_t> data = bytes_from_js(bytes, "Gpt2Loader.feed", "the tensor's bytes");
            loader().feed(i, data.data(), data.size());
        }, index, bytes);
    }

    ModelBinding finish() {
        return guarded("Gpt2Loader.finish", [&] {
            DecoderLM lm = loader().finish();
            loader_.reset();
            return ModelBinding(std::make_shared<Model>(AnyModel(std::move(lm))));
        });
    }

private:
    Gpt2LoaderBinding(std::unique_ptr<io::Gpt2Loader> loader, std::uint64_t data_offset)
        : loader_(std::move(loader)), data_offset_(data_offset) {}
    io::Gpt2Loader& loader() const {
        if (!loader_) fail<ConfigError>("Gpt2Loader: finish() was called already");
        return *loader_;
    }
    std::unique_ptr<io::Gpt2Loader> loader_;
    std::uint64_t data_offset_;
};

val max_pretrained_bytes() { return val(static_cast<double>(kMaxParameterBytes)); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_pretrained) {
    using L = Gpt2LoaderBinding;
    emscripten::class_<L>("Gpt2Loader")
        .constructor(&L::create, emscripten::allow_raw_pointers())
        .class_function("headerBytes", &L::header_bytes)
        .class_function("maxParameterBytes", &max_pretrained_bytes)
        .function("reads", &L::reads)
        .function("notes", &L::notes)
        .function("layout", &L::layout)
        .function("feed", &L::feed)
        .function("finish", &L::finish);
}

}  // namespace attnlab::web
