import { t } from '../../i18n';
import { renderScores } from '../components/scores_view';
import { dotTerms, row, transpose } from '../derive';
import type { Step } from '../step';
import { headLabel, kvHead, rope, stage, tokens, keyTokens, sourceTag } from './helpers';

export const scoresStep: Step = {
  id: 'scores',
  title: () => t('walk.step.scores.title'),
  perHead: true,
  beats: (c) => c.derived.T * c.derived.S + 1,
  columns: (c) => 2 * c.derived.D + c.derived.S + 4,
  caption: (c) => {
    if (c.beat === 0) return t('walk.step.scores.captionRest');
    const S = c.derived.S;
    const i = Math.floor((c.beat - 1) / S);
    const j = (c.beat - 1) % S;
    return t('walk.step.scores.caption', { i, j, q: c.input.tokens[i], k: (c.input.context?.tokens ?? c.input.tokens)[j] });
  },
  explain: (c) => t('walk.step.scores.explain', { D: c.derived.D }) + (rope(c) ? t('walk.step.scores.rope') : ''),
  render(host, c) {
    const kv = kvHead(c);
    const q = stage(c, rope(c) ? 'q_rot' : 'q', c.head);
    const k = stage(c, rope(c) ? 'k_rot' : 'k', kv);
    const S = c.derived.S;
    const animating = c.beat > 0;
    const focus: [number, number] | null = c.hover ?? (animating ? [Math.floor((c.beat - 1) / S), (c.beat - 1) % S] : null);
    renderScores(host, {
      tokens: tokens(c),
      keyTokens: keyTokens(c),
      q,
      kT: transpose(k),
      scores: stage(c, 'scores', c.head),
      qName: (rope(c) ? 'q_rot' : 'q') + sourceTag(c, 'query'),
      kName: (rope(c) ? 'k_rot' : 'k') + sourceTag(c, 'context'),
      headLabel: headLabel(c),
      cell: c.cell,
      focus,
      computed: animating ? c.beat - 1 : null,
      terms: (i, j) => dotTerms(row(q, i), row(k, j)),
      onHover: c.setHover,
    });
  },
};
