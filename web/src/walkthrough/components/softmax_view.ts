// Stage: softmax. Each row of masked becomes probabilities: non-negative, summing to 1.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { cellText } from '../../util/format';
import { section, shape } from './common';

export interface SoftmaxProps {
  tokens: string[];
  keyTokens: string[];
  masked: Tensor;
  weights: Tensor;
  rowSums: number[];
  cell: number;
  activeRow: number | null;
}

export function renderSoftmax(host: HTMLElement, p: SoftmaxProps) {
  const [T, S] = p.weights.shape;
  const sScale = divergingScale(maxAbs(p.masked.data));
  const wScale = sequentialScale(1);
  const isMasked = (i: number, j: number) => p.masked.data[i * S + j] === -Infinity;
  const hi = p.activeRow == null ? [] : [p.activeRow];
  const row = section(host, 'softmax');
  renderMatrix(row, { name: 'softmax-masked', title: tr('ui.masked'), caption: shape(T, S), data: p.masked, scale: sScale, cell: p.cell, rowLabels: p.tokens, colLabels: p.keyTokens, masked: isMasked, highlightRows: hi });
  operator(row, 'softmax →', 'arrow');
  renderMatrix(row, {
    name: 'weights',
    title: tr('walk.fig.weightsA'),
    caption: shape(T, S),
    data: p.weights,
    scale: wScale,
    cell: p.cell,
    rowLabels: p.tokens,
    colLabels: p.keyTokens,
    masked: isMasked,
    highlightRows: hi,
    pending: p.activeRow == null ? undefined : (i) => i > (p.activeRow as number),
    rightLabels: p.rowSums.map((s, i) => (p.activeRow == null || i <= p.activeRow ? `Σ ${cellText(s, 3)}` : '')),
    rightTitle: tr('walk.fig.rowSum'),
  });
  const legends = section(host, 'legend', 'legends');
  renderLegend(legends, sScale, tr('walk.fig.legend.score'), 'softmax-in');
  renderLegend(legends, wScale, tr('walk.fig.legend.weight'), 'softmax-out');
}
