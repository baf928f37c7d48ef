// §4: a sentence and its permutation through one layer, with a positional encoding or none.
import type { AttnLab, ForwardOptions, Tensor } from '../../../attnlab';
import { maxAbsDiff, own, randomX } from './layer.compute';

export interface PermutationRequest { figure: 'permutation'; T: number; C: number; seed: number; perm: number[]; positional: NonNullable<ForwardOptions['positional']> }
export interface PermutationFigure {
  figure: 'permutation';
  x: Tensor;
  /** f(x), f(πx), and π applied to f(x). */
  y: Tensor;
  yOfPermuted: Tensor;
  permutedY: Tensor;
  /** max |f(πx) − π f(x)|. */
  maxDiff: number;
}

function permuteRows(x: Tensor, perm: number[]): Tensor {
  const [T, C] = x.shape;
  const data = new Float32Array(T * C);
  for (let i = 0; i < T; i++) data.set(x.data.subarray(perm[i] * C, perm[i] * C + C), i * C);
  return { shape: [T, C], data };
}

export function permutation(lab: AttnLab, r: PermutationRequest): PermutationFigure {
  const mha = new lab.MultiHeadAttention({ dModel: r.C, numHeads: 2, seed: r.seed });
  try {
    const x = randomX(r.T, r.C, r.seed + 1);
    const o = { positional: r.positional };
    const y = own(mha.forward(x, o));
    const yOfPermuted = own(mha.forward(permuteRows(x, r.perm), o));
    const permutedY = permuteRows(y, r.perm);
    return { figure: 'permutation', x, y, yOfPermuted, permutedY, maxDiff: maxAbsDiff(yOfPermuted.data, permutedY.data) };
  } finally {
    mha.delete();
  }
}
