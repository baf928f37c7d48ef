// §3: the engine's per-head q (the right split) and the same numbers read as a plain reshape.
import type { AttnLab, Tensor } from '../../../attnlab';
import { randomX, withLayer } from './layer.compute';

export interface ReshapeRequest { figure: 'reshape'; T: number; C: number; H: number; seed: number }
export interface ReshapeFigure {
  figure: 'reshape';
  /** (T, C) all heads' q side by side (the engine's per-head q, concatenated). */
  q: Tensor;
  /** H tensors (T, D): the engine's split (right) and the buffer read as (H, T, D) (wrong). */
  right: Tensor[];
  wrong: Tensor[];
  /** For each wrong head, row t: the token whose numbers it holds (-1 when they are mixed). */
  wrongTokens: number[][];
}

export function reshape(lab: AttnLab, r: ReshapeRequest): ReshapeFigure {
  const D = r.C / r.H;
  const mha = new lab.MultiHeadAttention({ dModel: r.C, numHeads: r.H, seed: r.seed });
  return withLayer(mha, (stage) => {
    const x = randomX(r.T, r.C, r.seed + 1);
    const right: Tensor[] = [];
    for (let h = 0; h < r.H; h++) right.push(stage(x, {}, 'q', h));
    // (T, C) with head h in columns h·D .. h·D + D − 1: what x·W_Qᵀ + b holds before the split.
    const q = new Float32Array(r.T * r.C);
    for (let h = 0; h < r.H; h++) for (let t = 0; t < r.T; t++) q.set(right[h].data.subarray(t * D, t * D + D), t * r.C + h * D);
    // The trap: view(H, T, D) without transposing reads consecutive memory as one head.
    const wrong: Tensor[] = [];
    const wrongTokens: number[][] = [];
    for (let h = 0; h < r.H; h++) {
      wrong.push({ shape: [r.T, D], data: q.slice(h * r.T * D, (h + 1) * r.T * D) });
      wrongTokens.push(Array.from({ length: r.T }, (_, t) => Math.floor((h * r.T * D + t * D) / r.C)));
    }
    return { figure: 'reshape', q: { shape: [r.T, r.C], data: q }, right, wrong, wrongTokens };
  });
}
