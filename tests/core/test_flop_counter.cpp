// The engine's multiply-add counter (core/flop_counter.hpp): off outside a scope, exact for the
// matmul kernels, and for one attention layer equal to the count its shapes give.
#include <gtest/gtest.h>

#include <cstdint>

#include "attnlab/attention/multi_head_attention.hpp"
#include "attnlab/core/flop_counter.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attnlab/kernels/matmul.hpp"

namespace attnlab {
namespace {

Tensor2 filled(std::size_t rows, std::size_t cols, Rng& rng) {
    Tensor2 t = Tensor2::from_shape({rows, cols});
    for (float& v : t) v = rng.normal();
    return t;
}

struct LayerCount {
    std::uint64_t forward = 0, backward = 0;
};

// One self-attention layer, no mask: x (B, T, C), S = T.
LayerCount count_layer(std::size_t b, std::size_t t, std::size_t c, std::size_t h) {
    MultiHeadAttentionConfig config;
    config.d_model = c;
    config.num_heads = h;
    Rng rng(1);
    const MultiHeadAttention mha(config, rng);
    Tensor3 x = Tensor3::from_shape({b, t, c}), dout = Tensor3::from_shape({b, t, c});
    for (float& v : x) v = rng.normal();
    for (float& v : dout) v = rng.normal();
    MultiHeadAttentionCache cache;
    MultiHeadAttentionGrad grads(mha);
    Tensor3 out, dx;
    LayerCount n;
    FlopScope scope;
    mha.forward(x, nullptr, {}, nullptr, &cache, out);
    n.forward = scope.multiply_adds();
    scope.reset();
    mha.backward(dout, cache, {}, grads, dx);
    n.backward = scope.multiply_adds();
    return n;
}

}  // namespace

TEST(FlopCounter, CountsNothingOutsideAScope) {
    Rng rng(2);
    const Tensor2 a = filled(8, 4, rng), b = filled(4, 5, rng);
    const std::uint64_t before = detail::g_multiply_adds.load();
    (void)matmul(a, b);
    EXPECT_EQ(detail::g_multiply_adds.load(), before);
    FlopScope scope;
    EXPECT_EQ(scope.multiply_adds(), 0u);
}

TEST(FlopCounter, MatmulCountsMTimesNTimesK) {
    Rng rng(3);
    const Tensor2 a = filled(7, 5, rng), b = filled(5, 3, rng), bt = filled(3, 5, rng), at = filled(5, 7, rng);
    FlopScope scope;
    (void)matmul(a, b);       // (7, 5)·(5, 3)
    EXPECT_EQ(scope.multiply_adds(), 7u * 3 * 5);
    scope.reset();
    (void)matmul_nt(a, bt);   // (7, 5)·(3, 5)ᵀ
    (void)matmul_tn(at, b);   // (5, 7)ᵀ·(5, 3)
    EXPECT_EQ(scope.multiply_adds(), 2u * 7 * 3 * 5);
    EXPECT_EQ(scope.flops(), 4u * 7 * 3 * 5);
    {
        FlopScope inner;  // nested scopes each count from their own start
        (void)matmul(a, b);
        EXPECT_EQ(inner.multiply_adds(), 7u * 3 * 5);
    }
    EXPECT_EQ(scope.multiply_adds(), 3u * 7 * 3 * 5);
}

// Forward: q, k, v, out projections 4·B·T·C², scores and context h·B·T·S·D each = B·T·S·C,
// whatever the head count (article §3.2). Backward: every projection twice (input and weight
// gradients) 8·B·T·C², and the attention's gradient products.
TEST(FlopCounter, AttentionLayerMatchesTheFormulaForEveryHeadCount) {
    const std::size_t b = 2, t = 64, c = 128;
    const std::uint64_t projections = 4ull * b * t * c * c, pairs = 1ull * b * t * t * c;
    std::uint64_t first_backward = 0;
    for (std::size_t h : {1, 2, 4, 8}) {
        SCOPED_TRACE(h);
        const LayerCount n = count_layer(b, t, c, h);
        EXPECT_EQ(n.forward, projections + 2 * pairs);
        EXPECT_GE(n.backward, 2 * projections + 4 * pairs);  // dW·V, dV, dQ, dK at least
        if (first_backward == 0) first_backward = n.backward;
    }
}

TEST(FlopCounter, ThreadCountDoesNotChangeTheCount) {
    const std::size_t saved = num_threads();
    set_num_threads(1);
    const LayerCount one = count_layer(2, 48, 64, 4);
    set_num_threads(2);
    const LayerCount two = count_layer(2, 48, 64, 4);
    set_num_threads(saved);
    EXPECT_EQ(one.forward, two.forward);
    EXPECT_EQ(one.backward, two.backward);
}

}  // namespace attnlab
