// attnlab/io/safetensors.hpp: read and write tensors in the safetensors format.
//
// What it is for: model checkpoints (PyTorch state_dict names, the model config as string
// metadata) and the PyTorch golden fixtures under tests/reference/fixtures. parse() works on a
// byte buffer and never touches the filesystem, so WebAssembly callers can hand it an array
// they fetched; parse_safetensors_header() reads the header alone, for loaders that stream the
// data buffer into their own memory (io/hf_gpt2.hpp). Not for: memory-mapped loading (parse()
// copies every tensor into its own buffer), nor dtypes the engine does not read (F64, I8, ...).
//
//   auto st = attnlab::io::SafeTensors::read_file("model.safetensors");
//   attnlab::Tensor2 w = st.get_f32<2>("q_proj.weight");       // (C, C), IoError if not F32 rank 2
//   int heads = std::stoi(st.metadata().at("num_heads"));
//   st.put("q_proj.weight", w);                                // replaces, stored as F32
//   st.write_file("copy.safetensors");
//
// The format (https://github.com/huggingface/safetensors):
//   bytes [0, 8)        N, the header length, unsigned 64-bit little-endian
//   bytes [8, 8 + N)    UTF-8 JSON object, right-padded with spaces (we pad to a multiple of 8):
//                         {"__metadata__": {"key": "value", ...},
//                          "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//   bytes [8 + N, end)  the data buffer; offsets are relative to its start, tensors are row-major
//                       little-endian, and together they cover the buffer exactly (no gaps,
//                       no overlaps, no trailing bytes).
//
// Dtypes and what the getters accept:
//   | dtype | bytes | stored by put() from | read by                                   |
//   |-------|-------|----------------------|-------------------------------------------|
//   | F32   | 4     | float                | get_f32                                   |
//   | I32   | 4     | std::int32_t         | get_i32                                   |
//   | I64   | 8     | -                    | get_i32 (IoError if a value leaves int32) |
//   | U8    | 1     | std::uint8_t         | get_u8                                    |
//   | BOOL  | 1     | -                    | get_u8 (values are checked to be 0 or 1)  |
//   | F16   | 2     | -                    | convert_to_f32 (IEEE binary16)            |
//   | BF16  | 2     | -                    | convert_to_f32 (bfloat16)                 |
//
// Every problem with the input throws attnlab::IoError whose message says what is wrong
// (truncated, header length, JSON, dtype, shape, offsets, overlap, gap, duplicate, ...) and,
// for files, names the path. serialize() is deterministic: tensors in name order, canonical
// compact JSON with sorted keys, so serialize(parse(serialize(x))) == serialize(x) byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/core/tensor.hpp"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "attnlab::io::SafeTensors copies tensor bytes with memcpy and assumes a little-endian host"
#endif

namespace attnlab::io {

enum class Dtype { F32, I32, I64, U8, BOOL, F16, BF16 };

// "F32", "I32", ... as spelled in the header.
const char* dtype_name(Dtype dtype);
// Bytes per element.
std::size_t dtype_size(Dtype dtype);

// The C++ element type put() stores, and the dtype it is stored as.
template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
    static constexpr Dtype value = Dtype::F32;
};
template <>
struct dtype_of<std::int32_t> {
    static constexpr Dtype value = Dtype::I32;
};
template <>
struct dtype_of<std::uint8_t> {
    static constexpr Dtype value = Dtype::U8;
};

// count little-endian elements of F32, F16 or BF16 at src as float32 into dst (exact: every F16
// and BF16 value is a float32; NaN stays NaN, ±Inf ±Inf, subnormals are kept). IoError for
// another dtype.
void convert_to_f32(Dtype dtype, const std::uint8_t* src, std::size_t count, float* dst);

// One tensor of a header: data_offsets [begin, end) within the data buffer.
struct SafeTensorsEntry {
    std::string name;
    Dtype dtype;
    std::vector<std::size_t> shape;
    std::uint64_t begin, end;
};

// A parsed header, before any tensor data is read.
struct SafeTensorsHeader {
    std::uint64_t data_offset = 0;  // 8 + N: where the data buffer starts in the file
    std::uint64_t data_size = 0;    // the data buffer's bytes: file size - data_offset
    std::map<std::string, std::string> metadata;
    std::vector<SafeTensorsEntry> entries;  // in data order (by begin), tiling the buffer exactly
};

// The bytes a header occupies (8 + N) from the first 8 bytes of a file; IoError naming the
// limit for N beyond SafeTensors::max_header_size, or for fewer than 8 bytes.
std::uint64_t safetensors_header_bytes(const std::uint8_t* data, std::size_t size);
// The header of a file of file_size bytes from its first `size` bytes (at least 8 + N of them;
// the data buffer need not be there): every check of SafeTensors::parse that needs no tensor
// data (JSON, dtypes, shapes, offsets within the buffer, exact cover, limits), with the same
// IoError messages. A file_size shorter than the header says the file is truncated.
SafeTensorsHeader parse_safetensors_header(const std::uint8_t* data, std::size_t size, std::uint64_t file_size);

// A read-only look at one stored tensor; valid until the SafeTensors is modified or destroyed.
struct TensorView {
    Dtype dtype;
    std::vector<std::size_t> shape;
    const std::uint8_t* data;  // nbytes little-endian bytes, row-major
    std::size_t nbytes;
};

class SafeTensors {
public:
    // Limits on what parse() and read_file() accept, each refused with an IoError naming the
    // limit before anything of that size is allocated:
    // Largest header (bytes); the reference implementation uses the same bound.
    static constexpr std::uint64_t max_header_size = 100'000'000;
    // Largest complete image (header length field + header + data buffer), checked against the
    // file size before a file is read.
    static constexpr std::uint64_t max_file_size = std::uint64_t{16} << 30;  // 16 GiB
    // Most tensors in one file (a model here has a few hundred; large LLM shards a few thousand).
    static constexpr std::size_t max_tensors = 65'536;
    // Highest rank of one tensor.
    static constexpr std::size_t max_rank = 8;
    // Deepest JSON nesting in the header: the format needs 3 (object, entry, shape array); a
    // bound keeps recursive printing and destruction of a hostile header off the stack's limit.
    static constexpr int max_header_depth = 8;
    // Dtypes outside the table below are refused by name; a shape whose element count times the
    // dtype size overflows size_t is refused before any arithmetic wraps.

    // Parses a complete safetensors image held in memory; the bytes are copied.
    static SafeTensors parse(const std::uint8_t* data, std::size_t size);
    static SafeTensors parse(const std::vector<std::uint8_t>& bytes) { return parse(bytes.data(), bytes.size()); }
    // Reads and parses a file; every error message starts with the path.
    static SafeTensors read_file(const std::string& path);

    // The complete file image: header length, padded JSON header, data buffer.
    std::vector<std::uint8_t> serialize() const;
    void write_file(const std::string& path) const;

    bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
    std::vector<std::string> names() const;  // sorted
    std::size_t size() const { return tensors_.size(); }
    // IoError if there is no tensor called name.
    std::vector<std::size_t> shape(const std::string& name) const;
    Dtype dtype(const std::string& name) const;
    TensorView view(const std::string& name) const;

    // IoError if name is missing, has another dtype (see the table above) or a rank other
    // than N; the message names the tensor, the expected and the actual dtype/shape.
    template <std::size_t N>
    Array<float, N> get_f32(const std::string& name) const;
    template <std::size_t N>
    Array<std::int32_t, N> get_i32(const std::string& name) const;
    template <std::size_t N>
    Array<std::uint8_t, N> get_u8(const std::string& name) const;

    // Adds or replaces a tensor: float -> F32, int32 -> I32, uint8 -> U8.
    // IoError if name is "__metadata__" (reserved by the format).
    template <class T, std::size_t N>
    void put(const std::string& name, const Array<T, N>& t);
    // Adds or replaces an F16 tensor of `shape` from float32 values, each rounded to the nearest
    // binary16 (ties to even). IoError naming the tensor and the element for a finite value
    // beyond fp16's range (65504), which would become infinite.
    void put_f16(const std::string& name, std::vector<std::size_t> shape, const float* values, std::size_t count);
    // Removes a tensor; returns whether it was there.
    bool erase(const std::string& name) { return tensors_.erase(name) != 0; }

    // String-to-string metadata ("__metadata__" in the header), e.g. the model config.
    std::map<std::string, std::string>& metadata() { return metadata_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }

private:
    struct Entry {
        Dtype dtype;
        std::vector<std::size_t> shape;
        std::vector<std::uint8_t> bytes;  // numel * dtype_size(dtype)
    };

    // Entry for name, or IoError "<where>: no tensor named '<name>' (tensors: ...)".
    const Entry& entry(const std::string& name, const char* where) const;
    // IoError unless e's rank is `rank`.
    void require_rank(const std::string& name, const Entry& e, std::size_t rank, const char* where) const;
    // Element i of an I64 tensor as int32, or IoError if it does not fit.
    static std::int32_t narrow_i64(const std::string& name, const Entry& e, std::size_t i);
    void put_bytes(const std::string& name, Dtype dtype, std::vector<std::size_t> shape, const void* data,
                   std::size_t nbytes);

    template <class T, std::size_t N>
    static Array<T, N> make_tensor(const Entry& e) {
        typename Array<T, N>::shape_type shape;
        for (std::size_t d = 0; d < N; ++d) shape[d] = e.shape[d];
        return Array<T, N>::from_shape(shape);
    }

    std::map<std::string, Entry> tensors_;  // sorted by name: serialization order
    std::map<std::string, std::string> metadata_;
};

// ---- template definitions ----

template <std::size_t N>
Array<float, N> SafeTensors::get_f32(const std::string& name) const {
    const Entry& e = entry(name, "SafeTensors::get_f32");
    if (e.dtype != Dtype::F32) {
        fail<IoError>("SafeTensors::get_f32: tensor '", name, "' has dtype ", dtype_name(e.dtype),
                      ", expected F32");
    }
    require_rank(name, e, N, "SafeTensors::get_f32");
    auto out = make_tensor<float, N>(e);
    if (!e.bytes.empty()) std::memcpy(out.data(), e.bytes.data(), e.bytes.size());
    return out;
}

template <std::size_t N>
Array<std::int32_t, N> SafeTensors::get_i32(const std::string& name) const {
    const Entry& e = entry(name, "SafeTensors::get_i32");
    if (e.dtype != Dtype::I32 && e.dtype != Dtype::I64) {
        fail<IoError>("SafeTensors::get_i32: tensor '", name, "' has dtype ", dtype_name(e.dtype),
                      ", expected I32 or I64");
    }
    require_rank(name, e, N, "SafeTensors::get_i32");
    auto out = make_tensor<std::int32_t, N>(e);
    if (e.dtype == Dtype::I32) {
        if (!e.bytes.empty()) std::memcpy(out.data(), e.bytes.data(), e.bytes.size());
    } else {
        for (std::size_t i = 0; i < out.size(); ++i) out.data()[i] = narrow_i64(name, e, i);
    }
    return out;
}

template <std::size_t N>
Array<std::uint8_t, N> SafeTensors::get_u8(const std::string& name) const {
    const Entry& e = entry(name, "SafeTensors::get_u8");
    if (e.dtype != Dtype::U8 && e.dtype != Dtype::BOOL) {
        fail<IoError>("SafeTensors::get_u8: tensor '", name, "' has dtype ", dtype_name(e.dtype),
                      ", expected U8 or BOOL");
    }
    require_rank(name, e, N, "SafeTensors::get_u8");
    auto out = make_tensor<std::uint8_t, N>(e);
    if (!e.bytes.empty()) std::memcpy(out.data(), e.bytes.data(), e.bytes.size());
    return out;
}

template <class T, std::size_t N>
void SafeTensors::put(const std::string& name, const Array<T, N>& t) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint8_t>,
                  "SafeTensors::put stores float (F32), std::int32_t (I32) or std::uint8_t (U8)");
    std::vector<std::size_t> shape(t.shape().begin(), t.shape().end());
    // xt::xtensor is row-major and contiguous by default, which is the format's layout.
    static_assert(Array<T, N>::static_layout == xt::layout_type::row_major,
                  "SafeTensors::put needs a row-major tensor");
    put_bytes(name, dtype_of<T>::value, std::move(shape), t.data(), t.size() * sizeof(T));
}

}  // namespace attnlab::io
