// §4: the sinusoidal table P (T, C) the engine adds, and P·Pᵀ (the scores of x = P with
// W_Q = W_K = I and scale 1).
import type { AttnLab, Tensor } from '../../../attnlab';
import { identityQK, withLayer } from './layer.compute';

export interface PeRequest { figure: 'pe'; T: number; C: number }
export interface PeFigure { figure: 'pe'; table: Tensor; similarity: Tensor }

export function pe(lab: AttnLab, r: PeRequest): PeFigure {
  return withLayer(identityQK(lab, r.C), (stage) => {
    // The table the engine adds: the recorded x of an all-zero input.
    const table = stage({ shape: [r.T, r.C], data: new Float32Array(r.T * r.C) }, { positional: 'sinusoidal' }, 'x');
    const similarity = stage(table, { scale: 1 }, 'scaled');
    return { figure: 'pe', table, similarity };
  });
}
