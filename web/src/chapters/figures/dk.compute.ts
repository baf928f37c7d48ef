// §2: x of width dk with N(0, 1) entries, q = x, k = x with columns rotated by one: the scores and
// weights with and without 1/sqrt(dk), and the softmax's entropy and gradient norm of each.
import type { AttnLab, Tensor } from '../../../attnlab';
import { identityQK, randomX, withLayer } from './layer.compute';

export interface DkRequest { figure: 'dk'; dk: number; T: number; seed: number }
export interface DkFigure {
  figure: 'dk';
  dk: number;
  /** (T, T) engine stages, scaled = scores / sqrt(dk). */
  scaledScores: Tensor;
  scaledWeights: Tensor;
  unscaledScores: Tensor;
  unscaledWeights: Tensor;
  /** Mean over rows of the softmax's entropy (nats) and of its Jacobian's Frobenius norm. */
  stats: { scaled: { entropy: number; gradNorm: number; scoreStd: number }; unscaled: { entropy: number; gradNorm: number; scoreStd: number } };
}

/** Row means of the softmax's entropy −Σ p ln p and of ‖diag(p) − ppᵀ‖_F = sqrt(Σp² − 2Σp³ + (Σp²)²). */
export function softmaxStats(weights: Tensor, scores: Tensor) {
  const [T, S] = weights.shape;
  let entropy = 0;
  let grad = 0;
  for (let i = 0; i < T; i++) {
    let h = 0, p2 = 0, p3 = 0;
    for (let j = 0; j < S; j++) {
      const p = weights.data[i * S + j];
      if (p > 0) h -= p * Math.log(p);
      p2 += p * p;
      p3 += p * p * p;
    }
    entropy += h;
    grad += Math.sqrt(Math.max(0, p2 - 2 * p3 + p2 * p2));
  }
  let mean = 0, sq = 0;
  for (const v of scores.data) mean += v;
  mean /= scores.data.length;
  for (const v of scores.data) sq += (v - mean) ** 2;
  return { entropy: entropy / T, gradNorm: grad / T, scoreStd: Math.sqrt(sq / scores.data.length) };
}

export function dk(lab: AttnLab, r: DkRequest): DkFigure {
  const x = randomX(r.T, r.dk, r.seed);
  return withLayer(identityQK(lab, r.dk, 1), (stage) => {
    const scaledScores = stage(x, { scale: true }, 'scaled');
    const scaledWeights = stage(x, { scale: true }, 'weights');
    const unscaledScores = stage(x, { scale: false }, 'scaled');
    const unscaledWeights = stage(x, { scale: false }, 'weights');
    return {
      figure: 'dk', dk: r.dk, scaledScores, scaledWeights, unscaledScores, unscaledWeights,
      stats: { scaled: softmaxStats(scaledWeights, scaledScores), unscaled: softmaxStats(unscaledWeights, unscaledScores) },
    };
  });
}
