import { t } from '../../i18n';
import { renderBackward } from '../components/backward_view';
import { idx, shape } from '../components/common';
import type { Step } from '../step';
import { gradientsOf, lossWords, valueLines } from './back_helpers';
import { tokens } from './helpers';

export const backLossStep: Step = {
  id: 'back-loss',
  title: () => t('walk.step.backLoss.title'),
  perHead: false,
  beats: () => 1,
  columns: (c) => 3 * c.derived.C + 4,
  caption: () => '',
  explain: (c) => {
    const g = gradientsOf(null, c);
    return g ? t('walk.step.backLoss.explain', lossWords(c, g)) : t('walk.step.back.none');
  },
  render(host, c) {
    const g = gradientsOf(host, c);
    if (!g) return;
    const C = c.derived.C;
    const r = g.lossRow;
    const yRow = { shape: [1, C], data: g.output.data.subarray(r * C, (r + 1) * C) };
    renderBackward(host, c.later, {
      cell: c.cell,
      rows: [
        {
          name: 'back-loss',
          items: [
            { matrix: { name: 'back-y', title: t('walk.fig.grad.yRow', { r }), caption: shape(1, C), data: yRow, rowLabels: [tokens(c)[r]], colLabels: idx(C, 'c') } },
            { op: '−', matrix: { name: 'back-target', title: t('walk.fig.grad.target', { token: c.input.tokens[g.targetToken] }), caption: shape(1, C), data: g.target.shape.length === 1 ? { shape: [1, C], data: g.target.data } : g.target, rowLabels: ['x₀'], colLabels: idx(C, 'c') } },
            {
              op: '→',
              matrix: {
                name: 'grad-output',
                title: t('walk.fig.grad.output'),
                caption: shape('T', 'C') + ' = ' + shape(c.derived.T, C),
                data: g.gradOutput,
                rowLabels: tokens(c),
                colLabels: idx(C, 'c'),
                highlightRows: [r],
                detail: (i, j) => (i === r ? valueLines([['y', g.output.data[i * C + j]], ['target', g.target.data[j]]]) : t('walk.fig.grad.notInLoss')),
              },
            },
          ],
        },
      ],
    });
  },
};
