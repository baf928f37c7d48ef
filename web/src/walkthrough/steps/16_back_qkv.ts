import { t } from '../../i18n';
import { renderBackward } from '../components/backward_view';
import { idx, shape } from '../components/common';
import type { Step } from '../step';
import { gradientsOf } from './back_helpers';
import { headLabel, keyTokens, kvHead, tokens } from './helpers';

export const backQkvStep: Step = {
  id: 'back-qkv',
  title: () => t('walk.step.backQkv.title'),
  perHead: true,
  beats: () => 1,
  columns: (c) => c.derived.S + 3 * c.derived.D + 8,
  caption: () => '',
  explain: (c) => (gradientsOf(null, c) ? t('walk.step.backQkv.explain') + (c.settings.positional === 'rope' ? t('walk.step.backQkv.rope') : '') : t('walk.step.back.none')),
  render(host, c) {
    const g = gradientsOf(host, c);
    if (!g) return;
    const { T, S, D, H, Hkv } = c.derived;
    const h = c.head;
    const labels = tokens(c);
    const keys = keyTokens(c);
    const group = H !== Hkv ? ` · ${t('walk.fig.grad.groupSum', { n: H / Hkv })}` : '';
    renderBackward(host, c.later, {
      cell: c.cell,
      rows: [
        {
          name: 'back-qkv',
          items: [
            { matrix: { name: 'grad-scores', title: `${t('walk.fig.grad.scores')} ${headLabel(c)}`, caption: shape(T, S), data: g.gradScores[h], rowLabels: labels, colLabels: keys } },
            { op: '→', matrix: { name: 'grad-q', title: `${t('walk.fig.grad.q')} ${headLabel(c)}`, caption: `dS·K = ${shape(T, D)}`, data: g.gradQ[h], rowLabels: labels, colLabels: idx(D, 'd') } },
            { op: '', matrix: { name: 'grad-k', title: `${t('walk.fig.grad.k')} ${headLabel(c, true)}`, caption: `dSᵀ·Q = ${shape(S, D)}${group}`, data: g.gradK[kvHead(c)], rowLabels: keys, colLabels: idx(D, 'd') } },
            { op: '', matrix: { name: 'grad-v', title: `${t('walk.fig.grad.v')} ${headLabel(c, true)}`, caption: `Aᵀ·dC = ${shape(S, D)}${group}`, data: g.gradV[kvHead(c)], rowLabels: keys, colLabels: idx(D, 'd') } },
          ],
        },
      ],
    });
  },
};
