// §8: the layer with the article's reshape trap, built from the engine's own pieces. The engine
// cannot be told to split its heads wrongly, so this layer runs the engine's projections, the
// engine's attention of one head, and the engine's output projection, each with its backward, and
// between them splits the projections as a plain reshape (T, C) -> (H, T, D), without the
// transpose, and merges the heads back the same way. Only the copies between the pieces are
// JavaScript; every sum and product is the engine's.
import type { AttnLab, MultiHeadAttention, StageName, Tensor } from '../../../attnlab';
import { own } from './layer.compute';

/** What the checks read of a layer: one call's stages, its output and its backward. */
export interface LayerRun {
  /** (T, D) head 0's queries. */
  q0: Tensor;
  /** H tensors (T, T). */
  weights: Tensor[];
  /** (T, C) */
  concat: Tensor;
  /** (T, C) */
  output: Tensor;
  /** (T, C) ∂L/∂x of L = sum(output ⊙ g). */
  dx: Tensor;
  /** Under the layer's parameter names. */
  grads: Record<string, Tensor>;
}

/** (n, m) identity blocks: [I 0] (offset 0) or [0 I] (offset n) as an (n, m) matrix. */
function eye(n: number, m = n, offset = 0): Tensor {
  const data = new Float32Array(n * m);
  for (let i = 0; i < n; i++) data[i * m + offset + i] = 1;
  return { shape: [n, m], data };
}

const rows = (data: Float32Array, T: number, W: number, batched = false): Tensor => ({ shape: batched ? [T, 1, W] : [T, W], data });

/** The wrong split: consecutive T·D numbers of the (T, C) buffer become one head (T, D). */
const wrongSplit = (m: Float32Array, H: number): Float32Array[] => {
  const n = m.length / H;
  return Array.from({ length: H }, (_, h) => m.slice(h * n, (h + 1) * n));
};
/** Its inverse (the matching wrong merge): head h's (T, D) numbers at offset h·T·D of (T, C). */
const wrongMerge = (heads: Float32Array[]): Float32Array => {
  const out = new Float32Array(heads.length * heads[0].length);
  heads.forEach((h, i) => out.set(h, i * h.length));
  return out;
};

/**
 * A linear map through the engine: a one-head layer on batches of one token, whose softmax over
 * one key is exactly 1, so output = (x·W_Vᵀ + b_V)·W_Oᵀ + b_O. `set` fixes W_V, b_V, W_O, b_O.
 */
function linearLayer(lab: AttnLab, C: number, set: Record<string, Tensor>): MultiHeadAttention {
  const l = new lab.MultiHeadAttention({ dModel: C, numHeads: 1, seed: 0 });
  for (const [n, t] of Object.entries(set)) l.setParameter(n, t);
  return l;
}

/** The reshape-trap layer on x (T, C) with mha's parameters, and its backward of sum(output ⊙ g). */
export function brokenReshapeLayer(lab: AttnLab, mha: MultiHeadAttention, x: Tensor, g: Tensor, H: number, causal: boolean): LayerRun {
  const [T, C] = x.shape;
  const D = C / H;
  const zeros = { shape: [C], data: new Float32Array(C) };
  const made: { delete(): void }[] = [];
  const keep = <L extends { delete(): void }>(l: L) => (made.push(l), l);
  try {
    // The engine's projections x·Wᵀ + b (T, C), read from its trace head by head and put back in rows.
    const tr = keep(mha.trace(x, { causal, stages: ['q', 'k', 'v'] as StageName[] }));
    const proj = (name: StageName) => {
      const m = new Float32Array(T * C);
      for (let h = 0; h < H; h++) {
        const s = tr.stage(name, h).data;
        for (let t = 0; t < T; t++) m.set(s.subarray(t * D, t * D + D), t * C + h * D);
      }
      return wrongSplit(m, H);
    };
    const [q, k, v] = [proj('q'), proj('k'), proj('v')];
    // One head's attention: q = input, [k | v] = memory picked apart by W_K = [I 0], W_V = [0 I].
    const head = keep(new lab.MultiHeadAttention({ dModel: D, numHeads: 1, kvDim: 2 * D, bias: false, seed: 0 }));
    head.setParameter('q_proj.weight', eye(D));
    head.setParameter('k_proj.weight', eye(D, 2 * D, 0));
    head.setParameter('v_proj.weight', eye(D, 2 * D, D));
    head.setParameter('out_proj.weight', eye(D));
    const memory = (h: number) => {
      const m = new Float32Array(T * 2 * D);
      for (let t = 0; t < T; t++) m.set(k[h].subarray(t * D, t * D + D), t * 2 * D), m.set(v[h].subarray(t * D, t * D + D), t * 2 * D + D);
      return rows(m, T, 2 * D);
    };
    const weights: Tensor[] = [];
    const contexts: Float32Array[] = [];
    for (let h = 0; h < H; h++) {
      const ht = keep(head.trace(rows(q[h], T, D), { causal, memory: memory(h), stages: ['weights', 'output'] as StageName[] }));
      weights.push(own(ht.stage('weights', 0)));
      contexts.push(own(ht.stage('output')).data);
    }
    const concat = wrongMerge(contexts);
    const P = (n: string) => own(mha.getParameter(n));
    const out = keep(linearLayer(lab, C, { 'v_proj.weight': eye(C), 'v_proj.bias': zeros, 'out_proj.weight': P('out_proj.weight'), 'out_proj.bias': P('out_proj.bias') }));
    const output = own(out.forward(rows(concat, T, C, true), {})).data;

    // Backward, piece by piece in reverse, each piece's gradients from the engine's backward.
    const grads: Record<string, Tensor> = {};
    const ob = out.backward(rows(concat, T, C, true), rows(g.data, T, C, true), {});
    grads['out_proj.weight'] = own(ob.grads['out_proj.weight']);
    grads['out_proj.bias'] = own(ob.grads['out_proj.bias']);
    const dcontexts = wrongSplit(own(ob.gradX).data, H);
    const dq: Float32Array[] = [], dk: Float32Array[] = [], dv: Float32Array[] = [];
    for (let h = 0; h < H; h++) {
      const hb = head.backward(rows(q[h], T, D), rows(dcontexts[h], T, D), { causal, memory: memory(h) });
      dq.push(own(hb.gradX).data);
      const dm = own(hb.gradMemory!).data;
      const dkh = new Float32Array(T * D), dvh = new Float32Array(T * D);
      for (let t = 0; t < T; t++) dkh.set(dm.subarray(t * 2 * D, t * 2 * D + D), t * D), dvh.set(dm.subarray(t * 2 * D + D, (t + 1) * 2 * D), t * D);
      dk.push(dkh), dv.push(dvh);
    }
    const dx = new Float32Array(T * C);
    for (const [name, d] of [['q_proj', dq], ['k_proj', dk], ['v_proj', dv]] as const) {
      // Through the projection: ∂W = dyᵀ·x, ∂b = Σ dy, ∂x += dy·W, by the engine's backward of a linear map.
      const lin = keep(linearLayer(lab, C, { 'v_proj.weight': P(`${name}.weight`), 'v_proj.bias': P(`${name}.bias`), 'out_proj.weight': eye(C), 'out_proj.bias': zeros }));
      const lb = lin.backward(rows(x.data, T, C, true), rows(wrongMerge(d), T, C, true), {});
      grads[`${name}.weight`] = own(lb.grads['v_proj.weight']);
      grads[`${name}.bias`] = own(lb.grads['v_proj.bias']);
      const part = own(lb.gradX).data;
      for (let i = 0; i < dx.length; i++) dx[i] += part[i];
    }
    return { q0: rows(q[0], T, D), weights, concat: rows(concat, T, C), output: rows(output, T, C), dx: rows(dx, T, C), grads };
  } finally {
    for (const m of made.reverse()) m.delete();
  }
}
