import { t } from '../../i18n';
import { renderEmbeddings } from '../components/embeddings_view';
import { permutedPair } from '../inputs';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const embeddingsStep: Step = {
  id: 'embeddings',
  title: () => t('walk.step.embeddings.title'),
  perHead: false,
  beats: (c) => c.input.tokens.length + 1,
  columns: (c) => (c.settings.positional === 'sinusoidal' ? 3 * c.derived.C + 2 : c.derived.C),
  caption: (c) => (c.beat > 0 ? t('walk.step.embeddings.caption', { i: c.beat - 1, token: c.input.tokens[c.beat - 1] }) : ''),
  explain: (c) => {
    const C = c.derived.C;
    if (c.trace.model?.pretrained) return t('walk.step.embeddings.pretrained', { C, layer: c.trace.model.layer });
    let pos: string;
    if (c.settings.positional === 'sinusoidal')
      pos = t('walk.step.embeddings.sinusoidal');
    else if (c.settings.positional === 'rope')
      pos = t('walk.step.embeddings.rope');
    else
      pos = t('walk.step.embeddings.none', permutedPair(c.settings.sentence));
    return t('walk.step.embeddings.explain', { C }) + pos;
  },
  render(host, c) {
    renderEmbeddings(host, {
      tokens: tokens(c),
      embeddings: c.input.embeddings,
      positions: c.trace.positionTable,
      x: stage(c, 'x'),
      cell: c.cell,
      highlightRow: c.beat > 0 ? c.beat - 1 : null,
    });
  },
};
