// §5: a block-sparse layout (lab.sparseLayout) and a sliding window's mask (the trace's 'masked'
// stage), with the number of scores each keeps.
import type { AttnLab, Tensor } from '../../../attnlab';
import { randomX, withLayer } from './layer.compute';

export interface SparseRequest { figure: 'sparse'; T: number; blockSize: number; windowBlocks: number; globalBlocks: number; randomBlocks: number; window: number; globalTokens: number }
export interface SparseFigure { figure: 'sparse'; blocks: { shape: number[]; data: Uint8Array }; windowMask: Tensor; full: number; blockLive: number; windowLive: number }

export function sparse(lab: AttnLab, r: SparseRequest): SparseFigure {
  const blocks = lab.sparseLayout(r.T, r.T, { blockSize: r.blockSize, windowBlocks: r.windowBlocks, globalBlocks: r.globalBlocks, randomBlocks: r.randomBlocks });
  const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: 0 });
  return withLayer(mha, (stage) => {
    const windowMask = stage(randomX(r.T, 8, 1), { window: r.window, globalTokens: r.globalTokens }, 'masked');
    // Positions a live block covers (the last block row and column may be cut by T).
    const nb = blocks.shape[1];
    const span = (b: number) => Math.min(r.T, (b + 1) * r.blockSize) - b * r.blockSize;
    let blockLive = 0;
    for (let bi = 0; bi < blocks.shape[0]; bi++) for (let bj = 0; bj < nb; bj++) if (blocks.data[bi * nb + bj]) blockLive += span(bi) * span(bj);
    let windowLive = 0;
    for (const v of windowMask.data) windowLive += Number.isFinite(v) ? 1 : 0;
    return {
      figure: 'sparse', blocks: { shape: [...blocks.shape], data: new Uint8Array(blocks.data) }, windowMask,
      full: r.T * r.T, blockLive, windowLive,
    };
  });
}
