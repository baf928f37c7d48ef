// What the figures' computations share, run in the engine worker: seeded inputs, layers with
// chosen weights, and reading one stage of a traced call. Every matrix a figure shows comes from
// the engine through these; tests/browser/chapters_figures.test.mjs recomputes the few numbers
// derived here from the engine.
import type { AttnLab, ForwardOptions, MultiHeadAttention, StageName, Tensor } from '../../../attnlab';
import { mulberry32, normals } from '../../util/rng';

/** Copies an engine tensor into arrays the worker owns (safe to transfer to the page). */
export const own = (t: Tensor): Tensor => ({ shape: [...t.shape], data: new Float32Array(t.data) });

/** (T, C) of seeded N(0, 1) entries. */
export const randomX = (T: number, C: number, seed: number): Tensor => ({ shape: [T, C], data: normals(mulberry32(seed), T * C) });

/** The (C, C) permutation matrix that moves x's column (c + shift) mod C to column c (shift 0: I). */
function cyclic(C: number, shift: number): Tensor {
  const data = new Float32Array(C * C);
  for (let i = 0; i < C; i++) data[i * C + ((i + shift) % C)] = 1;
  return { shape: [C, C], data };
}

/**
 * A one-head layer without biases whose W_Q is the identity and W_K a cyclic shift by `shiftK`:
 * q = x, k = x with its columns rotated. With shiftK = 0, scores = x·xᵀ; with shiftK = 1, every
 * score (the diagonal too) is a sum of C products of independent entries: variance C for N(0, 1) x.
 */
export function identityQK(lab: AttnLab, C: number, shiftK = 0): MultiHeadAttention {
  const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: 1, bias: false, seed: 0 });
  mha.setParameter('q_proj.weight', cyclic(C, 0));
  mha.setParameter('k_proj.weight', cyclic(C, shiftK));
  return mha;
}

/** Reads one recorded stage of a call: `name` of head `head` for input x and options o. */
export type StageOf = (x: Tensor, o: ForwardOptions, name: StageName, head?: number) => Tensor;

/** Runs `fn` on a layer and deletes the layer and every trace it made, even when fn throws. */
export function withLayer<R>(mha: MultiHeadAttention, fn: (stage: StageOf) => R): R {
  const made: { delete(): void }[] = [mha];
  try {
    return fn((x, o, name, head = 0) => {
      const tr = mha.trace(x, { ...o, stages: [name] });
      made.push(tr);
      return own(name === 'x' || name === 'concat' || name === 'output' ? tr.stage(name) : tr.stage(name, head));
    });
  } finally {
    for (const d of made) d.delete();
  }
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
