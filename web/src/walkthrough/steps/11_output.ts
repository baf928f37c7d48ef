import { t } from '../../i18n';
import { renderOutput } from '../components/output_view';
import { col, dotTerms, row, transpose } from '../derive';
import { permutedPair } from '../inputs';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const outputStep: Step = {
  id: 'output',
  title: () => t('walk.step.output.title'),
  perHead: false,
  beats: (c) => c.derived.T + 1,
  columns: (c) => 3 * c.derived.C + 2,
  caption: (c) => (c.beat > 0 ? t('walk.step.output.caption', { i: c.beat - 1, token: c.input.tokens[c.beat - 1] }) : ''),
  explain: (c) => {
    const { a, b } = permutedPair(c.settings.sentence);
    const m = c.trace.model;
    if (m?.pretrained) return t('walk.step.output.explain', { C: c.derived.C }) + t('walk.step.output.pretrained', { layer: m.layer, name: m.pretrained.name });
    return t('walk.step.output.explain', { C: c.derived.C }) + t(c.settings.positional === 'none' ? 'walk.step.output.none' : 'walk.step.output.positions', { a, b });
  },
  render(host, c) {
    const concat = stage(c, 'concat');
    const wo = c.trace.parameters['out_proj.weight'];
    const bo = c.trace.parameters['out_proj.bias'];
    const woT = transpose(wo);
    renderOutput(host, {
      tokens: tokens(c),
      concat,
      woT,
      output: stage(c, 'output'),
      cell: c.cell,
      activeRow: c.beat > 0 ? c.beat - 1 : null,
      terms: (i, j) => ({ ...dotTerms(row(concat, i), col(woT, j)), bias: bo ? bo.data[j] : 0 }),
    });
  },
};
