// §8: multi-head self-attention written out by hand in plain JavaScript, forward and backward,
// the reference the chapter checks the engine's layer against. No library, no engine: loops over
// Float64 sums, the formulas of the article (Vaswani et al. 2017, eq. 1, and its multi-head form).
// The chapter shows this file's functions as they are (web/source_excerpts.mjs takes them from this
// file at build time). Shapes: T tokens, C = H·D model width, weights (out, in) as PyTorch's Linear.

/** y (T, O) = x (T, I) · Wᵀ (I, O) + b (O). */
export function linear(x, W, b, T, I, O) {
  const y = new Float32Array(T * O);
  for (let t = 0; t < T; t++)
    for (let o = 0; o < O; o++) {
      let s = b[o];
      for (let i = 0; i < I; i++) s += x[t * I + i] * W[o * I + i];
      y[t * O + o] = s;
    }
  return y;
}

/**
 * Forward of one layer. x (T, C); p: q/k/v/out_proj weights (C, C) and biases (C).
 * Returns q (H, T, D) per head, weights A (H, T, T), concat (T, C) and out (T, C).
 */
export function attentionForward(x, p, T, C, H, causal) {
  const D = C / H;
  const q = linear(x, p['q_proj.weight'], p['q_proj.bias'], T, C, C); // (T, C)
  const k = linear(x, p['k_proj.weight'], p['k_proj.bias'], T, C, C);
  const v = linear(x, p['v_proj.weight'], p['v_proj.bias'], T, C, C);
  // Split into heads: head h of token t is columns h·D .. h·D + D − 1 of row t (view, then transpose).
  const at = (m, h, t, d) => m[t * C + h * D + d];
  const A = new Float32Array(H * T * T); // (H, T, T)
  const concat = new Float32Array(T * C); // (T, C): head h's context in columns h·D ..
  for (let h = 0; h < H; h++)
    for (let i = 0; i < T; i++) {
      const s = new Float64Array(T);
      let max = -Infinity;
      for (let j = 0; j < T; j++) {
        if (causal && j > i) { s[j] = -Infinity; continue; } // the mask: no future keys
        let dot = 0;
        for (let d = 0; d < D; d++) dot += at(q, h, i, d) * at(k, h, j, d);
        s[j] = dot / Math.sqrt(D); // scores / √d_k
        max = Math.max(max, s[j]);
      }
      let sum = 0;
      for (let j = 0; j < T; j++) sum += (s[j] = Math.exp(s[j] - max)); // softmax over the row
      for (let j = 0; j < T; j++) {
        const w = s[j] / sum;
        A[(h * T + i) * T + j] = w;
        for (let d = 0; d < D; d++) concat[i * C + h * D + d] += w * at(v, h, j, d); // A·V
      }
    }
  const out = linear(concat, p['out_proj.weight'], p['out_proj.bias'], T, C, C); // W_O
  return { q, k, v, A, concat, out };
}

/** dW (O, I) += dyᵀ · x, db (O) += Σ_t dy; returns dx (T, I) = dy · W. */
function linearBackward(dy, x, W, dW, db, T, I, O) {
  const dx = new Float32Array(T * I);
  for (let t = 0; t < T; t++)
    for (let o = 0; o < O; o++) {
      const g = dy[t * O + o];
      db[o] += g;
      for (let i = 0; i < I; i++) {
        dW[o * I + i] += g * x[t * I + i];
        dx[t * I + i] += g * W[o * I + i];
      }
    }
  return dx;
}

/**
 * Backward of sum(out ⊙ g): the gradient of every parameter (named as p) and of x (T, C).
 * Softmax: dS_ij = A_ij · (dA_ij − Σ_k A_ik dA_ik), then through the 1/√D scale.
 */
export function attentionBackward(x, g, p, T, C, H, causal) {
  const D = C / H;
  const f = attentionForward(x, p, T, C, H, causal);
  const grads = {};
  for (const name of Object.keys(p)) grads[name] = new Float32Array(p[name].length);
  const dconcat = linearBackward(g, f.concat, p['out_proj.weight'], grads['out_proj.weight'], grads['out_proj.bias'], T, C, C);
  const dq = new Float32Array(T * C), dk = new Float32Array(T * C), dv = new Float32Array(T * C);
  for (let h = 0; h < H; h++)
    for (let i = 0; i < T; i++) {
      const dA = new Float64Array(T);
      let dot = 0;
      for (let j = 0; j < T; j++) {
        const w = f.A[(h * T + i) * T + j];
        for (let d = 0; d < D; d++) {
          dA[j] += dconcat[i * C + h * D + d] * f.v[j * C + h * D + d];
          dv[j * C + h * D + d] += w * dconcat[i * C + h * D + d];
        }
        dot += w * dA[j];
      }
      for (let j = 0; j < T; j++) {
        const dS = (f.A[(h * T + i) * T + j] * (dA[j] - dot)) / Math.sqrt(D);
        for (let d = 0; d < D; d++) {
          dq[i * C + h * D + d] += dS * f.k[j * C + h * D + d];
          dk[j * C + h * D + d] += dS * f.q[i * C + h * D + d];
        }
      }
    }
  const dx = new Float32Array(T * C);
  for (const [name, dy] of [['q_proj', dq], ['k_proj', dk], ['v_proj', dv]]) {
    const part = linearBackward(dy, x, p[`${name}.weight`], grads[`${name}.weight`], grads[`${name}.bias`], T, C, C);
    for (let i = 0; i < dx.length; i++) dx[i] += part[i];
  }
  return { ...f, dx, grads };
}
