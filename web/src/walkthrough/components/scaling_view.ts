// Stage: scaling. scores × 1/√d_k = scaled, the score histogram and softmax entropy before/after.
import { t as tr } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
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
  /** The entropy table's column labels (unscaled, then scaled). */
  entropyLabels: [string, string];
  maxEntropy: number;
  /**
   * With scaling off: the engine's scaled scores of the same head with scaling on, (T, S), and the
   * factor's label, drawn beside the unscaled pair; null with scaling on.
   */
  wouldBe: { scaled: Tensor; factorLabel: string } | null;
}

export function renderScaling(host: HTMLElement, p: ScalingProps) {
  const [T, S] = p.scores.shape;
  const scale = divergingScale(maxAbs(p.scores.data, p.scaled.data));
  const row = section(host, 'scaling');
  renderMatrix(row, { name: 'scaling-scores', title: tr('walk.fig.scoresS'), caption: shape(T, S), data: p.scores, scale, cell: p.cell, rowLabels: p.tokens, colLabels: p.keyTokens });
  operator(row, `× ${p.factorLabel} =`, 'times');
  renderMatrix(row, { name: 'scaled', title: p.wouldBe ? tr('walk.fig.scaledOff') : tr('walk.fig.scaled'), caption: shape(T, S), data: p.scaled, scale, cell: p.cell, rowLabels: p.tokens, colLabels: p.keyTokens });
  if (p.wouldBe) {
    operator(row, `with × ${p.wouldBe.factorLabel} it would be`, 'would-be');
    renderMatrix(row, {
      name: 'scaled-would-be',
      title: tr('walk.fig.scaledIfOn'),
      caption: shape(T, S),
      data: p.wouldBe.scaled,
      scale,
      cell: p.cell,
      rowLabels: p.tokens,
      colLabels: p.keyTokens,
    });
  }
  const stats = section(host, 'scaling-stats');
  renderHistogram(stats, 'scores', tr('walk.fig.histTitle'), p.hist.series, p.hist.domain);
  renderMatrix(stats, {
    name: 'entropy',
    title: tr('walk.fig.entropy'),
    caption: tr('walk.fig.entropyMax', { max: p.maxEntropy.toFixed(2) }),
    data: p.entropy,
    scale: sequentialScale(p.maxEntropy),
    cell: Math.max(p.cell, 40),
    rowLabels: p.tokens,
    colLabels: p.entropyLabels,
  });
  renderLegend(section(host, 'legend', 'legends'), scale, tr('walk.fig.legend.score'), 'scaling');
}
