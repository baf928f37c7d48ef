// attnlab/train/text_corpus.hpp: a named corpus read, split, tokenised and made into a TextTask.
//
// What it is for: the one recipe `attnlab train --corpus`, the shipped models' tests and their
// evaluation share, so a model's stated held-out loss can be recomputed from its checkpoint:
//   tang   regulated Tang poems (text/corpora.hpp), simplified (or traditional) characters, one
//          poem a document: <bos> couplet \n couplet \n ... <eos>; a CharTokenizer of the `chars`
//          most frequent characters of the training poems, with OpenCC's table so prompts may
//          come in either script. Held out: the poem ids of data/splits/tang_heldout.txt.
//   brown  the Brown corpus's plain text, one file a document; a byte-level BPE of `merges`
//          merges learned from the training files (text/bpe_trainer.hpp). Held out: the file ids
//          of data/splits/brown_heldout.txt.
//   FILE   any other value: a UTF-8 text file (documents split at blank lines), tokens `char` or
//          `bpe`; held out: every tenth document (the 10th, 20th, ...), or, with fewer than ten,
//          the last tenth of each document's tokens.
// With a tokenizer given (a trained model's own), it is used instead of building one, so the
// documents are exactly those the model was trained and evaluated on.
// Not for: sampling or the loss (train/text_task.hpp).
//
//   attnlab::CorpusSpec spec; spec.corpus = "tang"; spec.data_dir = "data";
//   attnlab::TextCorpus c = attnlab::make_text_corpus(spec);
//   attnlab::TextTask task = c.task(72);   // trains on c.train
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/text/script.hpp"
#include "attnlab/text/tokenizer.hpp"
#include "attnlab/train/text_task.hpp"

namespace attnlab {

struct CorpusSpec {
    std::string corpus;                          // "tang", "brown" or a file path
    std::string data_dir = "data";               // holds node_modules/ (scripts/fetch_data.sh), derived/ and splits/
    std::size_t chars = 4000;                    // char tokens: characters kept (besides <unk>, <bos>, <eos>)
    std::size_t merges = 2048;                   // bpe tokens: merges learned
    std::string tokens;                          // FILE: "char" or "bpe" (tang: char, brown: bpe; "" = that)
    text::Script script = text::Script::simplified;  // tang: the script trained on
    // The fields as "task." metadata of a checkpoint, and back (ConfigError naming a bad value).
    std::map<std::string, std::string> to_metadata() const;
    static CorpusSpec from_metadata(const std::map<std::string, std::string>& task, const std::string& data_dir);
};

struct TextCorpus {
    std::string name;                                   // "tang", "brown", the file's name
    std::shared_ptr<const text::Tokenizer> tokenizer;
    TokenDocuments train, heldout;
    std::int32_t pad = 0;                               // the token padding a short document's window
    // What one "unit" of the bits-per-unit figure is: "character" (tang and char tokens: every
    // predicted token, punctuation, line breaks and <eos> included) or "byte" (bpe: UTF-8 bytes).
    std::string unit;
    std::size_t heldout_units = 0;                      // units in the held-out text
    double vocabulary_coverage = 1.0;                   // char tokens: share of held-out characters in the vocabulary
    std::size_t train_documents_read = 0, heldout_ids_listed = 0;

    TextTask task(std::size_t seq_len) const { return TextTask(name, train, seq_len, tokenizer, pad); }
    // Bits per unit of the held-out text from an evaluation of it.
    double bits_per_unit(const TextEval& e) const;
};

// IoError naming what is missing (run scripts/fetch_data.sh), ConfigError for a bad spec,
// ValueError for a file that is not UTF-8, is empty, or has fewer tokens than one sequence.
TextCorpus make_text_corpus(const CorpusSpec& spec, std::shared_ptr<const text::Tokenizer> tokenizer = nullptr);

// A corpus from text in memory (the page's lab: a corpus's training text or a reader's file),
// read as a FILE corpus is: documents at blank lines, every tenth held out, `spec.tokens` char
// (the default) or bpe; spec.corpus is its name. The same errors as make_text_corpus (ValueError
// naming the byte offset for text that is not UTF-8, ConfigError for chars or merges out of range).
TextCorpus text_corpus_from_text(const std::string& text, const CorpusSpec& spec);

// The training documents of tang or brown (held-out ones left out), as make_text_corpus reads
// them: what `attnlab corpus` writes for the page's lab, one document a paragraph.
std::vector<std::string> training_documents(const CorpusSpec& spec);

// The training documents as one UTF-8 text, a blank line between documents, as a FILE corpus is
// read back: what `attnlab corpus` writes and lab.corpusText returns (scripts/write_corpora.mjs
// writes web/dist/corpora/ with it). max_bytes > 0 keeps every stride-th document, the smallest
// stride whose text has at most max_bytes bytes, so a compact text still samples the whole corpus
// (Brown's files are in category order). ValueError when a document holds a blank line or one
// document alone is longer than max_bytes.
struct CompactText {
    std::string text;
    std::size_t documents = 0;   // documents kept
    std::size_t of = 0;          // training documents in all
    std::size_t stride = 1;      // every stride-th kept
};
CompactText compact_training_text(const CorpusSpec& spec, std::size_t max_bytes);

// What training_documents(spec) reads under spec.data_dir: whole files, and folders of which it
// reads the files whose names start with name_prefix and end with name_suffix (it may read fewer:
// brown reads the files its cats.txt lists). The WebAssembly module has no disk: provide these
// first (core/input_files.hpp, lab.provideExperimentFile).
struct CorpusFolder {
    std::string path, name_prefix, name_suffix;
};
struct CorpusInputs {
    std::vector<std::string> files;
    std::vector<CorpusFolder> folders;
};
CorpusInputs training_document_inputs(const CorpusSpec& spec);

}  // namespace attnlab
