// Stage: scaling. scores × 1/√d_k = scaled, the score histogram and softmax entropy before/after.
import type { Tensor } from '../../engine/protocol';
import { renderHistogram, type HistSeries } from '../../ui/histogram';
import { renderLegend } from '../../ui/legend';
import { operator, renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { section, shape } from './common';

export interface ScalingProps {
  tokens: string[];
  keyTokens: string[];
  scores: Tensor;
  scaled: Tensor;
  factorLabel: string;
  cell: number;
  hist: { series: HistSeries[]; domain: [number, number] };
  /** (T, 2): entropy of each query row's softmax, without and with scaling. */
  entropy: Tensor;
  maxEntropy: number;
}

export function renderScaling(host: HTMLElement, p: ScalingProps) {
  const [T, S] = p.scores.shape;
  const scale = divergingScale(maxAbs(p.scores.data, p.scaled.data));
  const row = section(host, 'scaling');
  renderMatrix(row, { name: 'scaling-scores', title: 'scores S', caption: shape(T, S), data: p.scores, scale, cell: p.cell, rowLabels: p.tokens, colLabels: p.keyTokens });
  operator(row, `× ${p.factorLabel} =`, 'times');
  renderMatrix(row, { name: 'scaled', title: 'scaled', caption: shape(T, S), data: p.scaled, scale, cell: p.cell, rowLabels: p.tokens, colLabels: p.keyTokens });
  const stats = section(host, 'scaling-stats');
  renderHistogram(stats, 'scores', 'all heads’ scores: how spread out', p.hist.series, p.hist.domain);
  renderMatrix(stats, {
    name: 'entropy',
    title: 'softmax entropy per row (nats)',
    caption: `max ln S = ${p.maxEntropy.toFixed(2)}: uniform`,
    data: p.entropy,
    scale: sequentialScale(p.maxEntropy),
    cell: Math.max(p.cell, 40),
    rowLabels: p.tokens,
    colLabels: ['unscaled', 'scaled'],
  });
  renderLegend(section(host, 'legend', 'legends'), scale, 'score', 'scaling');
}
