import { t } from '../../i18n';
import { renderWeightedSum } from '../components/weighted_sum_view';
import type { Step } from '../step';
import { headLabel, kvHead, stage, tokens, keyTokens, sourceTag } from './helpers';

export const weightedSumStep: Step = {
  id: 'weighted-sum',
  title: () => t('walk.step.weightedSum.title'),
  perHead: true,
  beats: (c) => c.derived.T + 1,
  columns: (c) => c.derived.S + 2 * c.derived.D + 6,
  caption: (c) => t('walk.step.weightedSum.caption', { i: c.beat > 0 ? c.beat - 1 : 0 }),
  explain: (c) => t('walk.step.weightedSum.explain', { token: c.input.tokens[c.input.tokens.length - 1] }),
  render(host, c) {
    const i = c.beat > 0 ? c.beat - 1 : 0;
    const w = stage(c, 'weights', c.head);
    const v = stage(c, 'v', kvHead(c));
    const masked = stage(c, 'masked', c.head);
    const [S, D] = v.shape;
    const contrib = new Float32Array(S * D);
    for (let j = 0; j < S; j++) for (let d = 0; d < D; d++) contrib[j * D + d] = w.data[i * S + j] * v.data[j * D + d];
    renderWeightedSum(host, {
      tokens: tokens(c),
      keyTokens: keyTokens(c),
      weights: w,
      v,
      context: stage(c, 'context', c.head),
      vName: 'v' + sourceTag(c, 'context'),
      headLabel: headLabel(c, true),
      cell: c.cell,
      activeRow: i,
      contributions: { shape: [S, D], data: contrib },
      masked: (a, b) => masked.data[a * S + b] === -Infinity,
      valueNorms: Float32Array.from({ length: S }, (_, j) => Math.hypot(...v.data.subarray(j * D, (j + 1) * D))),
    });
  },
};
