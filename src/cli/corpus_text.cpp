// `attnlab corpus`: a named corpus's training documents as one UTF-8 text, a blank line between
// documents: the text the page's lab trains on (scripts/build_web.sh writes web/dist/corpora/).
// --max-bytes keeps every k-th document (k as small as keeps the text under the bound), so a
// compact text still samples the whole corpus (train/text_corpus.hpp, compact_training_text; the
// module's lab.corpusText runs the same).
#include <cstdio>
#include <fstream>

#include "args.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/text/script.hpp"
#include "attnlab/train/text_corpus.hpp"
#include "commands.hpp"

namespace attnlab::cli {

int run_corpus(int argc, char** argv) {
    Args args("corpus", "Writes the training documents of tang or brown (the held-out split left out) as UTF-8 text,\n"
                        "documents separated by a blank line, as `attnlab train --corpus FILE` reads a file.\n"
                        "example: attnlab corpus --corpus tang --out tang.txt");
    args.add("corpus", "", "tang or brown");
    args.add("data", "data", "folder of the corpora (scripts/fetch_data.sh)");
    args.add("script", "simplified", "tang: simplified or traditional characters");
    args.add("out", "", "the file to write");
    args.add("max-bytes", "0", "keep every k-th document, the smallest k that writes at most this many bytes (0: all)");
    if (!args.parse(argc, argv, 2)) return 0;
    if (args.get("out").empty()) fail<ConfigError>("attnlab corpus: --out FILE is required");
    CorpusSpec spec;
    spec.corpus = args.get("corpus");
    spec.data_dir = args.get("data");
    spec.script = text::parse_script(args.get("script"));
    const CompactText compact = compact_training_text(spec, args.get_size("max-bytes"));
    const std::string& text = compact.text;
    std::ofstream out(args.get("out"), std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) fail<IoError>("attnlab corpus: cannot write '", args.get("out"), "'");
    std::printf("wrote %s: %zu of %zu documents (every %zu), %zu bytes\n", args.get("out").c_str(), compact.documents, compact.of,
                compact.stride, text.size());
    return 0;
}

}  // namespace attnlab::cli
