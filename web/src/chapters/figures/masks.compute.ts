// §6: the masked scores with a causal mask, a padding mask (the last `pad` keys) and both, and the
// weights with both.
import type { AttnLab, Tensor } from '../../../attnlab';
import { randomX, withLayer } from './layer.compute';

export interface MasksRequest { figure: 'masks'; T: number; pad: number; seed: number }
export interface MasksFigure { figure: 'masks'; causal: Tensor; padding: Tensor; both: Tensor; weightsBoth: Tensor }

export function masks(lab: AttnLab, r: MasksRequest): MasksFigure {
  const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: r.seed });
  return withLayer(mha, (stage) => {
    const x = randomX(r.T, 8, r.seed + 1);
    const pad = { shape: [r.T], data: Uint8Array.from({ length: r.T }, (_, j) => (j >= r.T - r.pad ? 1 : 0)) };
    return {
      figure: 'masks',
      causal: stage(x, { causal: true }, 'masked'),
      padding: stage(x, { keyPaddingMask: pad }, 'masked'),
      both: stage(x, { causal: true, keyPaddingMask: pad }, 'masked'),
      weightsBoth: stage(x, { causal: true, keyPaddingMask: pad }, 'weights'),
    };
  });
}
