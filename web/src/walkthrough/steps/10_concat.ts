import { t } from '../../i18n';
import { renderConcat } from '../components/concat_view';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const concatStep: Step = {
  id: 'concat',
  title: () => t('walk.step.concat.title'),
  perHead: false,
  beats: () => 2,
  columns: (c) => c.derived.C + 3,
  caption: (c) => (c.beat === 1 ? t('walk.step.concat.caption') : ''),
  explain: (c) => {
    const { H, D, C, T } = c.derived;
    return t('walk.step.concat.explain', { H, D, C, T, last: D - 1 });
  },
  render(host, c) {
    renderConcat(host, { tokens: tokens(c), contexts: c.trace.stages.context.heads, concat: stage(c, 'concat'), cell: c.cell, joined: c.beat !== 0 ? c.beat >= 1 : true });
  },
};
