#include "attnlab/attention/multi_head_attention.hpp"

#include <cmath>

#include <gtest/gtest.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "attnlab/attention/heads.hpp"
#include "attnlab/posenc/learned.hpp"
#include "attnlab/posenc/sinusoidal.hpp"
#include "support/random_tensor.hpp"

namespace attnlab {
namespace {

using test::random_normal;

MultiHeadAttention make_mha(std::size_t c, std::size_t h, std::size_t hkv = 0, bool bias = true,
                            std::size_t kv_dim = 0) {
    Rng rng(42);
    MultiHeadAttentionConfig config;
    config.d_model = c;
    config.num_heads = h;
    config.num_kv_heads = hkv;
    config.bias = bias;
    config.kv_dim = kv_dim;
    MultiHeadAttention mha(config, rng);
    // Non-zero biases so that tests exercise them (the torch initialisation zeroes them).
    for (auto& p : mha.parameters()) {
        Rng r(p.size());
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.1f * r.normal();
    }
    return mha;
}

double max_abs_diff(const Tensor3& a, const Tensor3& b) {
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::abs(a.data()[i] - b.data()[i])));
    return m;
}

Tensor3 permute_rows(const Tensor3& x, const std::vector<std::size_t>& perm) {
    Tensor3 y = x;
    for (std::size_t b = 0; b < x.shape(0); ++b)
        for (std::size_t i = 0; i < perm.size(); ++i)
            for (std::size_t c = 0; c < x.shape(2); ++c) y(b, i, c) = x(b, perm[i], c);
    return y;
}

const std::vector<std::size_t> kPerm = {3, 0, 4, 1, 5, 2};

TEST(MultiHeadAttention, WithoutPositionsOutputsPermuteWithInputs) {
    const MultiHeadAttention mha = make_mha(16, 4);
    const Tensor3 x = random_normal<Tensor3>({2, 6, 16}, 1);
    const Tensor3 y = mha.forward(x);
    const Tensor3 y_of_permuted = mha.forward(permute_rows(x, kPerm));
    EXPECT_LT(max_abs_diff(y_of_permuted, permute_rows(y, kPerm)), 1e-5);
}

TEST(MultiHeadAttention, EachPositionalEncodingBreaksPermutationEquivariance) {
    const MultiHeadAttention mha = make_mha(16, 4);
    const Tensor3 x = random_normal<Tensor3>({1, 6, 16}, 2);
    // The same encoding is added to the original and to the permuted input (positions stay put).
    auto check_broken = [&](auto encode, AttentionOptions options, const char* name) {
        Tensor3 a = x, b = permute_rows(x, kPerm);
        encode(a);
        encode(b);
        const Tensor3 ya = mha.forward(a, nullptr, options), yb = mha.forward(b, nullptr, options);
        EXPECT_GT(max_abs_diff(yb, permute_rows(ya, kPerm)), 1e-3) << name;
    };
    check_broken([](Tensor3& t) { add_sinusoidal(t); }, {}, "sinusoidal");
    Rng rng(3);
    const LearnedPositionalEmbedding learned(8, 16, rng);
    check_broken([&](Tensor3& t) { learned.add_to(t); }, {}, "learned");
    AttentionOptions rope;
    rope.rope = true;
    check_broken([](Tensor3&) {}, rope, "rope");
}

TEST(MultiHeadAttention, UnbatchedEqualsBatchOfOne) {
    const MultiHeadAttention mha = make_mha(12, 3);
    const Tensor3 x = random_normal<Tensor3>({1, 5, 12}, 4);
    AttentionOptions options;
    options.mask.causal = true;
    const Tensor3 batched = mha.forward(x, nullptr, options);
    const Tensor2 x2 = xt::view(x, 0, xt::all(), xt::all());
    const Tensor2 single = mha.forward(x2, nullptr, options);
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t c = 0; c < 12; ++c) EXPECT_EQ(single(i, c), batched(0, i, c));
}

TEST(MultiHeadAttention, CrossAttentionReadsKeysFromMemoryOfAnotherLengthAndWidth) {
    const MultiHeadAttention mha = make_mha(8, 2, 0, true, /*kv_dim=*/6);
    const Tensor3 x = random_normal<Tensor3>({2, 3, 8}, 5);
    const Tensor3 memory = random_normal<Tensor3>({2, 7, 6}, 6);
    TraceRecorder trace;
    const Tensor3 y = mha.forward(x, &memory, {}, &trace);
    EXPECT_EQ(y.shape(), (std::array<std::size_t, 3>{2, 3, 8}));
    EXPECT_EQ(trace.get(Stage::weights, 1, 1).shape(), (std::array<std::size_t, 2>{3, 7}));
    EXPECT_EQ(trace.get(Stage::k, 0, 0).shape(), (std::array<std::size_t, 2>{7, 4}));
    // Changing the memory changes the output; changing a query row changes only that row.
    Tensor3 x2 = x;
    x2(0, 1, 0) += 1.0f;
    const Tensor3 y2 = mha.forward(x2, &memory);
    for (std::size_t i = 0; i < 3; ++i) {
        const bool changed = std::abs(y2(0, i, 0) - y(0, i, 0)) + std::abs(y2(0, i, 5) - y(0, i, 5)) > 0;
        EXPECT_EQ(changed, i == 1) << i;
    }
}

TEST(MultiHeadAttention, StagesHaveTheDocumentedShapesPerHead) {
    const MultiHeadAttention mha = make_mha(16, 4, 2);
    const Tensor3 x = random_normal<Tensor3>({2, 5, 16}, 7);
    AttentionOptions options;
    options.rope = true;
    options.mask.causal = true;
    TraceRecorder trace;
    const Tensor3 y = mha.forward(x, nullptr, options, &trace);
    EXPECT_EQ(trace.stages().size(), kNumStages - 2);  // all but linear attention's phi_q, phi_k
    EXPECT_FALSE(trace.has(Stage::phi_q, 0, 0));
    EXPECT_EQ(trace.num_heads(Stage::q), 4u);
    EXPECT_EQ(trace.num_heads(Stage::k), 2u);
    EXPECT_EQ(trace.num_heads(Stage::weights), 4u);
    EXPECT_EQ(trace.num_batches(Stage::weights), 2u);
    EXPECT_EQ(trace.get(Stage::x, 1).shape(), (std::array<std::size_t, 2>{5, 16}));
    EXPECT_EQ(trace.get(Stage::q_rot, 1, 3).shape(), (std::array<std::size_t, 2>{5, 4}));
    const Tensor2& out = trace.get(Stage::output, 1);
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t c = 0; c < 16; ++c) EXPECT_EQ(out(i, c), y(1, i, c));
    // concat is exactly merge_heads(context): head h's context sits at columns h*D..h*D+D.
    const Tensor2& concat = trace.get(Stage::concat, 0);
    const Tensor2& ctx2 = trace.get(Stage::context, 0, 2);
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(concat(i, 8 + d), ctx2(i, d));
}

TEST(MultiHeadAttention, AResidualIsAddedInTheStoreBitForBitAndTheOutputStageShowsAttentionAlone) {
    // out = r + attention(x) and dx = r + the gradient through attention (self and cross), each
    // summed in a product's store, equal the separate sums exactly. An observer of the output
    // stage still sees attention(x) without the residual.
    for (const bool cross : {false, true}) {
        const MultiHeadAttention mha = make_mha(16, 4, 0, true, cross ? 12 : 0);
        const Tensor3 x = random_normal<Tensor3>({2, 5, 16}, 20), r = random_normal<Tensor3>({2, 5, 16}, 21);
        const Tensor3 memory = random_normal<Tensor3>({2, 7, 12}, 22);
        const Tensor3* mem = cross ? &memory : nullptr;
        AttentionOptions options;
        options.mask.causal = !cross;
        MultiHeadAttentionCache cache;
        Tensor3 plain, fused, shown;
        mha.forward(x, mem, options, nullptr, &cache, plain);
        mha.forward(x, mem, options, nullptr, &cache, fused, &r);
        TraceRecorder trace;
        mha.forward(x, mem, options, &trace, nullptr, shown, &r);
        for (std::size_t i = 0; i < plain.size(); ++i) {
            ASSERT_EQ(fused.data()[i], plain.data()[i] + r.data()[i]) << cross << " " << i;
            ASSERT_EQ(shown.data()[i], fused.data()[i]) << cross << " " << i;
        }
        const Tensor2& out = trace.get(Stage::output, 1);
        for (std::size_t i = 0; i < 5; ++i)
            for (std::size_t c = 0; c < 16; ++c) EXPECT_EQ(out(i, c), plain(1, i, c));

        const Tensor3 dy = random_normal<Tensor3>({2, 5, 16}, 23), dr = random_normal<Tensor3>({2, 5, 16}, 24);
        MultiHeadAttentionGrad g_plain(mha), g_fused(mha);
        Tensor3 dx_plain, dx_fused, dm_plain, dm_fused;
        mha.backward(dy, cache, options, g_plain, dx_plain, cross ? &dm_plain : nullptr);
        mha.backward(dy, cache, options, g_fused, dx_fused, cross ? &dm_fused : nullptr, &dr);
        for (std::size_t i = 0; i < dx_plain.size(); ++i) {
            ASSERT_EQ(dx_fused.data()[i], dx_plain.data()[i] + dr.data()[i]) << cross << " " << i;
        }
        if (cross) {
            for (std::size_t i = 0; i < dm_plain.size(); ++i) ASSERT_EQ(dm_fused.data()[i], dm_plain.data()[i]) << i;
        }
        EXPECT_THROW(mha.forward(x, mem, options, nullptr, nullptr, fused, &fused), ConfigError);
        const Tensor3 wrong = random_normal<Tensor3>({2, 5, 8}, 25);
        EXPECT_THROW(mha.forward(x, mem, options, nullptr, nullptr, fused, &wrong), ShapeError);
        EXPECT_THROW(mha.backward(dy, cache, options, g_fused, dx_fused, cross ? &dm_fused : nullptr, &wrong),
                     ShapeError);
    }
}

// x given as tables (a model's first block): the projections run over the tables, the output
// is x's to rounding (relative 1e-5), and the input gradient through the projections lands in the tables while
// dx keeps only the residual.
TEST(MultiHeadAttention, InputTablesGiveXsOutputAndSendTheProjectionsGradientToTheTables) {
    for (bool grouped : {false, true}) {
        MultiHeadAttention mha = make_mha(8, 4, grouped ? 2 : 0);
        const std::size_t batch = 3, t = 10, v = 6;
        const Tensor2 emb = random_normal<Tensor2>({v, 8}, 21), pos = random_normal<Tensor2>({t, 8}, 22);
        std::vector<std::int32_t> tokens;
        Rng pick(23);
        for (std::size_t r = 0; r < batch * t; ++r) tokens.push_back(static_cast<std::int32_t>(pick.below(v)));
        Tensor3 x = Tensor3::from_shape({batch, t, 8});
        for (std::size_t r = 0; r < batch * t; ++r)
            for (std::size_t j = 0; j < 8; ++j) x.data()[r * 8 + j] = emb(tokens[r], j) + pos(r % t, j);
        Tensor2 dtok = xt::zeros<float>({v, std::size_t{8}}), dpos = xt::zeros<float>({t, std::size_t{8}});
        TableRows tables;
        tables.a = emb.data();
        tables.a_rows = v;
        tables.ia = tokens.data();
        tables.b = pos.data();
        tables.b_rows = t;
        tables.rows = batch * t;
        tables.width = 8;
        tables.da = dtok.data();
        tables.db = dpos.data();
        AttentionOptions options;
        options.mask.causal = true;

        MultiHeadAttentionCache direct, from_tables;
        from_tables.input.tables = &tables;
        Tensor3 y_direct, y_tables;
        mha.forward(x, nullptr, options, nullptr, &direct, y_direct, &x);
        mha.forward(x, nullptr, options, nullptr, &from_tables, y_tables, &x);
        EXPECT_FALSE(direct.input.used);
        ASSERT_TRUE(from_tables.input.used);
        for (std::size_t i = 0; i < y_direct.size(); ++i) EXPECT_NEAR(y_tables.data()[i], y_direct.data()[i], 1e-5f * std::max(1.0f, std::abs(y_direct.data()[i])));

        const Tensor3 dy = random_normal<Tensor3>({batch, t, 8}, 24);
        MultiHeadAttentionGrad g_direct(mha), g_tables(mha);
        Tensor3 dx_direct, dx_tables;
        mha.backward(dy, direct, options, g_direct, dx_direct, nullptr, &dy);
        mha.backward(dy, from_tables, options, g_tables, dx_tables, nullptr, &dy);
        EXPECT_EQ(dx_tables, dy);  // the residual alone
        Tensor2 dtok_expected = xt::zeros<float>({v, std::size_t{8}}), dpos_expected = xt::zeros<float>({t, std::size_t{8}});
        for (std::size_t r = 0; r < batch * t; ++r)
            for (std::size_t j = 0; j < 8; ++j) {
                const float through = dx_direct.data()[r * 8 + j] - dy.data()[r * 8 + j];  // the projections' part
                dtok_expected(tokens[r], j) += through;
                dpos_expected(r % t, j) += through;
            }
        for (std::size_t i = 0; i < dtok.size(); ++i) EXPECT_NEAR(dtok.data()[i], dtok_expected.data()[i], 1e-5f * std::max(1.0f, std::abs(dtok_expected.data()[i])));
        for (std::size_t i = 0; i < dpos.size(); ++i) EXPECT_NEAR(dpos.data()[i], dpos_expected.data()[i], 1e-5f * std::max(1.0f, std::abs(dpos_expected.data()[i])));
        for (auto [a, b] : {std::pair{&g_tables.q_proj, &g_direct.q_proj}, std::pair{&g_tables.k_proj, &g_direct.k_proj},
                            std::pair{&g_tables.v_proj, &g_direct.v_proj}, std::pair{&g_tables.out_proj, &g_direct.out_proj}}) {
            for (std::size_t i = 0; i < a->weight.size(); ++i) EXPECT_NEAR(a->weight.data()[i], b->weight.data()[i], 1e-5f * std::max(1.0f, std::abs(b->weight.data()[i])));
            for (std::size_t i = 0; i < a->bias.size(); ++i) EXPECT_NEAR(a->bias.data()[i], b->bias.data()[i], 1e-5f * std::max(1.0f, std::abs(b->bias.data()[i])));
        }
        // Tables that do not describe x are refused, naming both.
        TableRows short_tables = tables;
        short_tables.rows = batch * t - 1;
        MultiHeadAttentionCache wrong;
        wrong.input.tables = &short_tables;
        try {
            mha.forward(x, nullptr, options, nullptr, &wrong, y_tables, &x);
            ADD_FAILURE() << "no error for tables of 29 rows";
        } catch (const ShapeError& e) {
            EXPECT_NE(std::string(e.what()).find("29 rows of width 8"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("(30 rows of width 8)"), std::string::npos) << e.what();
        }
        // Without somewhere to send the tables' gradient, backward says so.
        tables.da = nullptr;
        EXPECT_THROW(mha.backward(dy, from_tables, options, g_tables, dx_tables, nullptr, &dy), ConfigError);
        // An observer takes the recorded path, which projects x itself.
        TraceRecorder recorder({Stage::weights});
        MultiHeadAttentionCache observed;
        observed.input.tables = &tables;
        mha.forward(x, nullptr, options, &recorder, &observed, y_tables, &x);
        EXPECT_FALSE(observed.input.used);
        // A copy of the cache holds no tables: its backward projects x's gradient as usual.
        const MultiHeadAttentionCache copied = from_tables;
        EXPECT_EQ(copied.input.tables, nullptr);
        EXPECT_FALSE(copied.input.used);
    }
}

TEST(MultiHeadAttention, ConfigErrorsNameTheNumbers) {
    Rng rng(1);
    auto message = [&](MultiHeadAttentionConfig c) {
        try {
            MultiHeadAttention m(c, rng);
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message({10, 4}).find("d_model (10) must be divisible by num_heads (4)"), std::string::npos);
    EXPECT_NE(message({12, 4, 3}).find("num_heads (4) must be divisible by num_kv_heads (3)"), std::string::npos);
    EXPECT_NE(message({0, 1}).find("d_model"), std::string::npos);
    EXPECT_NE(message({8, 0}).find("num_heads"), std::string::npos);
}

TEST(MultiHeadAttention, BadInputsThrowNamingShapes) {
    const MultiHeadAttention mha = make_mha(8, 2);
    const Tensor3 x_bad = random_normal<Tensor3>({2, 5, 7}, 1);
    try {
        mha.forward(x_bad);
        FAIL();
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("(*, *, 8)"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("(2, 5, 7)"), std::string::npos) << e.what();
    }
    const Tensor3 x = random_normal<Tensor3>({2, 5, 8}, 1);
    const Tensor3 memory_bad_batch = random_normal<Tensor3>({3, 4, 8}, 1);
    EXPECT_THROW(mha.forward(x, &memory_bad_batch), ShapeError);
    AttentionOptions bad_mask;
    bad_mask.mask.key_padding = padding_mask_from_lengths({5, 5}, 6);
    EXPECT_THROW(mha.forward(x, nullptr, bad_mask), ShapeError);
    Tensor3 x_nan = x;
    x_nan(1, 2, 3) = std::nanf("");
    AttentionOptions checked;
    checked.check_finite = true;
    try {
        mha.forward(x_nan, nullptr, checked);
        FAIL();
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
    }
    AttentionOptions rope;
    rope.rope = true;
    const MultiHeadAttention odd = make_mha(6, 2);  // D = 3
    EXPECT_THROW(odd.forward(random_normal<Tensor3>({1, 2, 6}, 1), nullptr, rope), ConfigError);
}

TEST(MultiHeadAttention, ParametersUsePyTorchNamesAndLayout) {
    MultiHeadAttention mha = make_mha(16, 4, 2, true, 12);
    std::vector<std::string> names;
    for (const auto& p : mha.parameters("attn.")) names.push_back(p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"attn.q_proj.weight", "attn.q_proj.bias", "attn.k_proj.weight",
                                               "attn.k_proj.bias", "attn.v_proj.weight", "attn.v_proj.bias",
                                               "attn.out_proj.weight", "attn.out_proj.bias"}));
    const auto params = mha.parameters();
    EXPECT_EQ(find_parameter(params, "k_proj.weight", "test").shape, (std::vector<std::size_t>{8, 12}));
    const std::vector<float> w(8 * 12, 0.5f);
    EXPECT_THROW(assign_parameter(params, "k_proj.weight", {12, 8}, w.data(), "test"), ShapeError);
    EXPECT_THROW(assign_parameter(params, "k_proj.weights", {8, 12}, w.data(), "test"), ConfigError);
    assign_parameter(params, "k_proj.weight", {8, 12}, w.data(), "test");
    EXPECT_EQ(mha.k_proj.weight(7, 11), 0.5f);
    EXPECT_EQ(make_mha(8, 2, 0, false).parameters().size(), 4u);
}

}  // namespace
}  // namespace attnlab
