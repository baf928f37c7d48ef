#include "attnlab/io/safetensors.hpp"

#include <cmath>

#include "attnlab/core/numeric_format.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "attnlab/core/tensor.hpp"

namespace attnlab::io {

namespace {

using nlohmann::json;

constexpr const char* kMetadataKey = "__metadata__";

std::uint64_t read_u64_le(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

void write_u64_le(std::uint64_t v, std::uint8_t* p) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

bool parse_dtype(const std::string& s, Dtype& out) {
    static const std::pair<const char*, Dtype> table[] = {{"F32", Dtype::F32}, {"I32", Dtype::I32},
                                                          {"I64", Dtype::I64}, {"U8", Dtype::U8},
                                                          {"BOOL", Dtype::BOOL}, {"F16", Dtype::F16},
                                                          {"BF16", Dtype::BF16}};
    for (const auto& [name, dtype] : table) {
        if (s == name) {
            out = dtype;
            return true;
        }
    }
    return false;
}

// A first, streaming pass over the header text that enforces what the DOM parser would not:
// no duplicate key in any object (nlohmann keeps the last one silently, which would hide a
// duplicated tensor name), at most max_header_depth levels of nesting, at most max_tensors
// tensors. It runs in time linear in the text (nlohmann's callback parser, which could do the
// same, rescans the parent object after each inner one: quadratic in the tensor count).
class HeaderChecker final : public nlohmann::json_sax<json> {
public:
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
        enter();
        open_objects_.emplace_back();
        return true;
    }
    bool end_object() override {
        open_objects_.pop_back();
        --depth_;
        return true;
    }
    bool start_array(std::size_t) override {
        enter();
        return true;
    }
    bool end_array() override {
        --depth_;
        return true;
    }
    bool key(string_t& key) override {
        if (!open_objects_.back().insert(key).second) {
            if (depth_ == 1) fail<IoError>("SafeTensors::parse: duplicate tensor name '", key, "' in header");
            fail<IoError>("SafeTensors::parse: duplicate key '", key, "' in a header object");
        }
        if (depth_ == 1 && key != kMetadataKey && ++tensors_ > SafeTensors::max_tensors) {
            fail<IoError>("SafeTensors::parse: header lists more tensors than the limit of ", SafeTensors::max_tensors);
        }
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
        fail_file(FileProblem::bad_header, "SafeTensors::parse: header is not valid JSON (", e.what(), ")");
    }

private:
    void enter() {
        if (++depth_ > SafeTensors::max_header_depth) {
            fail<IoError>("SafeTensors::parse: header nests deeper than the limit of ", SafeTensors::max_header_depth,
                          " levels");
        }
    }
    int depth_ = 0;
    std::size_t tensors_ = 0;
    std::vector<std::set<std::string>> open_objects_;
};

// Parses the header text after HeaderChecker has accepted it.
json parse_header_json(const char* begin, const char* end) {
    HeaderChecker checker;
    json::sax_parse(begin, end, &checker);
    try {
        return json::parse(begin, end);
    } catch (const json::exception& e) {
        fail_file(FileProblem::bad_header, "SafeTensors::parse: header is not valid JSON (", e.what(), ")");
    }
}

// A JSON value as text for an error message, cut to 80 characters.
std::string preview(const json& v) {
    std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 80) text = text.substr(0, 77) + "...";
    return text;
}

// A non-negative integer that fits in size_t, or IoError naming `what`.
std::size_t as_size(const json& v, const std::string& what) {
    // nlohmann parses every non-negative integer literal as number_unsigned.
    if (!v.is_number_unsigned()) {
        fail<IoError>("SafeTensors::parse: ", what, " must be a non-negative integer, got ", preview(v));
    }
    const std::uint64_t u = v.get<std::uint64_t>();
    if (u > std::numeric_limits<std::size_t>::max()) {
        fail<IoError>("SafeTensors::parse: ", what, " = ", u, " overflows size_t");
    }
    return static_cast<std::size_t>(u);
}

using ParsedEntry = SafeTensorsEntry;

ParsedEntry parse_entry(const std::string& name, const json& desc, std::uint64_t buffer_size) {
    const std::string where = "tensor '" + name + "'";
    if (!desc.is_object()) {
        fail_file(FileProblem::bad_header, "SafeTensors::parse: ", where, " must be a JSON object, got ", preview(desc));
    }
    for (const auto& [key, value] : desc.items()) {
        (void)value;
        if (key != "dtype" && key != "shape" && key != "data_offsets") {
            fail_file(FileProblem::bad_header, "SafeTensors::parse: ", where, " has unexpected key '", key,
                      "' (expected dtype, shape, data_offsets)");
        }
    }
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
        if (!desc.contains(key)) fail_file(FileProblem::bad_header, "SafeTensors::parse: ", where, " has no '", key, "'");
    }

    ParsedEntry e{name, Dtype::F32, {}, 0, 0};
    const json& dtype = desc["dtype"];
    if (!dtype.is_string() || !parse_dtype(dtype.get<std::string>(), e.dtype)) {
        fail_file(FileProblem::bad_header, "SafeTensors::parse: ", where, " has unknown dtype ", preview(dtype),
                  " (supported: F32, I32, I64, U8, BOOL, F16, BF16)");
    }

    const json& shape = desc["shape"];
    if (!shape.is_array()) {
        fail_file(FileProblem::bad_header, "SafeTensors::parse: ", where, " shape must be an array, got ", preview(shape));
    }
    if (shape.size() > SafeTensors::max_rank) {
        fail<IoError>("SafeTensors::parse: ", where, " has rank ", shape.size(), ", beyond the limit of ",
                      SafeTensors::max_rank);
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
        e.shape.push_back(as_size(shape[d], where + " shape[" + std::to_string(d) + "]"));
    }
    // An empty tensor (some extent 0) has no bytes, whatever its other extents.
    const std::size_t elem = dtype_size(e.dtype);
    const bool empty = std::find(e.shape.begin(), e.shape.end(), std::size_t{0}) != e.shape.end();
    std::size_t numel = 1;
    for (std::size_t extent : e.shape) {
        if (empty) break;
        if (numel > std::numeric_limits<std::size_t>::max() / elem / extent) {
            fail<IoError>("SafeTensors::parse: ", where, " shape ", shape_string(e.shape),
                          " element count overflows");
        }
        numel *= extent;
    }
    if (empty) numel = 0;

    const json& offsets = desc["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2) {
        fail<IoError>("SafeTensors::parse: ", where, " data_offsets must be [begin, end], got ", preview(offsets));
    }
    e.begin = as_size(offsets[0], where + " data_offsets[0]");
    e.end = as_size(offsets[1], where + " data_offsets[1]");
    if (e.begin > e.end || e.end > buffer_size) {
        fail_file(FileProblem::truncated, "SafeTensors::parse: ", where, " data_offsets [", e.begin, ", ", e.end,
                  "] are not a range within the data buffer of ", buffer_size, " bytes");
    }
    if (e.end - e.begin != numel * elem) {
        fail<IoError>("SafeTensors::parse: ", where, " byte length ", e.end - e.begin, " does not match shape ",
                      shape_string(e.shape), " of ", dtype_name(e.dtype), " (", numel, " elements x ", elem,
                      " bytes = ", numel * elem, ")");
    }
    return e;
}

// The format requires the tensors to tile the buffer: sorted by offset, each starts where the
// previous one ended, the first at 0 and the last at the end. Sorts entries by offset.
void require_exact_cover(std::vector<ParsedEntry>& entries, std::uint64_t buffer_size) {
    std::sort(entries.begin(), entries.end(), [](const ParsedEntry& a, const ParsedEntry& b) {
        return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
    });
    std::uint64_t covered = 0;
    const ParsedEntry* previous = nullptr;
    for (const ParsedEntry& e : entries) {
        if (e.begin < covered) {
            fail<IoError>("SafeTensors::parse: tensor '", e.name, "' [", e.begin, ", ", e.end,
                          ") overlaps tensor '", previous->name, "' [", previous->begin, ", ", previous->end, ")");
        }
        if (e.begin > covered) {
            fail<IoError>("SafeTensors::parse: gap in the data buffer: bytes [", covered, ", ", e.begin,
                          ") before tensor '", e.name, "' belong to no tensor");
        }
        covered = e.end;
        previous = &e;
    }
    if (covered != buffer_size) {
        fail<IoError>("SafeTensors::parse: trailing bytes: the data buffer has ", buffer_size,
                      " bytes but the tensors cover only ", covered);
    }
}

}  // namespace

const char* dtype_name(Dtype dtype) {
    switch (dtype) {
        case Dtype::F32: return "F32";
        case Dtype::I32: return "I32";
        case Dtype::I64: return "I64";
        case Dtype::U8: return "U8";
        case Dtype::BOOL: return "BOOL";
        case Dtype::F16: return "F16";
        case Dtype::BF16: return "BF16";
    }
    return "?";
}

std::size_t dtype_size(Dtype dtype) {
    switch (dtype) {
        case Dtype::F32: return 4;
        case Dtype::I32: return 4;
        case Dtype::I64: return 8;
        case Dtype::U8: return 1;
        case Dtype::BOOL: return 1;
        case Dtype::F16: return 2;
        case Dtype::BF16: return 2;
    }
    return 0;
}

namespace {
// IEEE binary16 bits -> float32: every half is exactly a float (subnormals scaled by 2^-24).
float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu, fraction = h & 0x3FFu;
    std::uint32_t bits;
    if (exponent == 0x1F) {
        bits = sign | 0x7F800000u | (fraction << 13);  // Inf, NaN (payload kept)
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (fraction << 13);  // rebias 15 -> 127
    } else {
        const float magnitude = static_cast<float>(fraction) * 5.9604644775390625e-8f;  // fraction·2^-24, exact
        std::memcpy(&bits, &magnitude, 4);
        bits |= sign;
    }
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}
}  // namespace

void convert_to_f32(Dtype dtype, const std::uint8_t* src, std::size_t count, float* dst) {
    switch (dtype) {
        case Dtype::F32:
            if (count != 0) std::memcpy(dst, src, count * 4);
            return;
        case Dtype::F16:
            for (std::size_t i = 0; i < count; ++i) {
                dst[i] = half_to_float(static_cast<std::uint16_t>(src[2 * i] | (src[2 * i + 1] << 8)));
            }
            return;
        case Dtype::BF16:
            for (std::size_t i = 0; i < count; ++i) {
                const std::uint32_t bits = static_cast<std::uint32_t>(src[2 * i] | (src[2 * i + 1] << 8)) << 16;
                std::memcpy(dst + i, &bits, 4);
            }
            return;
        default:
            fail<IoError>("convert_to_f32: dtype ", dtype_name(dtype), " is not a floating-point format (F32, F16, BF16)");
    }
}

std::uint64_t safetensors_header_bytes(const std::uint8_t* data, std::size_t size) {
    if (size < 8) {
        fail_file(FileProblem::too_short, "SafeTensors::parse: truncated: ", size,
                  " bytes, fewer than the 8-byte header length");
    }
    const std::uint64_t header_len = read_u64_le(data);
    if (header_len > SafeTensors::max_header_size) {
        fail_file(FileProblem::header_too_long, "SafeTensors::parse: header length ", header_len, " exceeds the limit of ",
                  SafeTensors::max_header_size, " bytes");
    }
    return 8 + header_len;
}

SafeTensorsHeader parse_safetensors_header(const std::uint8_t* data, std::size_t size, std::uint64_t file_size) {
    if (data == nullptr && size != 0) fail<IoError>("SafeTensors::parse: null data pointer with size ", size);
    if (file_size > SafeTensors::max_file_size) {
        fail<IoError>("SafeTensors::parse: ", file_size, " bytes exceed the limit of ", SafeTensors::max_file_size,
                      " bytes per file");
    }
    const std::uint64_t header_end = safetensors_header_bytes(data, static_cast<std::size_t>(std::min<std::uint64_t>(size, file_size)));
    if (header_end > file_size) {
        fail_file(FileProblem::truncated, "SafeTensors::parse: truncated: header length ", header_end - 8, " exceeds the ",
                  file_size - 8, " bytes after the length field");
    }
    if (header_end > size) {
        fail<IoError>("SafeTensors::parse: the header needs the first ", header_end, " bytes, only ", size, " given");
    }
    const char* text = reinterpret_cast<const char*>(data + 8);
    const json header = parse_header_json(text, text + (header_end - 8));
    if (!header.is_object()) {
        fail_file(FileProblem::bad_header, "SafeTensors::parse: header must be a JSON object, got ", header.type_name());
    }
    SafeTensorsHeader out;
    out.data_offset = header_end;
    out.data_size = file_size - header_end;
    for (const auto& [key, value] : header.items()) {
        if (key == kMetadataKey) {
            if (!value.is_object()) {
                fail<IoError>("SafeTensors::parse: __metadata__ must be an object of strings, got ", preview(value));
            }
            for (const auto& [mkey, mvalue] : value.items()) {
                if (!mvalue.is_string()) {
                    fail<IoError>("SafeTensors::parse: __metadata__ value of '", mkey, "' must be a string, got ",
                                  preview(mvalue));
                }
                out.metadata[mkey] = mvalue.get<std::string>();
            }
            continue;
        }
        out.entries.push_back(parse_entry(key, value, out.data_size));
    }
    require_exact_cover(out.entries, out.data_size);
    return out;
}

SafeTensors SafeTensors::parse(const std::uint8_t* data, std::size_t size) {
    SafeTensorsHeader header = parse_safetensors_header(data, size, size);
    const std::uint8_t* buffer = data + header.data_offset;
    SafeTensors out;
    out.metadata_ = std::move(header.metadata);
    for (SafeTensorsEntry& e : header.entries) {
        Entry stored{e.dtype, std::move(e.shape), std::vector<std::uint8_t>(buffer + e.begin, buffer + e.end)};
        if (stored.dtype == Dtype::BOOL) {
            for (std::size_t i = 0; i < stored.bytes.size(); ++i) {
                if (stored.bytes[i] > 1) {
                    fail<IoError>("SafeTensors::parse: BOOL tensor '", e.name, "' holds byte value ",
                                  int(stored.bytes[i]), " at element ", i, " (expected 0 or 1)");
                }
            }
        }
        out.tensors_.emplace(std::move(e.name), std::move(stored));
    }
    return out;
}

SafeTensors SafeTensors::read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) fail<IoError>("SafeTensors::read_file: cannot open '", path, "' for reading (", std::strerror(errno), ")");
    const std::streamoff file_size = in.tellg();
    if (file_size > 0 && static_cast<std::uint64_t>(file_size) > max_file_size) {
        fail<IoError>("SafeTensors::read_file: '", path, "' has ", file_size, " bytes, beyond the limit of ",
                      max_file_size, " bytes per file");
    }
    in.seekg(0);
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail<IoError>("SafeTensors::read_file: error while reading '", path, "'");
    try {
        return parse(bytes);
    } catch (const FileError& e) {
        fail_file(e.problem(), "SafeTensors::read_file: '", path, "': ", e.what());
    } catch (const IoError& e) {
        fail<IoError>("SafeTensors::read_file: '", path, "': ", e.what());
    }
}

std::vector<std::uint8_t> SafeTensors::serialize() const {
    // nlohmann::json objects are std::maps: keys come out sorted, which makes the header
    // canonical. Offsets follow the same (name) order.
    json header = json::object();
    if (!metadata_.empty()) header[kMetadataKey] = metadata_;
    std::size_t offset = 0;
    for (const auto& [name, e] : tensors_) {
        header[name] = {{"dtype", dtype_name(e.dtype)},
                        {"shape", e.shape},
                        {"data_offsets", {offset, offset + e.bytes.size()}}};
        offset += e.bytes.size();
    }
    std::string text;
    try {
        text = header.dump();
    } catch (const json::exception& e) {
        fail<IoError>("SafeTensors::serialize: a tensor name or metadata string is not valid UTF-8 (", e.what(), ")");
    }
    text.append((8 - text.size() % 8) % 8, ' ');

    std::vector<std::uint8_t> out(8 + text.size() + offset);
    write_u64_le(text.size(), out.data());
    std::memcpy(out.data() + 8, text.data(), text.size());
    std::uint8_t* buffer = out.data() + 8 + text.size();
    for (const auto& [name, e] : tensors_) {
        (void)name;
        if (!e.bytes.empty()) std::memcpy(buffer, e.bytes.data(), e.bytes.size());
        buffer += e.bytes.size();
    }
    return out;
}

void SafeTensors::write_file(const std::string& path) const {
    const std::vector<std::uint8_t> bytes = serialize();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) fail<IoError>("SafeTensors::write_file: cannot open '", path, "' for writing (", std::strerror(errno), ")");
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) fail<IoError>("SafeTensors::write_file: error while writing '", path, "'");
}

std::vector<std::string> SafeTensors::names() const {
    std::vector<std::string> out;
    out.reserve(tensors_.size());
    for (const auto& kv : tensors_) out.push_back(kv.first);
    return out;
}

std::vector<std::size_t> SafeTensors::shape(const std::string& name) const {
    return entry(name, "SafeTensors::shape").shape;
}

Dtype SafeTensors::dtype(const std::string& name) const { return entry(name, "SafeTensors::dtype").dtype; }

TensorView SafeTensors::view(const std::string& name) const {
    const Entry& e = entry(name, "SafeTensors::view");
    return {e.dtype, e.shape, e.bytes.data(), e.bytes.size()};
}

const SafeTensors::Entry& SafeTensors::entry(const std::string& name, const char* where) const {
    auto it = tensors_.find(name);
    if (it != tensors_.end()) return it->second;
    std::string known;
    std::size_t listed = 0;
    for (const auto& kv : tensors_) {
        if (listed == 16) {
            known += ", ...";
            break;
        }
        known += (listed++ ? ", " : "") + kv.first;
    }
    fail<IoError>(where, ": no tensor named '", name, "' (", tensors_.size(), " tensors: ", known, ")");
}

void SafeTensors::require_rank(const std::string& name, const Entry& e, std::size_t rank, const char* where) const {
    if (e.shape.size() != rank) {
        fail<IoError>(where, ": tensor '", name, "' has rank ", e.shape.size(), " (shape ", shape_string(e.shape),
                      "), expected rank ", rank);
    }
}

std::int32_t SafeTensors::narrow_i64(const std::string& name, const Entry& e, std::size_t i) {
    std::int64_t v;
    std::memcpy(&v, e.bytes.data() + 8 * i, 8);
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
        fail<IoError>("SafeTensors::get_i32: I64 tensor '", name, "' element ", i, " = ", v,
                      " does not fit in int32");
    }
    return static_cast<std::int32_t>(v);
}

namespace {
// A float32 already rounded to binary16 (round_fp16) -> its binary16 bits.
std::uint16_t exact_half_bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t exponent = (u >> 23) & 0xFFu, fraction = u & 0x7FFFFFu;
    if (exponent == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00u | (fraction ? 0x200u : 0u));
    if (exponent == 0 && fraction == 0) return sign;
    if (exponent >= 113) return static_cast<std::uint16_t>(sign | ((exponent - 112) << 10) | (fraction >> 13));
    // A binary16 subnormal: |x| = m * 2^-24 with m < 1024.
    const float m = std::fabs(x) * 16777216.0f;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(m));
}
}  // namespace

void SafeTensors::put_f16(const std::string& name, std::vector<std::size_t> shape, const float* values,
                          std::size_t count) {
    std::vector<std::uint8_t> bytes(2 * count);
    for (std::size_t i = 0; i < count; ++i) {
        const float r = round_to(Precision::fp16, values[i]);
        if (std::isinf(r) && std::isfinite(values[i])) {
            fail<IoError>("SafeTensors::put_f16: tensor '", name, "' element ", i, " = ", values[i],
                          " is beyond fp16's largest value 65504");
        }
        const std::uint16_t h = exact_half_bits(r);
        bytes[2 * i] = static_cast<std::uint8_t>(h & 0xFF);
        bytes[2 * i + 1] = static_cast<std::uint8_t>(h >> 8);
    }
    put_bytes(name, Dtype::F16, std::move(shape), bytes.data(), bytes.size());
}

void SafeTensors::put_bytes(const std::string& name, Dtype dtype, std::vector<std::size_t> shape, const void* data,
                            std::size_t nbytes) {
    if (name == kMetadataKey) fail<IoError>("SafeTensors::put: the name '__metadata__' is reserved by the format");
    Entry e{dtype, std::move(shape), std::vector<std::uint8_t>(nbytes)};
    if (nbytes != 0) std::memcpy(e.bytes.data(), data, nbytes);
    tensors_[name] = std::move(e);
}

}  // namespace attnlab::io
