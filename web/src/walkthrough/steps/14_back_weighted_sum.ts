import { t } from '../../i18n';
import { renderBackward } from '../components/backward_view';
import { idx, shape } from '../components/common';
import type { Step } from '../step';
import { gradientsOf } from './back_helpers';
import { headLabel, keyTokens, kvHead, stage, tokens } from './helpers';

export const backWeightedSumStep: Step = {
  id: 'back-weighted-sum',
  title: () => t('walk.step.backWeightedSum.title'),
  perHead: true,
  beats: () => 1,
  columns: (c) => 2 * c.derived.S + 2 * c.derived.D + 6,
  caption: () => '',
  explain: (c) => (gradientsOf(null, c) ? t('walk.step.backWeightedSum.explain') : t('walk.step.back.none')),
  render(host, c) {
    const g = gradientsOf(host, c);
    if (!g) return;
    const { T, S, D } = c.derived;
    const h = c.head;
    const masked = stage(c, 'masked', h);
    const isMasked = (i: number, j: number) => masked.data[i * S + j] === -Infinity;
    renderBackward(host, c.later, {
      cell: c.cell,
      rows: [
        {
          name: 'back-dw',
          items: [
            { matrix: { name: 'grad-context', title: `${t('walk.fig.grad.context')} ${headLabel(c)}`, caption: shape(T, D), data: g.gradContext[h], rowLabels: tokens(c), colLabels: idx(D, 'd') } },
            { op: '× Vᵀ', matrix: { name: 'back-v', title: `v ${headLabel(c, true)}`, caption: shape(S, D), data: stage(c, 'v', kvHead(c)), rowLabels: keyTokens(c), colLabels: idx(D, 'd') } },
            { op: '=', matrix: { name: 'grad-weights', title: `${t('walk.fig.grad.weights')} ${headLabel(c)}`, caption: shape('T', 'S') + ' = ' + shape(T, S), data: g.gradWeights[h], rowLabels: tokens(c), colLabels: keyTokens(c), masked: isMasked } },
          ],
        },
        {
          name: 'back-dv',
          items: [
            { matrix: { name: 'back-weights-t', title: 'Aᵀ', caption: shape(S, T), data: transposeOf(g.weights[h]), kind: 'weight', rowLabels: keyTokens(c), colLabels: tokens(c) } },
            { op: '× dContext =', matrix: { name: 'grad-v', title: `${t('walk.fig.grad.v')} ${headLabel(c, true)}`, caption: shape('S', 'D') + ' = ' + shape(S, D) + (c.derived.H !== c.derived.Hkv ? ` · ${t('walk.fig.grad.groupSum', { n: c.derived.H / c.derived.Hkv })}` : ''), data: g.gradV[kvHead(c)], rowLabels: keyTokens(c), colLabels: idx(D, 'd') } },
          ],
        },
      ],
    });
  },
};

/** Aᵀ of the engine's weights, for display. */
function transposeOf(a: { shape: number[]; data: Float32Array }) {
  const [R, K] = a.shape;
  const out = new Float32Array(R * K);
  for (let i = 0; i < R; i++) for (let j = 0; j < K; j++) out[j * R + i] = a.data[i * K + j];
  return { shape: [K, R], data: out };
}

