// §6: fp16 emulation of the naive softmax on scores of size ~`magnitude`, and of the softmax kept
// in fp32: how many weights each leaves non-finite.
import type { AttnLab, Tensor } from '../../../attnlab';
import { identityQK, randomX, withLayer } from './layer.compute';

export interface Fp16Request { figure: 'fp16'; T: number; magnitude: number; seed: number }
export interface Fp16Figure {
  figure: 'fp16';
  /** fp32 scaled scores, the fp16 naive-softmax weights, the fp16 weights with softmax in fp32. */
  scaled: Tensor;
  naive: Tensor;
  fp32Softmax: Tensor;
  maxScore: number;
  naiveNonFinite: number;
  fixedNonFinite: number;
}

export function fp16(lab: AttnLab, r: Fp16Request): Fp16Figure {
  const C = 16;
  const x = randomX(r.T, C, r.seed);
  for (let i = 0; i < x.data.length; i++) x.data[i] *= Math.sqrt(r.magnitude);
  return withLayer(identityQK(lab, C), (stage) => {
    const scaled = stage(x, {}, 'scaled');
    const naive = stage(x, { precision: 'fp16', softmaxPrecision: 'same', stableSoftmax: false }, 'weights');
    const fp32Softmax = stage(x, { precision: 'fp16', softmaxPrecision: 'fp32' }, 'weights');
    const nonFinite = (t: Tensor) => t.data.reduce((n, v) => n + (Number.isFinite(v) ? 0 : 1), 0);
    let maxScore = 0;
    for (const v of scaled.data) maxScore = Math.max(maxScore, Math.abs(v));
    return { figure: 'fp16', scaled, naive, fp32Softmax, maxScore, naiveNonFinite: nonFinite(naive), fixedNonFinite: nonFinite(fp32Softmax) };
  });
}
