// Tests for attnlab/io/safetensors.hpp (and the fixture helpers of tests/support built on it).
#include "attnlab/io/safetensors.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <xtensor/xtensor.hpp>

#include "attnlab/core/tensor.hpp"
#include "support/fixtures.hpp"

namespace {

using attnlab::Array;
using attnlab::IoError;
using attnlab::io::Dtype;
using attnlab::io::SafeTensors;
using Bytes = std::vector<std::uint8_t>;

float from_bits(std::uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::uint32_t to_bits(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
}

// A file image from a header text (padded to a multiple of 8 unless told not to) and a buffer.
Bytes make_file(const std::string& header, const Bytes& buffer = {}, bool pad = true) {
    std::string text = header;
    if (pad) text.append((8 - text.size() % 8) % 8, ' ');
    Bytes out(8 + text.size() + buffer.size());
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(n >> (8 * i));
    std::copy(text.begin(), text.end(), out.begin() + 8);
    std::copy(buffer.begin(), buffer.end(), out.begin() + 8 + static_cast<std::ptrdiff_t>(text.size()));
    return out;
}

// parse() must throw IoError whose message contains `word`.
void expect_refused(const Bytes& file, const std::string& word) {
    try {
        SafeTensors::parse(file);
        ADD_FAILURE() << "parse accepted a file that should fail with '" << word << "'";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find(word), std::string::npos)
            << "message '" << e.what() << "' does not mention '" << word << "'";
    }
}

void expect_refused(const std::string& header, const Bytes& buffer, const std::string& word) {
    expect_refused(make_file(header, buffer), word);
}

// A small valid file with two tensors and metadata, built by the writer under test.
SafeTensors small_example() {
    SafeTensors st;
    st.put("b", Array<float, 2>{{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    st.put("a", Array<std::uint8_t, 1>{1, 0, 1});
    st.metadata()["num_heads"] = "2";
    return st;
}

std::string header_of(const Bytes& file) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | file[i];
    return std::string(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(n));
}

Bytes read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---- round trips ----

TEST(SafeTensors, FloatsRoundTripBitExact) {
    const std::vector<std::uint32_t> patterns = {
        0x7fc00000u,  // quiet NaN
        0x7fc00001u,  // quiet NaN with payload
        0xffa00000u,  // negative signalling NaN with payload
        0x7f800001u,  // signalling NaN, lowest payload
        0x80000000u,  // -0.0
        0x00000001u,  // smallest denormal
        0x807fffffu,  // largest negative denormal
        0x7f800000u,  // +inf
        0xff800000u,  // -inf
        0x7f7fffffu,  // largest finite
        0x3f800000u,  // 1.0
        0x3eaaaaabu,  // 1/3
    };
    Array<float, 2> t = Array<float, 2>::from_shape({3, 4});
    for (std::size_t i = 0; i < patterns.size(); ++i) t.data()[i] = from_bits(patterns[i]);
    SafeTensors st;
    st.put("t", t);
    const auto back = SafeTensors::parse(st.serialize()).get_f32<2>("t");
    ASSERT_EQ(back.shape(), t.shape());
    for (std::size_t i = 0; i < patterns.size(); ++i) {
        EXPECT_EQ(to_bits(back.data()[i]), patterns[i]) << "element " << i;
    }
}

TEST(SafeTensors, IntegerAndByteTensorsRoundTrip) {
    SafeTensors st;
    const Array<std::int32_t, 1> ids{0, -1, std::numeric_limits<std::int32_t>::min(),
                                           std::numeric_limits<std::int32_t>::max()};
    const Array<std::uint8_t, 2> mask{{0, 1, 255}, {1, 0, 0}};
    st.put("ids", ids);
    st.put("mask", mask);
    const auto back = SafeTensors::parse(st.serialize());
    EXPECT_EQ(back.dtype("ids"), Dtype::I32);
    EXPECT_EQ(back.dtype("mask"), Dtype::U8);
    EXPECT_EQ(back.get_i32<1>("ids"), ids);
    EXPECT_EQ(back.get_u8<2>("mask"), mask);
}

TEST(SafeTensors, ScalarsAndEmptyTensorsRoundTrip) {
    SafeTensors st;
    Array<float, 0> scalar = Array<float, 0>::from_shape({});
    scalar() = 2.5f;
    st.put("scalar", scalar);
    st.put("empty", Array<float, 2>::from_shape({0, 3}));
    const auto back = SafeTensors::parse(st.serialize());
    EXPECT_EQ(back.get_f32<0>("scalar")(), 2.5f);
    EXPECT_EQ(back.shape("empty"), (std::vector<std::size_t>{0, 3}));
    EXPECT_EQ(back.get_f32<2>("empty").size(), 0u);
}

TEST(SafeTensors, MetadataRoundTrips) {
    SafeTensors st = small_example();
    st.metadata()["description"] = "quotes \" backslash \\ newline \n unicode \xc3\xa9\xe2\x88\x9a";
    st.metadata()["empty"] = "";
    const auto back = SafeTensors::parse(st.serialize());
    EXPECT_EQ(back.metadata(), st.metadata());
}

TEST(SafeTensors, SerializationIsCanonicalAndStable) {
    SafeTensors forward, backward;
    forward.put("x", Array<float, 1>{1.f});
    forward.put("y", Array<float, 1>{2.f, 3.f});
    backward.put("y", Array<float, 1>{2.f, 3.f});
    backward.put("x", Array<float, 1>{1.f});
    const Bytes once = forward.serialize();
    EXPECT_EQ(once, backward.serialize()) << "insertion order must not matter";
    EXPECT_EQ(SafeTensors::parse(once).serialize(), once);
    EXPECT_EQ(header_of(once).size() % 8, 0u);
    EXPECT_EQ(header_of(once).front(), '{');
    EXPECT_EQ(forward.names(), (std::vector<std::string>{"x", "y"}));
}

TEST(SafeTensors, PutReplacesAndEraseRemoves) {
    SafeTensors st = small_example();
    st.put("b", Array<std::int32_t, 1>{7});
    EXPECT_EQ(st.dtype("b"), Dtype::I32);
    EXPECT_TRUE(st.erase("b"));
    EXPECT_FALSE(st.contains("b"));
    EXPECT_FALSE(st.erase("b"));
    EXPECT_EQ(st.size(), 1u);
}

TEST(SafeTensors, PutRefusesTheReservedName) {
    SafeTensors st;
    EXPECT_THROW(st.put("__metadata__", Array<float, 1>{1.f}), IoError);
}

TEST(SafeTensors, ViewExposesRawBytes) {
    const SafeTensors st = small_example();
    const auto v = st.view("b");
    EXPECT_EQ(v.dtype, Dtype::F32);
    EXPECT_EQ(v.shape, (std::vector<std::size_t>{2, 3}));
    ASSERT_EQ(v.nbytes, 24u);
    float third;
    std::memcpy(&third, v.data + 8, 4);
    EXPECT_EQ(third, 3.f);
}

TEST(SafeTensors, WriteFileThenReadFile) {
    const std::string path = ::testing::TempDir() + "attnlab_safetensors_roundtrip.safetensors";
    const SafeTensors st = small_example();
    st.write_file(path);
    EXPECT_EQ(read_bytes(path), st.serialize());
    const auto back = SafeTensors::read_file(path);
    EXPECT_EQ(back.serialize(), st.serialize());
    std::remove(path.c_str());
}

// ---- reading other dtypes ----

TEST(SafeTensors, ReadsI64AsInt32WithinRange) {
    Bytes buffer(16);
    const std::int64_t values[2] = {-5, 2147483647};
    std::memcpy(buffer.data(), values, 16);
    const auto st = SafeTensors::parse(
        make_file(R"({"i":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})", buffer));
    EXPECT_EQ(st.get_i32<1>("i"), (Array<std::int32_t, 1>{-5, 2147483647}));
    EXPECT_EQ(st.serialize(), SafeTensors::parse(st.serialize()).serialize());
}

TEST(SafeTensors, RefusesI64OutsideInt32) {
    Bytes buffer(8);
    const std::int64_t big = std::int64_t{1} << 40;
    std::memcpy(buffer.data(), &big, 8);
    const auto st = SafeTensors::parse(make_file(R"({"i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", buffer));
    try {
        st.get_i32<1>("i");
        ADD_FAILURE() << "expected IoError";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos) << e.what();
    }
}

TEST(SafeTensors, ReadsBoolAsUint8AndChecksValues) {
    const auto st = SafeTensors::parse(make_file(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                                                 Bytes{1, 0, 1}));
    EXPECT_EQ(st.get_u8<1>("m"), (Array<std::uint8_t, 1>{1, 0, 1}));
    expect_refused(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", Bytes{1, 2, 1}, "BOOL");
}

// ---- getter errors ----

TEST(SafeTensors, GetterErrorsNameTensorExpectedAndActual) {
    const SafeTensors st = small_example();
    auto message = [](auto&& f) {
        try {
            f();
        } catch (const IoError& e) {
            return std::string(e.what());
        }
        return std::string("<no IoError>");
    };
    const std::string missing = message([&] { st.get_f32<2>("nope"); });
    EXPECT_NE(missing.find("'nope'"), std::string::npos) << missing;
    EXPECT_NE(missing.find("a, b"), std::string::npos) << "should list the tensors: " << missing;

    const std::string dtype = message([&] { st.get_f32<1>("a"); });
    EXPECT_NE(dtype.find("'a'"), std::string::npos) << dtype;
    EXPECT_NE(dtype.find("U8"), std::string::npos) << dtype;
    EXPECT_NE(dtype.find("F32"), std::string::npos) << dtype;

    const std::string rank = message([&] { st.get_f32<3>("b"); });
    EXPECT_NE(rank.find("rank 2"), std::string::npos) << rank;
    EXPECT_NE(rank.find("(2, 3)"), std::string::npos) << rank;
    EXPECT_NE(rank.find("rank 3"), std::string::npos) << rank;

    EXPECT_THROW(st.get_i32<1>("b"), IoError);
    EXPECT_THROW(st.get_u8<2>("b"), IoError);
    EXPECT_THROW(st.shape("nope"), IoError);
}

// ---- corruption: every case refused with a telling message ----

TEST(SafeTensors, RefusesFilesShorterThanTheLengthField) {
    for (std::size_t n = 0; n < 8; ++n) expect_refused(Bytes(n, 0), "truncated");
}

TEST(SafeTensors, RefusesEveryTruncation) {
    const Bytes file = small_example().serialize();
    for (std::size_t n = 0; n < file.size(); ++n) {
        const Bytes prefix(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_THROW(SafeTensors::parse(prefix), IoError) << "prefix of " << n << " of " << file.size() << " bytes";
    }
    EXPECT_NO_THROW(SafeTensors::parse(file));
}

TEST(SafeTensors, RefusesEveryFlippedBitOfTheHeaderLength) {
    const Bytes file = small_example().serialize();
    for (int bit = 0; bit < 64; ++bit) {
        Bytes bad = file;
        bad[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
        EXPECT_THROW(SafeTensors::parse(bad), IoError) << "bit " << bit;
    }
}

TEST(SafeTensors, RefusesHeaderLengthBeyondFileOrLimit) {
    Bytes file = small_example().serialize();
    file[0] = 0xff;
    file[1] = 0x7f;  // 32 KiB: beyond this small file
    expect_refused(file, "header length");
    Bytes absurd(16, 0);
    absurd[7] = 0x80;  // 2^63
    expect_refused(absurd, "exceeds the limit");
}

TEST(SafeTensors, SurvivesEveryCorruptedHeaderByte) {
    // Not a proof, but any crash or non-IoError exception here is a bug.
    const Bytes file = small_example().serialize();
    const std::size_t header_end = 8 + header_of(file).size();
    for (std::size_t i = 8; i < header_end; ++i) {
        for (std::uint8_t value : {std::uint8_t{0}, std::uint8_t{'"'}, std::uint8_t{'9'}, std::uint8_t{'-'},
                                   std::uint8_t{'}'}, std::uint8_t{0xff}}) {
            Bytes bad = file;
            bad[i] = value;
            try {
                SafeTensors::parse(bad);
            } catch (const IoError&) {
            }
        }
    }
}

TEST(SafeTensors, RefusesHeadersThatAreNotJsonObjects) {
    expect_refused("{\"a\":", {}, "JSON");
    expect_refused("not json", {}, "JSON");
    expect_refused("{\"a\": \"\xff\"}", {}, "JSON");  // invalid UTF-8
    expect_refused("[1, 2]", {}, "object");
    expect_refused("{\"a\": 1}", {}, "tensor 'a'");
}

TEST(SafeTensors, RefusesMetadataThatIsNotStrings) {
    expect_refused(R"({"__metadata__":{"heads":2}})", {}, "__metadata__");
    expect_refused(R"({"__metadata__":["x"]})", {}, "__metadata__");
}

TEST(SafeTensors, RefusesUnknownDtype) {
    expect_refused(R"({"t":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", Bytes(8), "dtype");
    expect_refused(R"({"t":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", Bytes(4), "dtype");
}

TEST(SafeTensors, RefusesMissingOrUnexpectedEntryKeys) {
    expect_refused(R"({"t":{"dtype":"F32","data_offsets":[0,4]}})", Bytes(4), "shape");
    expect_refused(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}})", Bytes(4), "unexpected");
}

TEST(SafeTensors, RefusesShapesThatAreNotNonNegativeIntegers) {
    expect_refused(R"({"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", Bytes(4), "non-negative integer");
    expect_refused(R"({"t":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", Bytes(4), "non-negative integer");
    expect_refused(R"({"t":{"dtype":"F32","shape":["1"],"data_offsets":[0,4]}})", Bytes(4), "non-negative integer");
    expect_refused(R"({"t":{"dtype":"F32","shape":1,"data_offsets":[0,4]}})", Bytes(4), "shape");
}

TEST(SafeTensors, RefusesElementCountOverflow) {
    expect_refused(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", Bytes(4),
                   "overflow");
    expect_refused(R"({"t":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,4]}})", Bytes(4),
                   "non-negative integer");  // beyond u64: nlohmann parses it as a float
}

// ---- limits: each named in safetensors.hpp, refused before anything that large is allocated ----

TEST(SafeTensorsLimits, RefusesImagesBeyondTheFileSizeLimit) {
    // parse() checks the claimed size first and reads none of the bytes behind it.
    const Bytes file = small_example().serialize();
    try {
        SafeTensors::parse(file.data(), static_cast<std::size_t>(SafeTensors::max_file_size + 1));
        ADD_FAILURE() << "parse accepted an image beyond max_file_size";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("exceed the limit"), std::string::npos) << e.what();
    }
}

TEST(SafeTensorsLimits, ReadFileRefusesFilesBeyondTheLimitWithoutReadingThem) {
    // A sparse file: its size is beyond the limit but it takes no disk space.
    const std::string path = ::testing::TempDir() + "attnlab_huge.safetensors";
    {
        std::ofstream out(path, std::ios::binary);
        out.seekp(static_cast<std::streamoff>(SafeTensors::max_file_size));
        out.put('\0');
    }
    try {
        SafeTensors::read_file(path);
        ADD_FAILURE() << "read_file accepted a file beyond max_file_size";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("beyond the limit"), std::string::npos) << e.what();
    }
    std::remove(path.c_str());
}

TEST(SafeTensorsLimits, RefusesMoreTensorsThanTheLimit) {
    std::string header = "{";
    for (std::size_t i = 0; i <= SafeTensors::max_tensors; ++i) {
        header += (i ? ",\"t" : "\"t") + std::to_string(i) + R"(":{"dtype":"U8","shape":[0],"data_offsets":[0,0]})";
    }
    header += "}";
    expect_refused(header, {}, "more tensors than the limit of " + std::to_string(SafeTensors::max_tensors));
}

TEST(SafeTensorsLimits, AcceptsTensorsUpToTheRankLimitAndRefusesBeyond) {
    std::string ones(2 * SafeTensors::max_rank - 1, ',');
    for (std::size_t i = 0; i < ones.size(); i += 2) ones[i] = '1';
    const auto st = SafeTensors::parse(
        make_file(R"({"t":{"dtype":"U8","shape":[)" + ones + R"(],"data_offsets":[0,1]}})", Bytes{5}));
    EXPECT_EQ(st.shape("t").size(), SafeTensors::max_rank);
    expect_refused(R"({"t":{"dtype":"U8","shape":[1,)" + ones + R"(],"data_offsets":[0,1]}})", Bytes{5}, "rank");
}

TEST(SafeTensorsLimits, RefusesHeadersNestedBeyondTheDepthLimit) {
    // Deep enough to overflow a recursive printer if it were ever printed whole.
    const std::size_t depth = 100'000;
    const std::string nested = std::string(depth, '[') + std::string(depth, ']');
    expect_refused(R"({"__metadata__":{"k":)" + nested + "}}", {}, "nests deeper");
    expect_refused(R"({"t":{"dtype":"U8","shape":)" + nested + R"(,"data_offsets":[0,0]}})", {}, "nests deeper");
}

TEST(SafeTensorsLimits, RefusesEveryDtypeOutsideTheTable) {
    for (const char* dtype : {"F64", "I8", "I16", "U16", "U32", "U64", "F8_E4M3", "f16", "f32", ""}) {
        expect_refused(std::string(R"({"t":{"dtype":")") + dtype + R"(","shape":[1],"data_offsets":[0,1]}})",
                       Bytes(1), "unknown dtype");
    }
}

TEST(SafeTensorsLimits, RefusesShapesWhoseByteCountOverflows) {
    // Each product overflows size_t only once multiplied by the dtype size or by a later extent.
    expect_refused(R"({"t":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,4]}})", Bytes(4),
                   "overflows");  // 2^62 elements x 4 bytes = 2^64
    expect_refused(R"({"t":{"dtype":"U8","shape":[65536,65536,65536,65536],"data_offsets":[0,4]}})", Bytes(4),
                   "overflows");  // 2^64 elements
    expect_refused(R"({"t":{"dtype":"I64","shape":[3,768614336404564651],"data_offsets":[0,8]}})", Bytes(8),
                   "overflows");  // 3 x (2^64 / 24 + 1) x 8 bytes
    // A zero extent makes the tensor empty, whatever the others are.
    const auto st = SafeTensors::parse(
        make_file(R"({"t":{"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]}})"));
    EXPECT_EQ(st.view("t").nbytes, 0u);
}

TEST(SafeTensors, RefusesBadDataOffsets) {
    expect_refused(R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[0]}})", Bytes(2), "data_offsets");
    expect_refused(R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[2,0]}})", Bytes(2), "data_offsets");
    expect_refused(R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[0,3]}})", Bytes(2), "data_offsets");
    expect_refused(R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[-1,1]}})", Bytes(2), "data_offsets");
}

TEST(SafeTensors, RefusesByteLengthThatDoesNotMatchDtypeSize) {
    // 12 bytes are three F32 but not the three I64 the header claims.
    expect_refused(R"({"t":{"dtype":"I64","shape":[3],"data_offsets":[0,12]}})", Bytes(12), "byte length");
    expect_refused(R"({"t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", Bytes(12), "byte length");
}

TEST(SafeTensors, RefusesOverlappingTensors) {
    expect_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                   R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                   Bytes(12), "overlaps");
    expect_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                   R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                   Bytes(8), "overlaps");
}

TEST(SafeTensors, RefusesGapsAndTrailingBytes) {
    expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                   R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                   Bytes(12), "gap");
    expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", Bytes(8), "gap");
    expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", Bytes(5), "trailing");
    expect_refused("{}", Bytes(1), "trailing");
}

TEST(SafeTensors, RefusesDuplicateNames) {
    expect_refused(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                   R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                   Bytes(2), "duplicate tensor name 'a'");
    expect_refused(R"({"a":{"dtype":"U8","dtype":"F32","shape":[1],"data_offsets":[0,1]}})", Bytes(1),
                   "duplicate key");
}

TEST(SafeTensors, AcceptsUnpaddedHeadersAndEmptyFiles) {
    // Other writers need not pad; zero tensors and no metadata is a valid file.
    const auto st = SafeTensors::parse(make_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
                                                 Bytes{7}, /*pad=*/false));
    EXPECT_EQ(st.get_u8<1>("a")(0), 7);
    EXPECT_EQ(SafeTensors::parse(make_file("{}")).size(), 0u);
}

TEST(SafeTensors, ReadFileErrorsNameThePath) {
    const std::string missing = ::testing::TempDir() + "attnlab_no_such_file.safetensors";
    try {
        SafeTensors::read_file(missing);
        ADD_FAILURE() << "expected IoError";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    }
    const std::string corrupt = ::testing::TempDir() + "attnlab_corrupt.safetensors";
    {
        std::ofstream out(corrupt, std::ios::binary);
        out << "abc";
    }
    try {
        SafeTensors::read_file(corrupt);
        ADD_FAILURE() << "expected IoError";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find(corrupt), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
    std::remove(corrupt.c_str());
}

// ---- files written by tests/reference/make_fixtures.py ----

TEST(SafeTensors, ReadsAFileWrittenByPython) {
    const auto st = SafeTensors::read_file(ATTNLAB_FIXTURE_DIR "/mha_basic.safetensors");
    EXPECT_EQ(st.metadata().at("num_heads"), "2");
    EXPECT_EQ(st.metadata().at("causal"), "0");
    EXPECT_EQ(st.shape("x"), (std::vector<std::size_t>{2, 5, 8}));
    EXPECT_EQ(st.shape("q_proj.weight"), (std::vector<std::size_t>{8, 8}));
    const auto weights = st.get_f32<4>("weights");  // (B, H, T, S)
    ASSERT_EQ(weights.shape(), (std::array<std::size_t, 4>{2, 2, 5, 5}));
    for (std::size_t row = 0; row < weights.size() / 5; ++row) {
        double sum = 0;
        for (std::size_t s = 0; s < 5; ++s) sum += weights.data()[row * 5 + s];
        EXPECT_NEAR(sum, 1.0, 1e-6) << "softmax row " << row;
    }
}

TEST(SafeTensors, PythonWriterAndCppWriterAgreeByteForByte) {
    for (const char* name : {"mha_basic", "mha_odd_width", "mha_padding_causal", "mha_explicit_mask", "mha_cross",
                             "mha_nobias", "mha_unbatched", "mha_large", "gqa_h4_kv2", "mqa_h4_kv1", "gqa_rope",
                             "rope_mha", "sinusoidal_pe"}) {
        const std::string path = std::string(ATTNLAB_FIXTURE_DIR) + "/" + name + ".safetensors";
        EXPECT_EQ(SafeTensors::read_file(path).serialize(), read_bytes(path)) << name;
    }
}

// ---- tests/support/fixtures.hpp ----

TEST(SafeTensorsFixtures, LoadFixtureGivesTensorsAndTypedMetadata) {
    const auto fx = attnlab::test::load_fixture("mha_padding_causal");
    EXPECT_EQ(fx.meta_int("num_heads"), 4);
    EXPECT_TRUE(fx.meta_bool("causal"));
    EXPECT_EQ(fx.meta_string("positional"), "none");
    EXPECT_EQ(fx.meta_double("rope_base"), 10000.0);
    EXPECT_EQ(fx.tensor<3>("x").shape(), (std::array<std::size_t, 3>{3, 7, 16}));
    const auto kpm = fx.mask<2>("key_padding_mask");  // (B, S), lengths [7, 5, 3]
    EXPECT_EQ(kpm(1, 4), 0);
    EXPECT_EQ(kpm(1, 5), 1);
    EXPECT_FALSE(fx.has("attn_mask"));
}

TEST(SafeTensorsFixtures, AllCloseReportsMaxDifferenceAndFirstBadIndex) {
    const Array<float, 2> expected{{0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}};
    Array<float, 2> actual = expected;
    actual(0, 1) += 1e-6f;
    EXPECT_TRUE(attnlab::test::all_close(actual, expected, 1e-5));
    actual(1, 2) += 0.5f;
    actual(1, 0) += 0.25f;
    const auto result = attnlab::test::all_close(actual, expected, 1e-5);
    ASSERT_FALSE(result);
    const std::string message = result.message();
    EXPECT_NE(message.find("max abs diff 0.5 at (1, 2)"), std::string::npos) << message;
    EXPECT_NE(message.find("first at (1, 0)"), std::string::npos) << message;
    EXPECT_NE(message.find("2 element(s)"), std::string::npos) << message;

    actual(0, 0) = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(attnlab::test::all_close(actual, expected, 1e-5));
    EXPECT_FALSE(attnlab::test::all_close(Array<float, 1>{1.f}, expected, 1e-5));  // shape mismatch
}

TEST(SafeTensorsFixtures, MissingMetadataFailsTheTestWithTheKey) {
    const auto fx = attnlab::test::load_fixture("sinusoidal_pe");
    ::testing::TestPartResultArray failures;
    {
        ::testing::ScopedFakeTestPartResultReporter reporter(
            ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
        EXPECT_THROW(fx.meta_int("num_heads"), attnlab::test::FixtureError);
        EXPECT_THROW(attnlab::test::load_fixture("no_such_fixture"), attnlab::test::FixtureError);
    }
    ASSERT_EQ(failures.size(), 2);
    EXPECT_NE(std::string(failures.GetTestPartResult(0).message()).find("num_heads"), std::string::npos);
    EXPECT_NE(std::string(failures.GetTestPartResult(1).message()).find("no_such_fixture"), std::string::npos);
}

}  // namespace

namespace attnlab {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes half_file(const char* dtype, const std::vector<std::uint16_t>& values) {
    Bytes data;
    for (std::uint16_t v : values) {
        data.push_back(static_cast<std::uint8_t>(v & 0xFF));
        data.push_back(static_cast<std::uint8_t>(v >> 8));
    }
    std::string header = std::string(R"({"h":{"dtype":")") + dtype + R"(","shape":[)" + std::to_string(values.size()) +
                         R"(],"data_offsets":[0,)" + std::to_string(data.size()) + "]}}";
    header.append((8 - header.size() % 8) % 8, ' ');
    Bytes out(8);
    for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(header.size() >> (8 * i));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

TEST(SafeTensorsHalf, F16AndBf16ConvertExactlyToFloat) {
    // F16: 1, -2, 65504 (largest), 2^-24 (smallest subnormal), 2^-14 (smallest normal), +inf, -0.
    const std::vector<std::uint16_t> f16 = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x0400, 0x7C00, 0x8000, 0x7E00};
    const io::SafeTensors st = io::SafeTensors::parse(half_file("F16", f16));
    EXPECT_EQ(st.dtype("h"), io::Dtype::F16);
    EXPECT_THROW(st.get_f32<1>("h"), IoError);  // get_f32 reads F32 only
    const io::TensorView v = st.view("h");
    std::vector<float> out(f16.size());
    io::convert_to_f32(v.dtype, v.data, out.size(), out.data());
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], -2.0f);
    EXPECT_EQ(out[2], 65504.0f);
    EXPECT_EQ(out[3], std::ldexp(1.0f, -24));
    EXPECT_EQ(out[4], std::ldexp(1.0f, -14));
    EXPECT_EQ(out[5], INFINITY);
    EXPECT_TRUE(out[6] == 0.0f && std::signbit(out[6]));
    EXPECT_TRUE(std::isnan(out[7]));
    // BF16 is the top half of a float32: 1, -2.5, 3.140625, -inf.
    const std::vector<std::uint16_t> bf16 = {0x3F80, 0xC020, 0x4049, 0xFF80};
    const io::SafeTensors sb = io::SafeTensors::parse(half_file("BF16", bf16));
    const io::TensorView w = sb.view("h");
    std::vector<float> back(bf16.size());
    io::convert_to_f32(w.dtype, w.data, back.size(), back.data());
    EXPECT_EQ(back, (std::vector<float>{1.0f, -2.5f, 3.140625f, -INFINITY}));
    EXPECT_THROW(io::convert_to_f32(io::Dtype::I32, w.data, 1, back.data()), IoError);
}

TEST(SafeTensorsHeader, ParsesTheHeaderWithoutTheDataAndRefusesATruncatedFile) {
    const Bytes file = half_file("F16", {1, 2, 3});
    const std::uint64_t header = io::safetensors_header_bytes(file.data(), 8);
    EXPECT_EQ(header, file.size() - 6);
    // The header alone, with the file's full size: the data need not be there.
    const io::SafeTensorsHeader h = io::parse_safetensors_header(file.data(), header, file.size());
    EXPECT_EQ(h.data_offset, header);
    EXPECT_EQ(h.data_size, 6u);
    ASSERT_EQ(h.entries.size(), 1u);
    EXPECT_EQ(h.entries[0].name, "h");
    EXPECT_EQ(h.entries[0].end, 6u);
    // A file shorter than its header says is truncated; one whose data is short does not tile.
    EXPECT_THROW(io::parse_safetensors_header(file.data(), header, header - 1), IoError);
    try {
        io::parse_safetensors_header(file.data(), header, file.size() - 2);
        FAIL();
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("not a range within the data buffer of 4 bytes"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(io::parse_safetensors_header(file.data(), 20, file.size()), IoError);  // header cut
}

}  // namespace
}  // namespace attnlab
