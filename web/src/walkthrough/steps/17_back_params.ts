import { t } from '../../i18n';
import { renderBackward } from '../components/backward_view';
import { idx, shape } from '../components/common';
import type { Step } from '../step';
import { gradientsOf } from './back_helpers';
import { keyTokens, tokens } from './helpers';

const PROJ = [
  ['q_proj', 'grad-wq', 'dW_Q'],
  ['k_proj', 'grad-wk', 'dW_K'],
  ['v_proj', 'grad-wv', 'dW_V'],
  ['out_proj', 'grad-wo', 'dW_O'],
] as const;

export const backParamsStep: Step = {
  id: 'back-params',
  title: () => t('walk.step.backParams.title'),
  perHead: false,
  beats: () => 1,
  columns: (c) => 2 * c.derived.C + 4,
  caption: () => '',
  explain: (c) => (gradientsOf(null, c) ? t('walk.step.backParams.explain') : t('walk.step.back.none')),
  render(host, c) {
    const g = gradientsOf(host, c);
    if (!g) return;
    const { T, C } = c.derived;
    const mat = (proj: string, name: string, title: string) => {
      const d = g.grads[`${proj}.weight`];
      const [R, K] = d.shape;
      return { name, title, caption: `${shape('out', 'in')} = ${shape(R, K)}`, data: d, rowLabels: idx(R, 'o'), colLabels: idx(K, 'i') };
    };
    renderBackward(host, c.later, {
      cell: c.cell,
      rows: [
        { name: 'back-wqk', items: [{ matrix: mat(...PROJ[0]) }, { op: '', matrix: mat(...PROJ[1]) }] },
        { name: 'back-wvo', items: [{ matrix: mat(...PROJ[2]) }, { op: '', matrix: mat(...PROJ[3]) }] },
        g.gradMemory
          ? {
              name: 'back-x',
              items: [
                { matrix: { name: 'grad-x', title: t('walk.fig.grad.x'), caption: `dQ·W_Q = ${shape(T, C)}`, data: g.gradX, rowLabels: tokens(c), colLabels: idx(C, 'c') } },
                { op: '', matrix: { name: 'grad-memory', title: t('walk.fig.grad.memory'), caption: `dK·W_K + dV·W_V = ${shape(g.gradMemory.shape[0], g.gradMemory.shape[1])}`, data: g.gradMemory, rowLabels: keyTokens(c), colLabels: idx(g.gradMemory.shape[1], 'c') } },
              ],
            }
          : { name: 'back-x', items: [{ matrix: { name: 'grad-x', title: t('walk.fig.grad.x'), caption: `dQ·W_Q + dK·W_K + dV·W_V = ${shape(T, C)}`, data: g.gradX, rowLabels: tokens(c), colLabels: idx(C, 'c') } }] },
      ],
    });
  },
};
