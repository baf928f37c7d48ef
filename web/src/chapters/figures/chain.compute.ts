// §1 and §9: the attention weights of one random layer over T tokens (the all-to-all graph's edges).
import type { AttnLab, Tensor } from '../../../attnlab';
import { randomX, withLayer } from './layer.compute';

export interface ChainRequest { figure: 'chain'; T: number; seed: number }
export interface ChainFigure { figure: 'chain'; weights: Tensor }

export function chain(lab: AttnLab, r: ChainRequest): ChainFigure {
  const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: r.seed });
  return withLayer(mha, (stage) => ({ figure: 'chain', weights: stage(randomX(r.T, 8, r.seed), {}, 'weights') }));
}
