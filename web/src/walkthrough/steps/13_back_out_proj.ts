import { t } from '../../i18n';
import { renderBackward } from '../components/backward_view';
import { idx, shape } from '../components/common';
import type { Step } from '../step';
import { gradientsOf, headColumns } from './back_helpers';
import { headLabel, tokens } from './helpers';

export const backOutProjStep: Step = {
  id: 'back-out-proj',
  title: () => t('walk.step.backOutProj.title'),
  perHead: true,
  beats: () => 1,
  columns: (c) => 2 * c.derived.C + c.derived.D + 4,
  caption: () => '',
  explain: (c) => (gradientsOf(null, c) ? t('walk.step.backOutProj.explain', { D: c.derived.D }) : t('walk.step.back.none')),
  render(host, c) {
    const g = gradientsOf(host, c);
    if (!g) return;
    const { T, C, D } = c.derived;
    const h = c.head;
    const concatSlice = headColumns(g.gradConcat, h, D);
    renderBackward(host, c.later, {
      cell: c.cell,
      rows: [
        {
          name: 'back-wo',
          items: [
            { matrix: { name: 'grad-output', title: t('walk.fig.grad.output'), caption: shape(T, C), data: g.gradOutput, rowLabels: tokens(c), colLabels: idx(C, 'c') } },
            { op: '× W_O =', matrix: { name: 'grad-concat', title: t('walk.fig.grad.concat'), caption: shape('T', 'C') + ' = ' + shape(T, C), data: g.gradConcat, rowLabels: tokens(c), colLabels: idx(C, 'c') } },
            {
              op: '→',
              matrix: {
                name: 'grad-context',
                title: `${t('walk.fig.grad.context')} ${headLabel(c)}`,
                caption: shape('T', 'D') + ' = ' + shape(T, D),
                data: g.gradContext[h],
                rowLabels: tokens(c),
                colLabels: idx(D, 'd'),
                detail: (i, j) => t('walk.fig.grad.contextFrom', { c: h * D + j, v: concatSlice.data[i * D + j].toPrecision(4) }),
              },
            },
          ],
        },
      ],
    });
  },
};
