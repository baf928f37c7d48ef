import { t } from '../../i18n';
import { renderBackward } from '../components/backward_view';
import { shape } from '../components/common';
import type { Step } from '../step';
import { gradientsOf, valueLines } from './back_helpers';
import { headLabel, keyTokens, stage, tokens } from './helpers';

export const backSoftmaxStep: Step = {
  id: 'back-softmax',
  title: () => t('walk.step.backSoftmax.title'),
  perHead: true,
  beats: (c) => c.derived.T + 1,
  columns: (c) => 3 * c.derived.S + 8,
  caption: (c) => (c.beat > 0 ? t('walk.step.backSoftmax.caption', { i: c.beat - 1 }) : ''),
  explain: (c) => (gradientsOf(null, c) ? t('walk.step.backSoftmax.explain', { scale: c.trace.backward!.scaleFactor.toPrecision(4) }) : t('walk.step.back.none')),
  render(host, c) {
    const g = gradientsOf(host, c);
    if (!g) return;
    const { T, S } = c.derived;
    const h = c.head;
    const masked = stage(c, 'masked', h);
    const isMasked = (i: number, j: number) => masked.data[i * S + j] === -Infinity;
    const w = g.weights[h];
    const dw = g.gradWeights[h];
    const ds = g.gradScaled[h];
    const delta = g.rowDot.data.subarray(h * T, (h + 1) * T);
    const hi = c.beat > 0 ? [c.beat - 1] : [];
    const labels = tokens(c);
    const keys = keyTokens(c);
    renderBackward(host, c.later, {
      cell: c.cell,
      rows: [
        {
          name: 'back-jacobian',
          items: [
            { matrix: { name: 'back-weights', title: `A ${headLabel(c)}`, caption: shape(T, S), data: w, kind: 'weight', rowLabels: labels, colLabels: keys, masked: isMasked, highlightRows: hi } },
            { op: '⊙ (', matrix: { name: 'grad-weights', title: t('walk.fig.grad.weights'), caption: shape(T, S), data: dw, rowLabels: labels, colLabels: keys, masked: isMasked, highlightRows: hi, rightLabels: Array.from(delta, (d) => `δ ${d.toPrecision(3)}`), rightTitle: t('walk.fig.grad.delta') } },
            {
              op: '− δ) =',
              matrix: {
                name: 'grad-scaled',
                title: t('walk.fig.grad.scaled'),
                caption: shape(T, S),
                data: ds,
                rowLabels: labels,
                colLabels: keys,
                masked: isMasked,
                highlightRows: hi,
                detail: (i, j) => valueLines([['w', w.data[i * S + j]], ['dw', dw.data[i * S + j]], ['δ', delta[i]]]) + `<br>${t('walk.fig.grad.jacobian')}`,
              },
            },
          ],
        },
        {
          name: 'back-scale',
          items: [
            {
              op: `× ${g.scaleFactor.toPrecision(4)} =`,
              matrix: { name: 'grad-scores', title: `${t('walk.fig.grad.scores')} ${headLabel(c)}`, caption: shape('T', 'S') + ' = ' + shape(T, S), data: g.gradScores[h], rowLabels: labels, colLabels: keys, masked: isMasked, highlightRows: hi },
            },
          ],
        },
      ],
    });
  },
};
