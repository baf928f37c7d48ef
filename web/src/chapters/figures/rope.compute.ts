// §4: RoPE scores q_m·k_n of one vector repeated at every position (W_Q = W_K = I): they depend on
// m − n only, so each diagonal is constant up to rounding.
import type { AttnLab, Tensor } from '../../../attnlab';
import { mulberry32, normals } from '../../util/rng';
import { identityQK, withLayer } from './layer.compute';

export interface RopeRequest { figure: 'rope'; T: number; C: number; seed: number }
export interface RopeFigure {
  figure: 'rope';
  scores: Tensor;
  /** Largest spread (max − min) of the scores along one diagonal m − n = const. */
  diagonalSpread: number;
}

export function rope(lab: AttnLab, r: RopeRequest): RopeFigure {
  return withLayer(identityQK(lab, r.C), (stage) => {
    const v = normals(mulberry32(r.seed), r.C);
    const x = new Float32Array(r.T * r.C);
    for (let t = 0; t < r.T; t++) x.set(v, t * r.C);
    const scores = stage({ shape: [r.T, r.C], data: x }, { positional: 'rope', scale: 1 }, 'scaled');
    let spread = 0;
    for (let d = -(r.T - 1); d < r.T; d++) {
      let lo = Infinity, hi = -Infinity;
      for (let m = Math.max(0, -d); m < Math.min(r.T, r.T - d); m++) {
        const s = scores.data[m * r.T + m + d];
        lo = Math.min(lo, s);
        hi = Math.max(hi, s);
      }
      spread = Math.max(spread, hi - lo);
    }
    return { figure: 'rope', scores, diagonalSpread: spread };
  });
}
