// The same layer as other attention variants (render layer): linear attention's φ(q), φ(k) and the
// weights they imply beside softmax's, and block-sparse attention's layout drawn over the score
// matrix (cells outside the live blocks hatched as masked) with its weights. Each matrix is the
// engine's trace with that variant.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { idx, section, shape } from './common';

export interface VariantsProps {
  tokens: string[];
  keyTokens: string[];
  softmax: Tensor;
  linear: { phiQ: Tensor; phiK: Tensor; weights: Tensor } | null;
  blockSparse: { blockSize: number; masked: Tensor; weights: Tensor } | null;
  cell: number;
}

export function renderVariants(host: HTMLElement, p: VariantsProps) {
  const [T, S] = p.softmax.shape;
  if (p.linear) {
    section(host, 'linear-title', 'note').textContent = tr('walk.fig.linear.title');
    const row = section(host, 'linear');
    const D = p.linear.phiQ.shape[1];
    const phiScale = sequentialScale(maxAbs(p.linear.phiQ.data, p.linear.phiK.data) || 1);
    renderMatrix(row, { name: 'linear-phi-q', title: 'φ(q)', caption: shape(T, D), data: p.linear.phiQ, scale: phiScale, cell: p.cell, rowLabels: p.tokens, colLabels: idx(D, 'd') });
    renderMatrix(row, { name: 'linear-phi-k', title: 'φ(k)', caption: shape(S, D), data: p.linear.phiK, scale: phiScale, cell: p.cell, rowLabels: p.keyTokens, colLabels: idx(D, 'd') });
    operator(row, '→', 'linear-arrow');
    const wScale = sequentialScale(Math.max(1e-6, ...p.linear.weights.data, ...p.softmax.data));
    renderMatrix(row, { name: 'linear-weights', title: tr('walk.fig.linear.weights'), caption: shape(T, S), data: p.linear.weights, scale: wScale, cell: p.cell, colLabels: p.keyTokens });
    renderMatrix(row, { name: 'linear-softmax', title: tr('walk.fig.norm.softmax'), caption: shape(T, S), data: p.softmax, scale: wScale, cell: p.cell, colLabels: p.keyTokens });
  }
  if (p.blockSparse) {
    const b = p.blockSparse;
    section(host, 'sparse-title', 'note').textContent = tr('walk.fig.sparse.title', { b: b.blockSize });
    const row = section(host, 'sparse');
    const hidden = (i: number, j: number) => b.masked.data[i * S + j] === -Infinity;
    renderMatrix(row, { name: 'sparse-masked', title: tr('walk.fig.sparse.scores'), caption: shape(T, S), data: b.masked, scale: divergingScale(maxAbs(Array.from(b.masked.data).filter(Number.isFinite)) || 1), cell: p.cell, rowLabels: p.tokens, colLabels: p.keyTokens, masked: hidden });
    operator(row, 'softmax →', 'sparse-arrow');
    renderMatrix(row, { name: 'sparse-weights', title: tr('walk.fig.sparse.weights'), caption: shape(T, S), data: b.weights, scale: sequentialScale(1), cell: p.cell, colLabels: p.keyTokens, masked: hidden });
  }
}
