import { t } from '../../i18n';
import { lensSection } from '../components/lens_view';
import { renderOutput } from '../components/output_view';
import { lensSource, lensStore, setLensPosition, setLensToken } from '../lens';
import { col, dotTerms, row, transpose } from '../derive';
import { permutedPair } from '../inputs';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

/** Cell size (px) of the lens's attribution heat-map. */
const LENS_CELL = 34;

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
    // Under the layer's output: the logit lens of the whole decoder, when the walkthrough shows one.
    const m = c.trace.model;
    const trained = m && lensSource({ trace: c.trace, traced: c.settings, settings: c.settings });
    lensSection(host, trained ? { state: lensStore.get(), labels: m.labels, cell: LENS_CELL, onPosition: setLensPosition, onToken: setLensToken } : null);
  },
};
