// `attnlab corpus`: a named corpus's training documents as one UTF-8 text, a blank line between
// documents: the text the page's lab trains on (scripts/build_web.sh writes web/dist/corpora/).
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
    if (!args.parse(argc, argv, 2)) return 0;
    if (args.get("out").empty()) fail<ConfigError>("attnlab corpus: --out FILE is required");
    CorpusSpec spec;
    spec.corpus = args.get("corpus");
    spec.data_dir = args.get("data");
    spec.script = text::parse_script(args.get("script"));
    const std::vector<std::string> docs = training_documents(spec);
    std::string text;
    for (const std::string& d : docs) {
        if (d.find("\n\n") != std::string::npos) fail<ValueError>("attnlab corpus: a document holds a blank line");
        if (!text.empty()) text += "\n";
        text += d;
        if (text.back() != '\n') text += "\n";
    }
    std::ofstream out(args.get("out"), std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) fail<IoError>("attnlab corpus: cannot write '", args.get("out"), "'");
    std::printf("wrote %s: %zu documents, %zu bytes\n", args.get("out").c_str(), docs.size(), text.size());
    return 0;
}

}  // namespace attnlab::cli
