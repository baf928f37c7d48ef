// Linear attention (Katharopoulos et al. 2020): the recorded path — the implied (T, S) weights
// per (batch, head), the reference — and the fast path — the running sums KV = Σ φ(k_j) v_jᵀ
// and Z = Σ φ(k_j) per (batch, key/value head), no (T, S) matrix — with their backward passes,
// and the one-token-at-a-time step of generation.
//
// Legend: B batch, H query heads, Hkv key/value heads, T queries, S keys, D = head dim of q and
// k, Dv = head dim of v; G = H / Hkv query heads per key/value head.
#include "attnlab/attention/linear_attention.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attnlab/core/error.hpp"
#include "attnlab/core/thread_pool.hpp"
#include "attention_inputs.hpp"

namespace attnlab {

float linear_attention_phi(float x) { return x > 0.0f ? x + 1.0f : std::exp(x); }

namespace {

// d φ / dx read from φ itself: 1 where x > 0 (φ = x + 1 > 1), exp(x) = φ where x <= 0.
float phi_derivative(float phi) { return phi > 1.0f ? 1.0f : phi; }

struct LinearDims {
    std::size_t batch, heads, t, d, kv_heads, s, dv, group;
};

LinearDims validate_linear(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask, const char* where) {
    detail::require_attention_inputs(q, k, v, mask, where);
    require_linear_attention_mask(mask, where);
    return {q.shape(0), q.shape(1), q.shape(2), q.shape(3), k.shape(1), k.shape(2), v.shape(3), q.shape(1) / k.shape(1)};
}

// One past the last key query i may see before key padding: every key, or with the causal mask
// (bottom-right aligned: j <= i + S - T) a prefix, empty when i + S < T.
std::size_t visible_end(const AttentionMask& mask, std::size_t i, std::size_t t, std::size_t s) {
    if (!mask.causal) return s;
    return i + s + 1 > t ? i + s + 1 - t : 0;
}

bool key_padded(const AttentionMask& mask, std::size_t b, std::size_t j) {
    return mask.key_padding.size() > 0 && mask.key_padding(b, j) != 0;
}

// φ applied elementwise: x (any shape) -> (same shape)
Tensor4 phi_of(const Tensor4& x) {
    Tensor4 out = Tensor4::from_shape(x.shape());
    std::transform(x.begin(), x.end(), out.begin(), linear_attention_phi);
    return out;
}

// Reports each (batch, head) slice (N, W) of t (B, heads, N, W) as `stage`.
void observe_heads(StageObserver* observer, Stage stage, const Tensor4& t) {
    if (!observer || !observer->wants(stage)) return;
    const std::size_t n = t.shape(2), w = t.shape(3);
    for (std::size_t b = 0; b < t.shape(0); ++b)
        for (std::size_t h = 0; h < t.shape(1); ++h)
            observe(observer, stage, b, static_cast<std::ptrdiff_t>(h), n, w, w,
                    t.data() + (b * t.shape(1) + h) * n * w);
}

// The sums of the fast path for one (batch, key/value head).
struct RunningSums {
    std::vector<float> kv;   // (D, Dv) Σ φ(k_j) v_jᵀ
    std::vector<float> z;    // (D) Σ φ(k_j)
    std::vector<float> phi;  // (D) one row of φ, computed in place
    RunningSums(std::size_t d, std::size_t dv) : kv(d * dv, 0.0f), z(d, 0.0f), phi(d) {}

    // kv += φ(k_row) v_rowᵀ, z += φ(k_row). k_row: (D), v_row: (Dv)
    void fold(const float* k_row, const float* v_row, std::size_t dv) {
        const std::size_t d = z.size();
        for (std::size_t a = 0; a < d; ++a) {
            const float p = linear_attention_phi(k_row[a]);
            z[a] += p;
            float* kv_row = kv.data() + a * dv;
            for (std::size_t e = 0; e < dv; ++e) kv_row[e] += p * v_row[e];
        }
    }
    // out = φ(q_row)ᵀ·kv / (φ(q_row)·z + eps); returns the denominator. q_row: (D), out: (Dv)
    float read(const float* q_row, float* out, std::size_t dv) {
        const std::size_t d = z.size();
        float den = 0.0f;
        std::fill(out, out + dv, 0.0f);
        for (std::size_t a = 0; a < d; ++a) {
            const float p = linear_attention_phi(q_row[a]);
            den += p * z[a];
            const float* kv_row = kv.data() + a * dv;
            for (std::size_t e = 0; e < dv; ++e) out[e] += p * kv_row[e];
        }
        den += kLinearAttentionEps;
        const float inv = 1.0f / den;
        for (std::size_t e = 0; e < dv; ++e) out[e] *= inv;
        return den;
    }
};

// The fast path: per (batch, key/value head) the sums grow key by key as the queries (all heads
// of the group, in order) need them: all keys at once without the causal mask, else a prefix.
// denominator (B, H, T) is filled when non-null.
void fast_forward(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask, const LinearDims& n,
                  Tensor4& context, Tensor3* denominator) {
    parallel_for(0, n.batch * n.kv_heads, [&](std::size_t begin, std::size_t end) {
        RunningSums sums(n.d, n.dv);
        for (std::size_t bk = begin; bk < end; ++bk) {
            const std::size_t b = bk / n.kv_heads, hk = bk % n.kv_heads;
            std::fill(sums.kv.begin(), sums.kv.end(), 0.0f);
            std::fill(sums.z.begin(), sums.z.end(), 0.0f);
            const float* kh = k.data() + bk * n.s * n.d;   // (S, D)
            const float* vh = v.data() + bk * n.s * n.dv;  // (S, Dv)
            std::size_t folded = 0;
            for (std::size_t i = 0; i < n.t; ++i) {
                for (const std::size_t stop = visible_end(mask, i, n.t, n.s); folded < stop; ++folded) {
                    if (!key_padded(mask, b, folded)) sums.fold(kh + folded * n.d, vh + folded * n.dv, n.dv);
                }
                for (std::size_t g = 0; g < n.group; ++g) {
                    const std::size_t bh = b * n.heads + hk * n.group + g;
                    const float den = sums.read(q.data() + (bh * n.t + i) * n.d,
                                                context.data() + (bh * n.t + i) * n.dv, n.dv);
                    if (denominator) denominator->data()[bh * n.t + i] = den;
                }
            }
        }
    });
}

// The recorded path: per (batch, query head) the (T, S) matrix a_ij = φq_i·φk_j on the visible
// pairs (0 elsewhere), each row divided by its sum + eps, then context = weights·v.
// phi_q: (B, H, T, D), phi_k: (B, Hkv, S, D); weights (B, H, T, S) is written when non-null
// (else a per-task buffer), denominator (B, H, T) likewise.
void recorded_forward(const Tensor4& phi_q, const Tensor4& phi_k, const Tensor4& v, const AttentionMask& mask,
                      const LinearDims& n, StageObserver* observer, Tensor4& context, Tensor4* weights,
                      Tensor3* denominator) {
    parallel_for(0, n.batch * n.heads, [&](std::size_t begin, std::size_t end) {
        std::vector<float> scratch(weights ? 0 : n.t * n.s);
        for (std::size_t bh = begin; bh < end; ++bh) {
            const std::size_t b = bh / n.heads, h = bh % n.heads, bk = b * n.kv_heads + h / n.group;
            const float* pk = phi_k.data() + bk * n.s * n.d;  // (S, D)
            const float* vh = v.data() + bk * n.s * n.dv;     // (S, Dv)
            float* w = weights ? weights->data() + bh * n.t * n.s : scratch.data();  // (T, S)
            for (std::size_t i = 0; i < n.t; ++i) {
                const float* pq = phi_q.data() + (bh * n.t + i) * n.d;  // (D)
                float* wi = w + i * n.s;
                const std::size_t stop = visible_end(mask, i, n.t, n.s);
                float sum = 0.0f;
                for (std::size_t j = 0; j < n.s; ++j) {
                    float a = 0.0f;
                    if (j < stop && !key_padded(mask, b, j)) {
                        for (std::size_t x = 0; x < n.d; ++x) a += pq[x] * pk[j * n.d + x];
                    }
                    wi[j] = a;
                    sum += a;
                }
                const float den = sum + kLinearAttentionEps;
                if (denominator) denominator->data()[bh * n.t + i] = den;
                float* ci = context.data() + (bh * n.t + i) * n.dv;  // (Dv)
                std::fill(ci, ci + n.dv, 0.0f);
                for (std::size_t j = 0; j < n.s; ++j) {
                    wi[j] /= den;
                    for (std::size_t e = 0; e < n.dv; ++e) ci[e] += wi[j] * vh[j * n.dv + e];
                }
            }
            observe(observer, Stage::weights, b, static_cast<std::ptrdiff_t>(h), n.t, n.s, n.s, w);
        }
    });
}

}  // namespace

std::size_t LinearAttentionCache::bytes() const {
    return (phi_q.size() + phi_k.size() + denominator.size() + context.size() + weights.size()) * sizeof(float) +
           mask.key_padding.size() + mask.explicit_mask.size();
}

void require_linear_attention_mask(const AttentionMask& mask, const char* where) {
    if (mask.explicit_mask.size() > 0) {
        fail<ConfigError>(where, ": linear attention cannot apply an explicit (T, S) mask (shape ",
                          shape_string(mask.explicit_mask.shape()),
                          "): its sums Σφ(k)vᵀ and Σφ(k) are shared by every query, so they cannot leave out a "
                          "different set of keys per query; use the causal mask or key padding, or variant full");
    }
    if (mask.window > 0) {
        fail<ConfigError>(where, ": linear attention cannot apply a sliding window (window = ", mask.window,
                          "): its running sums Σφ(k)vᵀ and Σφ(k) hold every earlier key and cannot drop the keys "
                          "that leave the window; use the causal mask or key padding, or variant full");
    }
}

bool linear_attention_needs_recorded(const StageObserver* observer) {
    return observer && observer->wants(Stage::weights);
}

Tensor4 linear_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                         StageObserver* observer, LinearAttentionCache* cache, LinearBackend backend) {
    Tensor4 context;
    linear_attention(q, k, v, mask, observer, cache, backend, context);
    return context;
}

void linear_attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const AttentionMask& mask,
                      StageObserver* observer, LinearAttentionCache* cache, LinearBackend backend, Tensor4& context) {
    constexpr const char* where = "linear_attention";
    const LinearDims n = validate_linear(q, k, v, mask, where);
    const bool recorded = backend == LinearBackend::recorded ||
                          (backend == LinearBackend::automatic && linear_attention_needs_recorded(observer));
    context.resize({n.batch, n.heads, n.t, n.dv});
    // φ(q), φ(k) are kept only when someone reads them: the recorded path, the backward, an
    // observer. The fast path alone computes each row of φ where it is used, so its memory
    // beyond the output is the (D, Dv) sums per task.
    const bool keep_phi = recorded || cache || (observer && (observer->wants(Stage::phi_q) ||
                                                             observer->wants(Stage::phi_k)));
    Tensor4 local_phi_q, local_phi_k;
    Tensor4& phi_q = cache ? cache->phi_q : local_phi_q;  // (B, H, T, D)
    Tensor4& phi_k = cache ? cache->phi_k : local_phi_k;  // (B, Hkv, S, D)
    if (keep_phi) {
        phi_q = phi_of(q);
        phi_k = phi_of(k);
        observe_heads(observer, Stage::phi_q, phi_q);
        observe_heads(observer, Stage::phi_k, phi_k);
    }
    Tensor3* denominator = nullptr;
    if (cache) {
        cache->recorded = recorded;
        cache->mask = mask;
        cache->denominator.resize({n.batch, n.heads, n.t});
        denominator = &cache->denominator;
        if (recorded) {
            require_allocatable({n.batch, n.heads, n.t, n.s}, where, "the (B, H, T, S) linear attention weights");
            cache->weights.resize({n.batch, n.heads, n.t, n.s});
        } else {
            cache->weights = Tensor4();
        }
    }
    if (recorded) {
        recorded_forward(phi_q, phi_k, v, mask, n, observer, context, cache ? &cache->weights : nullptr, denominator);
    } else {
        fast_forward(q, k, v, mask, n, context, denominator);
    }
    observe_heads(observer, Stage::context, context);
    if (cache && &cache->context != &context) copy_into(context, cache->context);
}

namespace {

// Recorded backward for one (batch, key/value head): each query head of the group goes through
// its weights row by row.
//   w_ij = a_ij / den_i  =>  da_ij = (dw_ij - Σ_j' dw_ij' w_ij') / den_i   (visible pairs)
//   a_ij = φq_i·φk_j     =>  dφq_i += da_ij φk_j, dφk_j += da_ij φq_i
//   context_i = Σ_j w_ij v_j  =>  dw_ij = dcontext_i·v_j, dv_j += w_ij dcontext_i
void recorded_backward(const Tensor4& dcontext, const Tensor4& v, const LinearAttentionCache& cache, const LinearDims& n,
                       std::size_t b, std::size_t hk, Tensor4& dphi_q, Tensor4& dphi_k, Tensor4& dv,
                       std::vector<float>& dw) {
    const std::size_t bk = b * n.kv_heads + hk;
    const float* pk = cache.phi_k.data() + bk * n.s * n.d;  // (S, D)
    const float* vh = v.data() + bk * n.s * n.dv;           // (S, Dv)
    float* dpk = dphi_k.data() + bk * n.s * n.d;            // (S, D)
    float* dvh = dv.data() + bk * n.s * n.dv;               // (S, Dv)
    dw.resize(n.s);
    for (std::size_t g = 0; g < n.group; ++g) {
        const std::size_t bh = b * n.heads + hk * n.group + g;
        for (std::size_t i = 0; i < n.t; ++i) {
            const float* wi = cache.weights.data() + (bh * n.t + i) * n.s;  // (S)
            const float* dci = dcontext.data() + (bh * n.t + i) * n.dv;    // (Dv)
            const float* pq = cache.phi_q.data() + (bh * n.t + i) * n.d;   // (D)
            float* dpq = dphi_q.data() + (bh * n.t + i) * n.d;             // (D)
            const float den = cache.denominator.data()[bh * n.t + i];
            const std::size_t stop = visible_end(cache.mask, i, n.t, n.s);
            float r = 0.0f;
            for (std::size_t j = 0; j < stop; ++j) {
                float dwj = 0.0f;
                for (std::size_t e = 0; e < n.dv; ++e) dwj += dci[e] * vh[j * n.dv + e];
                dw[j] = dwj;
                r += dwj * wi[j];
            }
            for (std::size_t j = 0; j < stop; ++j) {
                if (key_padded(cache.mask, b, j)) continue;
                const float da = (dw[j] - r) / den;
                for (std::size_t x = 0; x < n.d; ++x) {
                    dpq[x] += da * pk[j * n.d + x];
                    dpk[j * n.d + x] += da * pq[x];
                }
                for (std::size_t e = 0; e < n.dv; ++e) dvh[j * n.dv + e] += wi[j] * dci[e];
            }
        }
    }
}

// Fast backward for one (batch, key/value head), with out_i = num_i / den_i:
//   dnum_i = dcontext_i / den_i, dden_i = -dcontext_i·out_i / den_i
//   num_i = φq_iᵀ·KV_i, den_i = φq_i·Z_i + eps  =>  dφq_i = KV_i·dnum_i + Z_i dden_i
// (a forward sweep rebuilds KV_i, Z_i), and
//   dKV_j = Σ_{i sees j} φq_i dnum_iᵀ, dZ_j = Σ_{i sees j} φq_i dden_i
//   KV = Σ_j φk_j v_jᵀ, Z = Σ_j φk_j  =>  dφk_j = dKV_j·v_j + dZ_j, dv_j = dKV_jᵀ·φk_j
// (a backward sweep: the queries that see key j are i >= the first whose prefix holds it).
void fast_backward(const Tensor4& dcontext, const Tensor4& v, const LinearAttentionCache& cache, const LinearDims& n,
                   std::size_t b, std::size_t hk, Tensor4& dphi_q, Tensor4& dphi_k, Tensor4& dv) {
    const std::size_t bk = b * n.kv_heads + hk;
    const float* pk = cache.phi_k.data() + bk * n.s * n.d;  // (S, D)
    const float* vh = v.data() + bk * n.s * n.dv;           // (S, Dv)
    std::vector<float> kv(n.d * n.dv, 0.0f), z(n.d, 0.0f), dnum(n.dv);  // (D, Dv), (D), (Dv)
    // dnum_i and dden_i of one (head, row), written into dnum and returned.
    const auto row_gradients = [&](std::size_t bh, std::size_t i) {
        const float* dci = dcontext.data() + (bh * n.t + i) * n.dv;      // (Dv)
        const float* out = cache.context.data() + (bh * n.t + i) * n.dv;  // (Dv)
        const float den = cache.denominator.data()[bh * n.t + i];
        float dot = 0.0f;
        for (std::size_t e = 0; e < n.dv; ++e) {
            dnum[e] = dci[e] / den;
            dot += dci[e] * out[e];
        }
        return -dot / den;
    };
    // Forward sweep: dφq.
    std::size_t folded = 0;
    for (std::size_t i = 0; i < n.t; ++i) {
        for (const std::size_t stop = visible_end(cache.mask, i, n.t, n.s); folded < stop; ++folded) {
            if (key_padded(cache.mask, b, folded)) continue;
            const float* pkj = pk + folded * n.d;
            const float* vj = vh + folded * n.dv;
            for (std::size_t a = 0; a < n.d; ++a) {
                z[a] += pkj[a];
                for (std::size_t e = 0; e < n.dv; ++e) kv[a * n.dv + e] += pkj[a] * vj[e];
            }
        }
        for (std::size_t g = 0; g < n.group; ++g) {
            const std::size_t bh = b * n.heads + hk * n.group + g;
            const float dden = row_gradients(bh, i);
            float* dpq = dphi_q.data() + (bh * n.t + i) * n.d;  // (D)
            for (std::size_t a = 0; a < n.d; ++a) {
                float acc = z[a] * dden;
                for (std::size_t e = 0; e < n.dv; ++e) acc += kv[a * n.dv + e] * dnum[e];
                dpq[a] = acc;
            }
        }
    }
    // Backward sweep: dφk, dv, with dKV, dZ in kv, z.
    std::fill(kv.begin(), kv.end(), 0.0f);
    std::fill(z.begin(), z.end(), 0.0f);
    float* dpk = dphi_k.data() + bk * n.s * n.d;  // (S, D)
    float* dvh = dv.data() + bk * n.s * n.dv;     // (S, Dv)
    const auto finish_keys = [&](std::size_t from, std::size_t to) {
        for (std::size_t j = from; j < to; ++j) {
            if (key_padded(cache.mask, b, j)) continue;  // stays 0: the key added nothing
            const float* pkj = pk + j * n.d;
            const float* vj = vh + j * n.dv;
            float* dpkj = dpk + j * n.d;
            float* dvj = dvh + j * n.dv;
            for (std::size_t a = 0; a < n.d; ++a) {
                float acc = z[a];
                for (std::size_t e = 0; e < n.dv; ++e) {
                    acc += kv[a * n.dv + e] * vj[e];
                    dvj[e] += kv[a * n.dv + e] * pkj[a];
                }
                dpkj[a] = acc;
            }
        }
    };
    std::size_t unfinished = n.s;  // keys [0, unfinished) may still be seen by an earlier query
    for (std::size_t i = n.t; i-- > 0;) {
        const std::size_t stop = visible_end(cache.mask, i, n.t, n.s);
        finish_keys(stop, unfinished);  // seen only by the queries after i, all summed
        unfinished = std::min(unfinished, stop);
        for (std::size_t g = 0; g < n.group; ++g) {
            const std::size_t bh = b * n.heads + hk * n.group + g;
            const float dden = row_gradients(bh, i);
            const float* pq = cache.phi_q.data() + (bh * n.t + i) * n.d;  // (D)
            for (std::size_t a = 0; a < n.d; ++a) {
                z[a] += pq[a] * dden;
                for (std::size_t e = 0; e < n.dv; ++e) kv[a * n.dv + e] += pq[a] * dnum[e];
            }
        }
    }
    finish_keys(0, unfinished);
}

}  // namespace

void linear_attention_backward(const Tensor4& dcontext, const Tensor4& v, const LinearAttentionCache& cache,
                               Tensor4& dq, Tensor4& dk, Tensor4& dv) {
    constexpr const char* where = "linear_attention_backward";
    if (cache.phi_q.size() == 0 && cache.context.size() == 0) {
        fail<ConfigError>(where, ": the cache holds no forward pass (call linear_attention with this cache first)");
    }
    const LinearDims n{cache.phi_q.shape(0), cache.phi_q.shape(1), cache.phi_q.shape(2), cache.phi_q.shape(3),
                 cache.phi_k.shape(1), cache.phi_k.shape(2), v.shape(3),
                 cache.phi_k.shape(1) == 0 ? 1 : cache.phi_q.shape(1) / cache.phi_k.shape(1)};
    require_shape(v, {static_cast<std::ptrdiff_t>(n.batch), static_cast<std::ptrdiff_t>(n.kv_heads),
                      static_cast<std::ptrdiff_t>(n.s), -1},
                  where, "v (B, Hkv, S, Dv) of the forward call");
    require_shape(dcontext, {static_cast<std::ptrdiff_t>(n.batch), static_cast<std::ptrdiff_t>(n.heads),
                             static_cast<std::ptrdiff_t>(n.t), static_cast<std::ptrdiff_t>(n.dv)},
                  where, "dcontext (B, H, T, Dv) like the forward's context");
    // dq, dk hold dφq, dφk until the last step turns them into dq, dk; all start at 0 (each
    // task writes only its own (batch, key/value head) and query heads).
    for (auto [grad, like] : {std::pair{&dq, &cache.phi_q}, std::pair{&dk, &cache.phi_k}, std::pair{&dv, &v}}) {
        if (grad->shape() != like->shape()) *grad = Tensor4::from_shape(like->shape());
        grad->fill(0.0f);
    }
    parallel_for(0, n.batch * n.kv_heads, [&](std::size_t begin, std::size_t end) {
        std::vector<float> dw;
        for (std::size_t bk = begin; bk < end; ++bk) {
            const std::size_t b = bk / n.kv_heads, hk = bk % n.kv_heads;
            if (cache.recorded) recorded_backward(dcontext, v, cache, n, b, hk, dq, dk, dv, dw);
            else fast_backward(dcontext, v, cache, n, b, hk, dq, dk, dv);
        }
    });
    // q, k -> φ(q), φ(k): the chain rule through φ, elementwise.
    for (auto [grad, phi] : {std::pair{&dq, &cache.phi_q}, std::pair{&dk, &cache.phi_k}}) {
        float* g = grad->data();
        const float* p = phi->data();
        for (std::size_t x = 0; x < grad->size(); ++x) g[x] *= phi_derivative(p[x]);
    }
}

Tensor4 linear_attention_step(const Tensor4& q, const Tensor4& k_new, const Tensor4& v_new, const Mask2& key_padding,
                              LinearAttentionState& state, StageObserver* observer) {
    constexpr const char* where = "linear_attention_step";
    const std::size_t past = state.length;
    const std::size_t t = q.shape(2);
    if (k_new.shape(2) != t) {
        fail<ShapeError>(where, ": k_new has ", k_new.shape(2), " new tokens but q has ", t, " (", shape_string(k_new.shape()),
                         " vs ", shape_string(q.shape()), ")");
    }
    const LinearDims n = validate_linear(q, k_new, v_new, AttentionMask(), where);
    if (key_padding.size() > 0) {  // (B, past + T): only the new columns are read
        require_shape(key_padding, {static_cast<std::ptrdiff_t>(n.batch), static_cast<std::ptrdiff_t>(past + t)},
                      where, "key_padding (B, S_past + T)");
    }
    if (state.kv.size() == 0) {
        state.kv = Tensor4::from_shape({n.batch, n.kv_heads, n.d, n.dv});
        state.kv.fill(0.0f);
        state.k_sum = Tensor3::from_shape({n.batch, n.kv_heads, n.d});
        state.k_sum.fill(0.0f);
    }
    require_shape(state.kv, {static_cast<std::ptrdiff_t>(n.batch), static_cast<std::ptrdiff_t>(n.kv_heads),
                             static_cast<std::ptrdiff_t>(n.d), static_cast<std::ptrdiff_t>(n.dv)},
                  where, "state.kv (B, Hkv, D, Dv) from the earlier steps");
    if (observer && (observer->wants(Stage::phi_q) || observer->wants(Stage::phi_k))) {
        observe_heads(observer, Stage::phi_q, phi_of(q));
        observe_heads(observer, Stage::phi_k, phi_of(k_new));
    }
    Tensor4 context = Tensor4::from_shape({n.batch, n.heads, t, n.dv});
    parallel_for(0, n.batch * n.kv_heads, [&](std::size_t begin, std::size_t end) {
        RunningSums sums(n.d, n.dv);
        for (std::size_t bk = begin; bk < end; ++bk) {
            const std::size_t b = bk / n.kv_heads, hk = bk % n.kv_heads;
            float* kv = state.kv.data() + bk * n.d * n.dv;  // (D, Dv)
            float* z = state.k_sum.data() + bk * n.d;       // (D)
            std::copy_n(kv, n.d * n.dv, sums.kv.begin());
            std::copy_n(z, n.d, sums.z.begin());
            for (std::size_t i = 0; i < t; ++i) {
                if (key_padding.size() == 0 || key_padding(b, past + i) == 0) {
                    sums.fold(k_new.data() + (bk * t + i) * n.d, v_new.data() + (bk * t + i) * n.dv, n.dv);
                }
                for (std::size_t g = 0; g < n.group; ++g) {
                    const std::size_t bh = b * n.heads + hk * n.group + g;
                    sums.read(q.data() + (bh * t + i) * n.d, context.data() + (bh * t + i) * n.dv, n.dv);
                }
            }
            std::copy(sums.kv.begin(), sums.kv.end(), kv);
            std::copy(sums.z.begin(), sums.z.end(), z);
        }
    });
    state.length = past + t;
    observe_heads(observer, Stage::context, context);
    return context;
}

}  // namespace attnlab
