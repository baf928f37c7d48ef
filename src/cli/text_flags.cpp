#include "text_flags.hpp"

#include <climits>
#include <fstream>
#include <iterator>
#include <sstream>

#include "attnlab/core/error.hpp"
#include "attnlab/io/checkpoint.hpp"
#include "attnlab/io/safetensors.hpp"

namespace attnlab::cli {

std::shared_ptr<const text::Tokenizer> tokenizer_from_flags(const Args& args, const char* where) {
    if (!args.get("tokenizer").empty()) return text::load_tokenizer_directory(args.get("tokenizer"));
    const std::string& path = args.get("model");
    if (path.empty()) return nullptr;
    std::ifstream in(path, std::ios::binary);
    if (!in) fail<IoError>(where, ": cannot open checkpoint '", path, "'");
    // Only the header is needed: the tokenizer is a metadata entry.
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::uint64_t>(in.tellg());
    in.seekg(0);
    std::vector<std::uint8_t> head(8);
    in.read(reinterpret_cast<char*>(head.data()), 8);
    head.resize(static_cast<std::size_t>(io::safetensors_header_bytes(head.data(), static_cast<std::size_t>(in.gcount()))));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    const io::SafeTensorsHeader header = io::parse_safetensors_header(head.data(), got, size);
    const auto stored = header.metadata.find(io::kTokenizerMetadataKey);
    if (stored == header.metadata.end()) fail<ConfigError>(where, ": the checkpoint '", path, "' carries no tokenizer; give --tokenizer DIR");
    return text::tokenizer_from_bytes(reinterpret_cast<const std::uint8_t*>(stored->second.data()), stored->second.size());
}

const text::Tokenizer* apply_tokenizer_flag(const Args& args, Model& model) {
    if (!args.get("tokenizer").empty()) model.set_tokenizer(text::load_tokenizer_directory(args.get("tokenizer")));
    return model.tokenizer();
}

std::vector<std::int32_t> parse_token_ids(const std::string& list, const char* where) {
    std::vector<std::int32_t> ids;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        std::size_t used = 0;
        long long v = -1;
        try {
            v = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || v < 0 || v > INT32_MAX) {
            fail<ConfigError>(where, ": --tokens must be comma-separated token ids (e.g. 15496,995), got '", item, "'");
        }
        ids.push_back(static_cast<std::int32_t>(v));
    }
    if (ids.empty()) fail<ConfigError>(where, ": --tokens must name at least one token id");
    return ids;
}

}  // namespace attnlab::cli
