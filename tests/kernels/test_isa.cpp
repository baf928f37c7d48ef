// Run-time ISA dispatch (kernels/isa.hpp): every instruction set compiled in and supported here
// computes the same kernels as the plain references, the switch itself behaves, and the "wasm"
// kernels compute what the WebAssembly module computes, bit for bit.
#include "attnlab/kernels/isa.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/attention/stage.hpp"
#include "attnlab/core/error.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/kernels/elementwise.hpp"
#include "attnlab/kernels/flash_tiles.hpp"
#include "attnlab/kernels/matmul.hpp"
#include "attnlab/kernels/softmax.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

// Restores the ISA active before the test.
class IsaScope {
public:
    IsaScope() : previous_(kernels::active_isa()) {}
    ~IsaScope() { kernels::set_isa(previous_); }

private:
    std::string previous_;
};

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    float m = 0.0f;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
    const Tensor1 t = test::random_normal<Tensor1>({n}, seed);
    return std::vector<float>(t.begin(), t.end());
}

TEST(Isa, ActiveIsOneOfTheAvailableAndTheBestByDefault) {
    const std::vector<std::string> isas = kernels::available_isas();
    ASSERT_FALSE(isas.empty());
    EXPECT_NE(std::find(isas.begin(), isas.end(), kernels::active_isa()), isas.end());
    EXPECT_GE(kernels::active_simd_width(), 1u);
}

TEST(Isa, UnknownNameThrowsConfigErrorListingTheValidOnes) {
    IsaScope scope;
    try {
        kernels::set_isa("avx1024");
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("avx1024"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find(kernels::available_isas().front()), std::string::npos);
    }
}

// Odd sizes exercise the vector body, the scalar tails and partial micro-tiles of every ISA.
TEST(Isa, EveryIsaMatchesTheReferences) {
    IsaScope scope;
    const std::size_t m = 37, n = 29, k = 301, rows = 7, cols = 45;
    const std::vector<float> a = random_vector(m * k, 1), b = random_vector(k * n, 2);
    const std::vector<float> x = random_vector(rows * cols, 3);
    std::vector<float> c_ref(m * n), sm_ref = x;
    kernels::matmul_nn_reference(a.data(), k, b.data(), n, c_ref.data(), n, m, n, k);
    kernels::softmax_rows_reference(sm_ref.data(), rows, cols, cols);
    std::vector<float> gelu_ref(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        gelu_ref[i] = float(0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
    }
    std::vector<float> gelu_tanh_ref(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = x[i];
        gelu_tanh_ref[i] = float(0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
    }

    for (const std::string& isa : kernels::available_isas()) {
        SCOPED_TRACE(isa);
        kernels::set_isa(isa);
        EXPECT_EQ(kernels::active_isa(), isa);
        std::vector<float> c(m * n);
        kernels::matmul_nn(a.data(), k, b.data(), n, c.data(), n, m, n, k);
        EXPECT_LT(max_abs_diff(c, c_ref), 1e-4f);
        std::vector<float> sm = x;
        kernels::softmax_rows(sm.data(), rows, cols, cols);
        EXPECT_LT(max_abs_diff(sm, sm_ref), 1e-6f);
        std::vector<float> g(x.size());
        kernels::gelu_forward(x.data(), g.data(), x.size());
        EXPECT_LT(max_abs_diff(g, gelu_ref), 1e-6f);
        kernels::gelu_tanh_forward(x.data(), g.data(), x.size());
        EXPECT_LT(max_abs_diff(g, gelu_tanh_ref), 1e-6f);
        std::vector<float> gamma(cols, 1.5f), beta(cols, 0.25f), y(x.size()), mean(rows), rstd(rows);
        kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows,
                                    cols, 1e-5f);
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t j = 0; j < cols; ++j) {
                const float expect = (x[r * cols + j] - mean[r]) * rstd[r] * 1.5f + 0.25f;
                EXPECT_NEAR(y[r * cols + j], expect, 1e-5f);
            }
        }
    }
}

bool has_isa(const std::string& name) {
    const std::vector<std::string> isas = kernels::available_isas();
    return std::find(isas.begin(), isas.end(), name) != isas.end();
}

// The WebAssembly build's kernels run natively on x86 with SSE4.1; natively they are offered by
// name only, never the first choice (the best native ISA is).
TEST(Isa, WasmKernelsAreOfferedByNameButNeverChosenByDefault) {
    if (!has_isa(kernels::kWasmIsa)) GTEST_SKIP() << "no wasm kernels in this build or on this CPU";
    IsaScope scope;
    const std::vector<std::string> isas = kernels::available_isas();
    if (isas.size() > 1) EXPECT_NE(isas.front(), kernels::kWasmIsa);
    kernels::set_isa(kernels::kWasmIsa);
    EXPECT_EQ(kernels::active_isa(), kernels::kWasmIsa);
    EXPECT_EQ(kernels::active_simd_width(), 4u) << "WebAssembly SIMD vectors hold 4 floats";
    EXPECT_TRUE(kernels::flash_lazy_exp()) << "the WebAssembly forward prefers the lazy reference";
}

// x of `shape` as tests/wasm/isa_fixture.mjs draws it: a 32-bit xorshift (13, 17, 5) from `seed`,
// each value (s / 2^32)·2 − 1 rounded to float.
Tensor3 xorshift_tensor(const std::vector<std::size_t>& shape, std::uint32_t seed) {
    Tensor3 x = Tensor3::from_shape({shape[0], shape[1], shape[2]});
    std::uint32_t s = seed;
    for (float& v : x) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        v = static_cast<float>(static_cast<double>(s) / 4294967296.0 * 2.0 - 1.0);
    }
    return x;
}

std::vector<std::uint32_t> float_bits(const float* data, std::size_t n) {
    std::vector<std::uint32_t> out(n);
    std::memcpy(out.data(), data, n * sizeof(float));
    return out;
}

std::vector<std::uint32_t> base64_words(const std::string& text) {
    const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::vector<unsigned char> bytes;
    std::uint32_t acc = 0;
    int bits = 0;
    for (char ch : text) {
        if (ch == '=') break;
        acc = (acc << 6) | static_cast<std::uint32_t>(alphabet.find(ch));
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes.push_back(static_cast<unsigned char>((acc >> bits) & 0xFF));
        }
    }
    std::vector<std::uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), words.size() * 4);  // little-endian, as the fixture's
    return words;
}

std::string fnv1a64_hex(const std::vector<std::uint32_t>& words) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uint32_t w : words) h = (h ^ w) * 0x100000001b3ull;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

// tests/reference/wasm_isa_trace.json holds one attention layer as the WebAssembly module computes
// it (tests/wasm/isa_fixture.mjs): every stage of a trace, and a hash of a long flash-path forward.
TEST(Isa, WasmKernelsComputeTheWebAssemblyModulesTraceBitForBit) {
    if (!has_isa(kernels::kWasmIsa)) GTEST_SKIP() << "no wasm kernels in this build or on this CPU";
    IsaScope scope;
    kernels::set_isa(kernels::kWasmIsa);
    std::ifstream in(std::string(ATTNLAB_FIXTURE_DIR) + "/../wasm_isa_trace.json");
    ASSERT_TRUE(in) << "tests/reference/wasm_isa_trace.json";
    const nlohmann::json fixture = nlohmann::json::parse(in);
    const nlohmann::json& c = fixture["case"];
    MultiHeadAttentionConfig config;
    config.d_model = c["mha"]["dModel"];
    config.num_heads = c["mha"]["numHeads"];
    config.num_kv_heads = c["mha"]["numKvHeads"];
    Rng rng(c["mha"]["seed"].get<std::uint64_t>());
    const MultiHeadAttention mha(config, rng);
    AttentionOptions options;
    options.mask.causal = c["options"]["causal"];
    options.rope = c["options"]["positional"] == "rope";

    TraceRecorder trace;
    mha.forward(xorshift_tensor(c["trace"]["shape"], c["trace"]["xorshiftSeed"]), nullptr, options, &trace);
    std::vector<std::string> recorded, in_fixture;
    for (Stage s : trace.stages()) recorded.emplace_back(stage_name(s));
    for (const nlohmann::json& entry : fixture["stages"]) {
        if (in_fixture.empty() || in_fixture.back() != entry["stage"]) in_fixture.push_back(entry["stage"]);
    }
    EXPECT_EQ(in_fixture, recorded) << "the fixture holds every stage the trace records";
    for (const nlohmann::json& entry : fixture["stages"]) {
        const std::string name = entry["stage"];
        const Stage stage = stage_from_name(name);
        const std::ptrdiff_t head = entry["head"].is_null() ? -1 : entry["head"].get<std::ptrdiff_t>();
        SCOPED_TRACE(name + " head " + std::to_string(head));
        const Tensor2& m = trace.get(stage, 0, head);
        ASSERT_EQ(m.shape(0), entry["shape"][0].get<std::size_t>());
        ASSERT_EQ(m.shape(1), entry["shape"][1].get<std::size_t>());
        const std::vector<std::uint32_t> got = float_bits(m.data(), m.size());
        const std::vector<std::uint32_t> want = base64_words(entry["bits"]);
        ASSERT_EQ(got.size(), want.size());
        const auto bad = std::mismatch(got.begin(), got.end(), want.begin());
        EXPECT_TRUE(bad.first == got.end()) << "first difference at " << (bad.first - got.begin());
    }

    AttentionOptions causal;
    causal.mask.causal = true;
    const Tensor3 out = mha.forward(xorshift_tensor(c["long"]["shape"], c["long"]["xorshiftSeed"]), nullptr, causal);
    EXPECT_EQ(fnv1a64_hex(float_bits(out.data(), out.size())), fixture["longFnv1a64"].get<std::string>())
        << "the long forward (flash path, several key tiles)";
}

}  // namespace
}  // namespace attnlab
