// §8: one engine layer's stages (q, the weights, the concatenated heads, the output) next to the
// textbook formulas evaluated in plain JavaScript from the same input and parameters.
import type { AttnLab, Tensor } from '../../../attnlab';
import { maxAbsDiff, own, randomX, withLayer } from './layer.compute';

export interface CheckRequest { figure: 'check'; T: number; C: number; H: number; seed: number }
export interface CheckFigure {
  figure: 'check';
  stages: { name: string; engine: Tensor; plain: Tensor; maxDiff: number }[];
}

/** y = x·Wᵀ + b for x (T, I), W (O, I). */
function linear(x: Tensor, w: Tensor, b: Tensor | undefined): Tensor {
  const [T, I] = x.shape;
  const O = w.shape[0];
  const y = new Float32Array(T * O);
  for (let t = 0; t < T; t++)
    for (let o = 0; o < O; o++) {
      let s = b ? b.data[o] : 0;
      for (let i = 0; i < I; i++) s += x.data[t * I + i] * w.data[o * I + i];
      y[t * O + o] = s;
    }
  return { shape: [T, O], data: y };
}

export function check(lab: AttnLab, r: CheckRequest): CheckFigure {
  const { T, C, H, seed } = r;
  const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed });
  const D = C / H;
  const x = randomX(T, C, seed + 1);
  const p: Record<string, Tensor> = {};
  for (const n of mha.parameterNames()) p[n] = own(mha.getParameter(n));
  return withLayer(mha, (stage) => {
    const q = linear(x, p['q_proj.weight'], p['q_proj.bias']);
    const k = linear(x, p['k_proj.weight'], p['k_proj.bias']);
    const v = linear(x, p['v_proj.weight'], p['v_proj.bias']);
    const weights = new Float32Array(T * T);
    const concat = new Float32Array(T * C);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < T; i++) {
        const row = new Float64Array(T);
        let m = -Infinity;
        for (let j = 0; j < T; j++) {
          let s = 0;
          for (let d = 0; d < D; d++) s += q.data[i * C + h * D + d] * k.data[j * C + h * D + d];
          row[j] = s / Math.sqrt(D);
          m = Math.max(m, row[j]);
        }
        let sum = 0;
        for (let j = 0; j < T; j++) sum += (row[j] = Math.exp(row[j] - m));
        for (let j = 0; j < T; j++) {
          const w = row[j] / sum;
          if (h === 0) weights[i * T + j] = w;
          for (let d = 0; d < D; d++) concat[i * C + h * D + d] += w * v.data[j * C + h * D + d];
        }
      }
    }
    const out = linear({ shape: [T, C], data: concat }, p['out_proj.weight'], p['out_proj.bias']);
    const head0 = (t: Tensor): Tensor => {
      const d = new Float32Array(T * D);
      for (let i = 0; i < T; i++) d.set(t.data.subarray(i * C, i * C + D), i * D);
      return { shape: [T, D], data: d };
    };
    const rows: { name: string; engine: Tensor; plain: Tensor }[] = [
      { name: 'q', engine: stage(x, {}, 'q', 0), plain: head0(q) },
      { name: 'weights', engine: stage(x, {}, 'weights', 0), plain: { shape: [T, T], data: weights } },
      { name: 'concat', engine: stage(x, {}, 'concat'), plain: { shape: [T, C], data: concat } },
      { name: 'output', engine: stage(x, {}, 'output'), plain: out },
    ];
    return { figure: 'check', stages: rows.map((s) => ({ ...s, maxDiff: maxAbsDiff(s.engine.data, s.plain.data) })) };
  });
}
