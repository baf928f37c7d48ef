import { t } from '../../i18n';
import { renderSoftmax } from '../components/softmax_view';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const softmaxStep: Step = {
  id: 'softmax',
  title: () => t('step.softmax.title'),
  perHead: true,
  beats: (c) => c.derived.T + 1,
  columns: (c) => 2 * c.derived.S + 6,
  caption: (c) => (c.beat > 0 ? t('step.softmax.caption', { i: c.beat - 1 }) : ''),
  explain: () => t('step.softmax.explain'),
  render(host, c) {
    renderSoftmax(host, {
      tokens: tokens(c),
      keyTokens: tokens(c),
      masked: stage(c, 'masked', c.head),
      weights: stage(c, 'weights', c.head),
      rowSums: c.derived.heads[c.head].rowSums,
      cell: c.cell,
      activeRow: c.beat > 0 ? c.beat - 1 : null,
    });
  },
};
