// Stage: weights · V. Each output row is the weights of its row times the rows of V, summed.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { idx, section, shape } from './common';

export interface WeightedSumProps {
  tokens: string[];
  keyTokens: string[];
  weights: Tensor;
  v: Tensor;
  context: Tensor;
  vName: string;
  headLabel: string;
  cell: number;
  activeRow: number;
  /** (S, D): row j = weights[i][j] · v[j] for the active row i. */
  contributions: Tensor;
  masked: (i: number, j: number) => boolean;
  /** (S) ‖v_j‖ of each value row, for the weight × value-size panel (§9.2). */
  valueNorms: Float32Array;
}

export function renderWeightedSum(host: HTMLElement, p: WeightedSumProps) {
  const [T, S] = p.weights.shape;
  const D = p.v.shape[1];
  const vScale = divergingScale(maxAbs(p.v.data, p.context.data, p.contributions.data));
  const i = p.activeRow;
  const row = section(host, 'wsum');
  renderMatrix(row, { name: 'wsum-weights', title: 'A', caption: shape(T, S), data: p.weights, scale: sequentialScale(1), cell: p.cell, rowLabels: p.tokens, colLabels: p.keyTokens, highlightRows: [i], masked: p.masked });
  operator(row, '×', 'times');
  renderMatrix(row, { name: 'wsum-v', title: `${p.vName} ${p.headLabel}`, caption: shape('S', 'D') + ' = ' + shape(S, D), data: p.v, scale: vScale, cell: p.cell, rowLabels: p.keyTokens, colLabels: idx(D, 'd') });
  operator(row, '=', 'eq');
  renderMatrix(row, { name: 'context', title: `${tr('walk.fig.context')} ${p.headLabel}`, caption: shape('T', 'D') + ' = ' + shape(T, D), data: p.context, scale: vScale, cell: p.cell, rowLabels: p.tokens, colLabels: idx(D, 'd'), highlightRows: [i] });
  const detail = section(host, 'wsum-detail');
  renderMatrix(detail, {
    name: 'contributions',
    title: tr('walk.fig.recipe', { i, token: p.tokens[i] }),
    caption: tr('walk.fig.contributions'),
    data: p.contributions,
    scale: vScale,
    cell: p.cell,
    rowLabels: p.keyTokens.map((t, j) => `${(p.weights.data[i * S + j] * 100).toFixed(0)}% × ${t}`),
    colLabels: idx(D, 'd'),
  });
  operator(detail, tr('walk.fig.sumRows'), 'sum');
  renderMatrix(detail, {
    name: 'context-row',
    title: tr('walk.fig.contextRow', { i }),
    caption: shape(1, D),
    data: { shape: [1, D], data: p.context.data.subarray(i * D, (i + 1) * D) },
    scale: vScale,
    cell: p.cell,
    rowLabels: [p.tokens[i]],
    colLabels: idx(D, 'd'),
  });
  // Weight × value size: w_ij, ‖v_j‖ and their product for the active row, one column per key.
  const wn = section(host, 'wsum-norms');
  const wRow = p.weights.data.subarray(i * S, (i + 1) * S);
  const prod = Float32Array.from(wRow, (w, j) => w * p.valueNorms[j]);
  const nScale = sequentialScale(Math.max(1e-6, ...p.valueNorms));
  const wnTitle = section(host, 'wsum-norms-title', 'wnorm-note');
  wnTitle.textContent = tr('walk.fig.wnorm.title', { i });
  host.insertBefore(wnTitle, wn);
  renderMatrix(wn, { name: 'wnorm-w', title: tr('walk.fig.wnorm.w'), caption: shape(1, S), data: { shape: [1, S], data: wRow }, scale: sequentialScale(1), cell: p.cell, rowLabels: [p.tokens[i]], colLabels: p.keyTokens, digits: 2 });
  renderMatrix(wn, { name: 'wnorm-norm', title: tr('walk.fig.wnorm.norm'), caption: shape(1, S), data: { shape: [1, S], data: p.valueNorms }, scale: nScale, cell: p.cell, colLabels: p.keyTokens, digits: 2 });
  renderMatrix(wn, { name: 'wnorm-prod', title: tr('walk.fig.wnorm.prod'), caption: shape(1, S), data: { shape: [1, S], data: prod }, scale: nScale, cell: p.cell, colLabels: p.keyTokens, digits: 2 });
  renderLegend(section(host, 'legend', 'legends'), vScale, tr('walk.fig.legend.value'), 'wsum');
}
